"""DocC markup: block directives (`@Name(args) { … }`) and DocC-only link syntax.

Directives are page configuration or authoring notes, not prose, so they stay out of chunk
text. Two treatments:
* dropped whole, with everything inside: `@Metadata`, `@Comment`, `@Options`, `@Redirected`,
  `@Available` and the other configuration/media directives in `DROPPED`;
* unwrapped: containers of readable content (`@Row`, `@Column`, `@Tab`, `@Links`, tutorial
  `@Section`/`@Step`, ... and any unknown capitalised `@Name(args) {` line that is not
  indented as code) lose their opening and closing lines but keep the text inside.
A line-form directive (`@Name(args)` alone on a line) is dropped only when its name is a
known DocC directive, so prose that starts with a Swift attribute ("@MainActor isolates …")
survives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DROPPED = frozenset(
    [
        "Metadata",
        "Comment",
        "Options",
        "Redirected",
        "Available",
        "TechnologyRoot",
        "DisplayName",
        "PageImage",
        "PageColor",
        "PageKind",
        "CallToAction",
        "SupportedLanguage",
        "DocumentationExtension",
        "AutomaticSeeAlso",
        "AutomaticTitleHeading",
        "AutomaticArticleSubheading",
        "TopicsVisualStyle",
        "AlternateRepresentation",
        "Image",
        "Video",
        "Snippet",
        "Code",
        "XcodeRequirement",
        "TutorialReference",
        "Title",
    ]
)
UNWRAPPED = frozenset(
    [
        "Row",
        "Column",
        "TabNavigator",
        "Tab",
        "Small",
        "Links",
        "Section",
        "Intro",
        "ContentAndMedia",
        "Steps",
        "Step",
        "Stack",
        "Chapter",
        "Volume",
        "Tutorial",
        "Tutorials",
        "Article",
        "Assessments",
        "MultipleChoice",
        "Choice",
        "Justification",
        "Resources",
        "Documentation",
        "Downloads",
        "Videos",
        "SampleCode",
        "Forums",
        "DeprecationSummary",
    ]
)
KNOWN = DROPPED | UNWRAPPED

_NAME = re.compile(r"[ \t]*@([A-Z][A-Za-z0-9]*)(?![\w.])")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)")
_MAX_ARG_LINES = 40  # a "directive" whose arguments never close is not one

_DOC_LINK = re.compile(r"<doc:(?://[^/>]*)?([^>\s]+)>")
_SYMBOL_LINK = re.compile(r"``([^`\n]+?)``")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z][a-z])")


@dataclass
class Directive:
    name: str
    last_line: int  # index of the line holding the end of the arguments or the block
    inner: tuple[int, int, int, int] | None = None  # block body: (line, col) after `{` to `}`

    @property
    def dropped(self) -> bool:
        return self.name in DROPPED


def find_directive(lines: list[str], i: int, *, nested: bool = False) -> Directive | None:
    """The directive starting on line `i`, if that line opens one. `nested`: the line is
    inside an unwrapped directive, where directives are indented."""
    m = _NAME.match(lines[i])
    if not m:
        return None
    # An unknown name is a directive only where Swift code cannot be: not indented (an
    # indented code block), and with nothing after its `{` (`@Traced(z) { x in` is code).
    unknown = m.group(1) not in KNOWN
    if unknown and not nested and len(m.group()) - len(m.group().lstrip()) >= 4:
        return None
    line, col = i, m.end()
    if col < len(lines[i]) and lines[i][col] == "(":
        end = _close_parens(lines, i, col)
        if end is None:
            return None
        line, col = end
    rest = lines[line][col:].strip()
    name = m.group(1)
    if not rest:
        return Directive(name, line) if name in KNOWN else None
    if not rest.startswith("{") or (unknown and rest != "{"):
        return None  # prose or code after an attribute: not a directive
    open_col = lines[line].index("{", col)
    close = _close_brace(lines, line, open_col)
    if close is None:
        return None
    return Directive(name, close[0], (line, open_col + 1, close[0], close[1]))


def _close_parens(lines: list[str], i: int, col: int) -> tuple[int, int] | None:
    """(line, column after) of the `)` matching the `(` at lines[i][col]; quotes respected."""
    depth, quote = 0, ""
    for j in range(i, min(len(lines), i + _MAX_ARG_LINES)):
        text = lines[j]
        for k in range(col if j == i else 0, len(text)):
            ch = text[k]
            if quote:
                quote = "" if ch == quote and text[k - 1] != "\\" else quote
            elif ch == '"':
                quote = ch
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    return j, k + 1
    return None


def _close_brace(lines: list[str], i: int, col: int) -> tuple[int, int] | None:
    """(line, column) of the `}` matching the `{` at lines[i][col]. Braces inside fenced
    code (a `@Comment` can hold a snippet) do not count."""
    depth = 0
    fence = ""
    for j in range(i, len(lines)):
        text = lines[j]
        if fence:
            if closes_fence(text, fence):
                fence = ""
            continue
        if j > i and (marker := fence_marker(text)):
            fence = marker
            continue
        for k in range(col if j == i else 0, len(text)):
            if text[k] == "{":
                depth += 1
            elif text[k] == "}":
                depth -= 1
                if depth == 0:
                    return j, k
    return None


def fence_marker(line: str) -> str | None:
    """The backtick or tilde run opening a fenced code block on this line, if any. Any
    indentation counts: fences nested in list items are indented."""
    m = _FENCE.match(line)
    if not m or (m.group(1)[0] == "`" and "`" in m.group(2)):
        return None  # a backtick fence's info string has no backticks (that is inline code)
    return m.group(1)


def closes_fence(line: str, marker: str) -> bool:
    m = _FENCE.match(line)
    return bool(
        m
        and m.group(1)[0] == marker[0]
        and len(m.group(1)) >= len(marker)
        and not m.group(2).strip()
    )


def readable_links(line: str) -> str:
    """`<doc:Some-Page#Some-Section>` → "Some Section in Some Page"; ``` ``Symbol`` ``` →
    `` `Symbol` `` (DocC's symbol link is plain inline code to a reader)."""
    if "<doc:" in line:
        line = _DOC_LINK.sub(_doc_link_text, line)
    if "``" in line:
        line = _SYMBOL_LINK.sub(r"`\1`", line)
    return line


def _doc_link_text(m: re.Match[str]) -> str:
    target, _, anchor = m.group(1).partition("#")
    page = _words(target.rstrip("/").rsplit("/", 1)[-1])
    return f"{_words(anchor)} in {page}" if anchor else page


def _words(name: str) -> str:
    return _CAMEL.sub(" ", name.replace("-", " ").replace("_", " ")).strip()
