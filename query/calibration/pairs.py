"""Question-like texts mined from an index's own chunks, each paired with the chunk it came
from, that text taken out.

The structure of a corpus pairs text with the text it describes: a section's headings and
the section, a document's title and its body, a doc comment and the code below it. Asked as
a query, such a text finds its own chunk trivially, because both signals index it there
(the heading path is embedded and indexed with every chunk). So the text is removed from
its source (`Pair.text` is the chunk without it, to be scored as the store would score
it) and from the rest of its document wherever it appears, which is how a real question,
written without seeing the answer, meets the corpus.

Headings that many documents share ("Motivation", "Alternatives considered") say nothing
about which document answers, so only headings found in one document of the sample are
asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from chunkers.model import CODE_LANGUAGES

HEADING_SEPARATOR = "›"
MIN_QUERY_WORDS = 2
# A stripped chunk shorter than this is mostly its heading: nothing to find it by.
MIN_TEXT_WORDS = 20
MAX_QUERY_WORDS = 32

# A Python docstring: the first statement of the body, right after the `def`/`class` line(s).
_PY_DOCSTRING = re.compile(
    r"^(?P<head>(?:[ \t]*@[^\n]*\n)*[ \t]*(?:async[ \t]+)?(?:def|class)\b[^\n]*\n(?:[^\n]*\n)*?)"
    r"(?P<doc>[ \t]*[rRuU]?(?P<q>\"\"\"|''')(?P<body>.*?)(?P=q)[ \t]*\n?)",
    re.S,
)
# A doc comment leading a declaration in the C family, Swift, Kotlin, Go, Rust, JS/TS:
# `///` or `//!` lines, or a `/** ... */` block.
_LINE_DOC = re.compile(r"^(?P<doc>(?:[ \t]*//[/!][^\n]*\n)+)")
_BLOCK_DOC = re.compile(r"^(?P<doc>[ \t]*/\*\*(?P<body>.*?)\*/[ \t]*\n)", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n\s*\n")


@dataclass(frozen=True)
class Pair:
    query: str  # what a user might ask
    chunk_id: str  # the chunk it was mined from
    doc_id: str  # that chunk's document: relevance is per document, as the evaluation judges
    text: str  # the chunk without the query's source
    language: str | None
    source: str  # "heading", "title" or "doc comment"
    headings: tuple[str, ...] = ()  # the headings asked (lowercased), for the overlap test


def _words(text: str) -> list[str]:
    return text.split()


def normalised(text: str) -> str:
    return " ".join(text.lower().replace(HEADING_SEPARATOR, " ").split())


def heading_parts(context: str | None) -> list[str]:
    return [p.strip() for p in (context or "").split(HEADING_SEPARATOR) if p.strip()]


def _first_sentence(text: str) -> str:
    cleaned = re.sub(r"^[ \t]*\*[ \t]?", "", text.strip(), flags=re.M)
    return " ".join(_SENTENCE_END.split(cleaned.strip(), maxsplit=1)[0].split())


def doc_comment(content: str, language: str | None) -> tuple[str, str] | None:
    """(the doc comment's first sentence, the code without the comment), or None."""
    if language == "python":
        match = _PY_DOCSTRING.match(content)
        if match is None:
            return None
        return _first_sentence(match["body"]), content[: match.start("doc")] + content[
            match.end("doc") :
        ]
    block = _BLOCK_DOC.match(content)
    if block is not None:
        return _first_sentence(block["body"]), content[block.end() :]
    lines = _LINE_DOC.match(content)
    if lines is not None:
        body = re.sub(r"^[ \t]*//[/!][ \t]?", "", lines["doc"], flags=re.M)
        return _first_sentence(body), content[lines.end() :]
    return None


def _usable(query: str, text: str) -> bool:
    words = len(_words(query))
    return MIN_QUERY_WORDS <= words <= MAX_QUERY_WORDS and len(_words(text)) >= MIN_TEXT_WORDS


def document_of(row: Mapping[str, Any]) -> str:
    """A chunk's document: its doc_id, never its path, which a JSONL record (Apple docs,
    WWDC transcripts) need not have: every chunk without one would be one document."""
    return str(row["doc_id"])


def distinctive_headings(rows: Iterable[Mapping[str, Any]]) -> set[str]:
    """Lowercased headings (below a document's title) found in exactly one document."""
    documents: dict[str, set[str]] = {}
    for row in rows:
        for part in heading_parts(row.get("context"))[1:]:
            documents.setdefault(part.lower(), set()).add(document_of(row))
    return {heading for heading, docs in documents.items() if len(docs) == 1}


def mine(row: Mapping[str, Any], distinctive: set[str]) -> Pair | None:
    """The pair a chunk row (as `IndexStore.fetch` returns it) yields, if any."""
    content = str(row.get("content") or "")
    language = row.get("language")
    chunk_id, doc_id = str(row["chunk_id"]), document_of(row)
    if language in CODE_LANGUAGES:
        found = doc_comment(content, language)
        if found is None or not _usable(*found):
            return None
        return Pair(found[0], chunk_id, doc_id, found[1], language, "doc comment")
    parts = heading_parts(row.get("context"))
    if not parts:
        return None
    headings: tuple[str, ...] = ()
    if len(parts) == 1:
        query, source = parts[0], "title"
    else:
        asked = [p for p in parts[1:] if p.lower() in distinctive]
        query, source, headings = " ".join(asked), "heading", tuple(p.lower() for p in asked)
    # A title repeated in the text stays (HotpotQA's paragraphs open with it): real questions
    # name the entity too, and taking it out made calibration pick the rule that loses there
    # (docs/evaluation.md, *Fusion calibration*).
    if not _usable(query, content):
        return None
    return Pair(query, chunk_id, doc_id, content, language, source, headings)


def mine_pairs(rows: Mapping[str, Mapping[str, Any]], limit: int) -> list[Pair]:
    """Up to `limit` pairs from the sampled rows (chunk id → row), in chunk id order."""
    distinctive = distinctive_headings(rows.values())
    pairs: list[Pair] = []
    for chunk_id in sorted(rows):
        pair = mine({"chunk_id": chunk_id, **rows[chunk_id]}, distinctive)
        if pair is not None:
            pairs.append(pair)
            if len(pairs) >= limit:
                break
    return pairs


def reveals(pair: Pair, row: Mapping[str, Any]) -> bool:
    """A chunk of the pair's document that still holds what was asked: its text contains the
    query, or it sits under a heading that was asked. Such chunks are left out of the
    searches, as the query was taken out of its source."""
    if row.get("doc_id") is None or document_of(row) != pair.doc_id:
        return False
    if pair.headings and {p.lower() for p in heading_parts(row.get("context"))} & set(
        pair.headings
    ):
        return True
    body = normalised(f"{row.get('context') or ''} {row.get('content') or ''}")
    return normalised(pair.query) in body
