"""Links between chunks without a model. A chunk that mentions another document's title links
to that document (its first chunk); a chunk that uses a declared code identifier
(`TripStore`, `fetch_user`) links to the chunk that declares it. CoRAG's bridge hop follows
these links from the best first-round chunks to the passages a multi-hop question, or a
question about code, needs next.

Matching is exact and case-sensitive on whole words (a title is a name: "Paris" is not
"paris" in "comparison"), through an Aho–Corasick automaton (pyahocorasick), so scanning a
chunk costs the same whatever the number of names. Only identifier-shaped symbols are names
(camelCase, snake_case, dotted): a function called `paste` would link every chunk that says
"paste".
"""

from __future__ import annotations

from collections.abc import Iterable

import ahocorasick

from query.expansion.words import is_identifier

# Shorter titles ("Go", "UI") match everywhere and link nothing useful.
MIN_TITLE_CHARS = 4


def symbol_names(symbol: str) -> list[str]:
    """The names a declaration is mentioned by: the symbol and its last dotted part
    (`TripRepository.save` → `save`), each only if identifier-shaped."""
    names = [symbol, symbol.rsplit(".", 1)[-1]]
    return [n for n in dict.fromkeys(names) if len(n) >= MIN_TITLE_CHARS and is_identifier(n)]


class Links:
    """Name (a document title or a declared symbol) → the chunks it leads to, and mentions
    of names in text."""

    def __init__(
        self, titles: Iterable[tuple[str, str]], symbols: Iterable[tuple[str, str]] = ()
    ) -> None:
        self._chunks: dict[str, list[str]] = {}
        named = [*titles, *((n, c) for s, c in symbols for n in symbol_names(s))]
        for title, chunk_id in named:
            title = title.strip()
            if len(title) >= MIN_TITLE_CHARS and chunk_id not in self._chunks.get(title, ()):
                self._chunks.setdefault(title, []).append(chunk_id)
        self._automaton = ahocorasick.Automaton()
        for title in self._chunks:
            self._automaton.add_word(title, title)
        if self._chunks:
            self._automaton.make_automaton()

    def __len__(self) -> int:
        return len(self._chunks)

    def mentioned(self, text: str) -> list[str]:
        """Titles mentioned in `text` as whole words, longest match first at any position
        ("New York City" rather than "New York" inside it), in order of appearance."""
        if not self._chunks or not text:
            return []
        found: dict[int, str] = {}
        for end, title in self._automaton.iter(text):
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

    def chunks_of(self, title: str) -> list[str]:
        return list(self._chunks.get(title, ()))


def _word_boundary(text: str, position: int) -> bool:
    return (
        position < 0
        or position >= len(text)
        or not (text[position].isalnum() or text[position] == "_")
    )
