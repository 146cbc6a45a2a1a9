"""Links between chunks without a model. A chunk of a published page links to the pages the
page itself references (DocC's `references`, stored as links by URL); a chunk that mentions
another document's title links to that document (its first chunk); a chunk that uses a declared code identifier
(`TripStore`, `fetch_user`) links to the chunk that declares it. CoRAG's bridge hop follows
these links from the best first-round chunks to the passages a multi-hop question, or a
question about code, needs next.

Matching is exact and case-sensitive on whole words (a title is a name: "Paris" is not
"paris" in "comparison"), through an Aho–Corasick automaton (pyahocorasick), so scanning a
chunk costs the same whatever the number of names. Only identifier-shaped symbols are names
(camelCase, snake_case, dotted): a function called `paste` would link every chunk that says
"paste". A type declaration (class, struct, enum, protocol, actor, typealias) is also named
by a capitalised single word (`Trip`). An extension does not declare its type, so it is not
a target for the type's name; it links to the declaration instead (`extension Trip` mentions
`Trip`). A name declared in more than MAX_DECLARING_DOCS documents links nothing: which
`Config` a chunk means is a guess, and a guessed link takes a reserved place from a good one
(CoSQA's snippets from thousands of repositories: `--corag` nDCG@10 0.6021 with every
capitalised type name linked, 0.6035 without them; docs/evaluation.md).
"""

from __future__ import annotations

from collections.abc import Iterable

import ahocorasick

from core.store.contract import Declaration, PageLinkRow
from query.retrieval.expansion.words import is_identifier

# Shorter titles ("Go", "UI") match everywhere and link nothing useful.
MIN_TITLE_CHARS = 4
MAX_DECLARING_DOCS = 2
TYPE_KINDS = frozenset({"class", "struct", "enum", "protocol", "actor", "typealias"})
EXTENSION = "extension"
PARENT = "parent"  # a page's link to a page above it (chunkers/sources/published)


def symbol_names(symbol: str, kind: str = "") -> list[str]:
    """The names a declaration is mentioned by: the symbol and its last dotted part
    (`TripRepository.save_all` → `save_all`) if identifier-shaped, and a type's capitalised
    last part (`Trip`)."""
    last = symbol.rsplit(".", 1)[-1]
    names = [n for n in (symbol, last) if is_identifier(n)]
    if kind in TYPE_KINDS and last[:1].isupper() and last.isidentifier():
        names.append(last)
    return [n for n in dict.fromkeys(names) if len(n) >= MIN_TITLE_CHARS]


class Links:
    """Name (a document title or a declared symbol) → the chunks it leads to, and mentions
    of names in text."""

    def __init__(
        self,
        titles: Iterable[tuple[str, str]],
        declarations: Iterable[Declaration] = (),
        page_links: Iterable[PageLinkRow] = (),
    ) -> None:
        # The links published pages state, followed like titles but never guessed from text:
        # from the chunk that names the target, and a page's parents (the type a member
        # belongs to) from every chunk of the page.
        self._pages: dict[str, list[tuple[str, str]]] = {}
        self._parents: dict[str, list[tuple[str, str]]] = {}
        for row in page_links:
            if row.target != row.chunk_id:
                self._pages.setdefault(row.chunk_id, []).append((row.title, row.target))
                if row.relation == PARENT:
                    self._parents.setdefault(row.doc_id, []).append((row.title, row.target))
        self._chunks: dict[str, list[str]] = {}
        # The names that are titles, and the first chunks of the documents so titled: link
        # places follow these alone (`declarations=False`).
        self._titled: dict[str, list[str]] = {}
        for title, chunk_id in titles:
            title = title.strip()
            if len(title) >= MIN_TITLE_CHARS and chunk_id not in self._titled.get(title, ()):
                self._titled.setdefault(title, []).append(chunk_id)
                self._chunks.setdefault(title, []).append(chunk_id)
        for name, chunk_id in _unambiguous(declarations):
            if len(name) >= MIN_TITLE_CHARS and chunk_id not in self._chunks.get(name, ()):
                self._chunks.setdefault(name, []).append(chunk_id)
        self._automaton = ahocorasick.Automaton()
        for title in self._chunks:
            self._automaton.add_word(title, title)
        if self._chunks:
            self._automaton.make_automaton()

    def __len__(self) -> int:
        return len(self._chunks) + len(self._pages)

    def page_links(self, chunk_id: str, doc_id: str | None = None) -> list[tuple[str, str]]:
        """(title, target chunk) of the links a published page's chunk states, then of its
        page's parents."""
        own = self._pages.get(chunk_id, [])
        parents = self._parents.get(doc_id or "", [])
        return list(dict.fromkeys([*own, *(p for p in parents if p[1] != chunk_id)]))

    def mentioned(self, text: str, *, declarations: bool = True) -> list[str]:
        """Names mentioned in `text` as whole words, longest match first at any position
        ("New York City" rather than "New York" inside it), in order of appearance; titles
        alone unless `declarations`."""
        if not self._chunks or not text:
            return []
        found: dict[int, str] = {}
        for end, title in self._automaton.iter(text):
            if not declarations and title not in self._titled:
                continue
            start = end - len(title) + 1
            whole_word = _word_boundary(text, start - 1) and _word_boundary(text, end + 1)
            if whole_word and len(title) > len(found.get(start, "")):
                found[start] = title
        out: list[str] = []
        covered_to = -1
        for start in sorted(found):
            title = found[start]
            if start > covered_to:
                out.append(title)
                covered_to = start + len(title) - 1
        return list(dict.fromkeys(out))

    def chunks_of(self, name: str, *, declarations: bool = True) -> list[str]:
        """The chunks `name` leads to: the first chunks of the documents titled so, then
        (with `declarations`) the chunks declaring it."""
        return list((self._chunks if declarations else self._titled).get(name, ()))


def _unambiguous(declarations: Iterable[Declaration]) -> list[tuple[str, str]]:
    """(name, declaring chunk) for the names declared in at most MAX_DECLARING_DOCS
    documents; extensions declare nothing."""
    by_name: dict[str, dict[str, list[str]]] = {}
    for d in declarations:
        if d.kind != EXTENSION:
            for name in symbol_names(d.symbol, d.kind):
                by_name.setdefault(name, {}).setdefault(d.doc_id, []).append(d.chunk_id)
    return [
        (name, chunk_id)
        for name, docs in by_name.items()
        if len(docs) <= MAX_DECLARING_DOCS
        for chunk_ids in docs.values()
        for chunk_id in chunk_ids
    ]


def _word_boundary(text: str, position: int) -> bool:
    return (
        position < 0
        or position >= len(text)
        or not (text[position].isalnum() or text[position] == "_")
    )
