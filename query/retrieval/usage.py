"""Questions about the uses of something: "who calls", "where is it used", "what depends
on", "what breaks if". Over code their answer is the files that mention the thing, which is
why link places follow callers for them (query/retrieval/bridges.py) and the adaptive rule
gives the keyword leg most of the say (query/retrieval/adaptive.py, USAGE_KEYWORD_FLOOR)."""

from __future__ import annotations

import re

# Not "use" or "using": "how do I use X" asks how X works.
USAGE = re.compile(
    r"\b(?:call(?:s|ed|ing|ers?)?|invok(?:e|es|ed|ing)|uses|used|usages?|who|"
    r"depend(?:s|ed|ing|ents?)?|referenc(?:e|es|ed|ing)|breaks?)\b",
    re.IGNORECASE,
)


def asks_usage(question: str) -> bool:
    """Whether `question` asks what calls, uses or depends on something."""
    return USAGE.search(question) is not None
