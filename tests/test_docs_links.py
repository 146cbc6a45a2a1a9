"""Nothing in the documentation points nowhere: every relative link of README.md, docs/*.md and
bench/README.md names a file that exists and, with a `#fragment`, a heading of that file (as
GitHub makes anchors of headings); and every page of docs/ is reachable from the README or the
docs index."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.paths import ROOT

README = ROOT / "README.md"
DOCS_INDEX = ROOT / "docs" / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]

FENCE = re.compile(r"^```.*?^```[^\n]*$", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def prose(text: str) -> str:
    """`text` without its code blocks and code spans, where brackets are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def links(text: str) -> list[str]:
    """The targets of the markdown links and images of `text`, outside code."""
    return LINK.findall(prose(text))


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its rendered text lower-cased, punctuation other than
    `-` and `_` dropped, each space a hyphen."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.replace("*", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of `path`'s headings; a repeated one gets -1, -2, ... as on GitHub."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for heading in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken(page: Path) -> list[str]:
    problems = []
    for target in links(page.read_text(encoding="utf-8")):
        if SCHEME.match(target):
            continue
        file_part, _, fragment = target.partition("#")
        path = (page.parent / file_part).resolve() if file_part else page
        if not path.exists():
            problems.append(f"{target}: no such file")
        elif fragment and path.suffix == ".md" and fragment not in anchors(path):
            problems.append(f"{target}: no heading #{fragment} in {path.name}")
    return problems


def test_every_relative_link_names_a_file_and_a_heading_that_exist():
    problems = {str(page.relative_to(ROOT)): found for page in PAGES if (found := broken(page))}
    assert not problems, f"broken links: {problems}"


def test_every_docs_page_is_linked_from_the_readme_or_the_docs_index():
    linked = {
        (index.parent / target.partition("#")[0]).resolve()
        for index in (README, DOCS_INDEX)
        for target in links(index.read_text(encoding="utf-8"))
        if not SCHEME.match(target)
    }
    pages = set((ROOT / "docs").glob("*.md")) - {DOCS_INDEX}
    orphans = sorted(str(p.relative_to(ROOT)) for p in pages if p.resolve() not in linked)
    assert not orphans, f"link these from README.md or docs/README.md: {orphans}"
    assert DOCS_INDEX.resolve() in {
        (ROOT / t.partition("#")[0]).resolve() for t in links(README.read_text(encoding="utf-8"))
    }


def test_anchors_are_githubs_heading_slugs():
    assert slug("Ingestion: `python -m flows.ingest`") == "ingestion-python--m-flowsingest"
    assert slug("Following a codebase as it changes: `--watch`") == (
        "following-a-codebase-as-it-changes---watch"
    )
    assert slug("What each deployment does, and when") == "what-each-deployment-does-and-when"
    assert slug("Checking an installation: `doctor`") == "checking-an-installation-doctor"


def test_a_repeated_heading_gets_a_numbered_anchor(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Notes\n\n## Notes\n\n```sh\n# not a heading\n```\n", encoding="utf-8")
    assert anchors(page) == {"notes", "notes-1"}


def test_brackets_in_code_are_not_links(tmp_path):
    text = '[a](a.md) `[b](b.md)`\n\n```json\n["c"](c.md)\n```\n![d](d.png)\n'
    assert links(text) == ["a.md", "d.png"]


def test_a_missing_file_or_heading_is_reported(tmp_path):
    (tmp_path / "there.md").write_text("# Here\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md#here) [gone](gone.md) [no](there.md#nowhere) [web](https://x.org/#y)\n",
        encoding="utf-8",
    )
    assert [p.split(":")[0] for p in broken(page)] == ["gone.md", "there.md#nowhere"]
