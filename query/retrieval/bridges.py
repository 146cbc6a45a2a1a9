"""Link places: the chunks the best first-round chunks lead to, without a model.

A chunk of a published page leads to the pages it references (query.retrieval.links); a chunk leads to the first chunks of the documents (of the same index) whose titles it
mentions and to the chunks declaring the identifiers it uses, other than its own
(query.retrieval.links). A chunk declaring a function may also lead to the code in other
files that calls it (query.navigation.callers), the answer to "what uses this":
`RAG_LINK_CALLERS=asked` follows callers when the question asks what calls, uses or depends
on something (query/retrieval/usage.py), `always` on every question. A linked chunk scores the sum of its
leaders' scores; the best BRIDGE_SLOTS that pass the request's filters take the places right
below the top results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from query.navigation.callers import callers_of
from query.retrieval.corag import Bridge
from query.retrieval.links import EXTENSION, symbol_names
from query.retrieval.usage import asks_usage
from query.types import Candidate

if TYPE_CHECKING:
    from query.retrieval.retrieve import Retriever

# Links are followed from this many of the best chunks, and at most this many linked chunks
# join the results.
BRIDGE_SOURCES = 5
BRIDGE_SLOTS = 5
# A class split at its members declares one name in many chunks, and a function may have
# several callers: two chunks per name, so that one name cannot take every reserved place.
CHUNKS_PER_NAME = 2
# A framework's root page links to hundreds of pages: a bounded few from one chunk are
# enough to fill the reserved places.
MAX_PAGE_LINKS = 20

Key = tuple[str, str]  # (index, chunk id)


def follows_callers(setting: str, question: str) -> bool:
    """Whether link places follow declarations to their callers for this question."""
    return setting == "always" or (setting == "asked" and asks_usage(question))


def linked_chunks(
    retriever: Retriever, first: Sequence[Candidate], *, declarations: bool = True
) -> list[Bridge]:
    """The links from `first` (the fused first round, best first), best first: to the
    documents the best chunks name by title, and (with `declarations`) to the declarations
    of the identifiers they use."""
    score: dict[Key, float] = {}
    why: dict[Key, tuple[str, str, str]] = {}  # name, the leading chunk, relation

    def link(key: Key, by: Candidate, name: str, relation: str) -> None:
        score[key] = score.get(key, 0.0) + by.score
        why.setdefault(key, (name, by.chunk_id, relation))

    # Their text is read: whole rows (already so when retrieve's `whole` covers them).
    sources = retriever.fetch(list(first[:BRIDGE_SOURCES]))
    for cand in sources:
        for name, chunk_id in _named(retriever, cand, declarations):
            link((cand.index, chunk_id), cand, name, "names")
    if follows_callers(retriever.engine.settings.link_callers, retriever.request.query):
        for cand, name, chunk_id in _callers(retriever, sources):
            link((cand.index, chunk_id), cand, name, "calls")
    ranked = sorted(score, key=lambda key: (-score[key], key))[: BRIDGE_SLOTS * 2]
    # A linked chunk the first round found lower down keeps its row and ranks; its score
    # becomes the link score, on a copy (the first-round candidate stays as it was).
    known = {c.key: c for c in first}
    linked = retriever.fetch(
        [
            replace(known[key], score=score[key])
            if key in known
            else Candidate(chunk_id=key[1], index=key[0], score=score[key])
            for key in ranked
        ]
    )
    admitted = [c for c in linked if retriever.filt.admits(c.row)][:BRIDGE_SLOTS]
    return [Bridge(c, *why[c.key]) for c in admitted]


def _named(retriever: Retriever, cand: Candidate, declarations: bool) -> list[tuple[str, str]]:
    """(name, chunk id) of the chunks `cand` names: titles, and declared identifiers with
    `declarations`."""
    links = retriever.engine.links(cand.index)
    # Names a chunk declares itself lead only to its siblings (a class split at its
    # members); an extension's type name leads to the type's declaration.
    own = {cand.row.get("title")}
    kind = cand.row.get("kind") or ""
    if cand.row.get("symbol") and kind != EXTENSION:
        own.update(symbol_names(cand.row["symbol"], kind))
    out = links.page_links(cand.chunk_id, cand.row.get("doc_id"))[:MAX_PAGE_LINKS]
    for title in links.mentioned(cand.row.get("content") or "", declarations=declarations):
        if title in own:
            continue
        for chunk_id in links.chunks_of(title, declarations=declarations)[:CHUNKS_PER_NAME]:
            if chunk_id != cand.chunk_id:
                out.append((title, chunk_id))
    return out


def _callers(
    retriever: Retriever, sources: Sequence[Candidate]
) -> list[tuple[Candidate, str, str]]:
    """(the declaring source, name, caller chunk id) for the code chunks among `sources`."""
    by_index: dict[str, list[Candidate]] = {}
    for cand in sources:
        if cand.row.get("symbol") and cand.row.get("path"):
            by_index.setdefault(cand.index, []).append(cand)
    out = []
    for name, cands in by_index.items():
        with retriever.engine.checkout(name) as index:
            found = callers_of(index, [(c.chunk_id, c.row["path"]) for c in cands])
        declaring = {c.chunk_id: c for c in cands}
        per_name: dict[str, int] = {}
        for caller in found:
            if per_name.get(caller.name, 0) < CHUNKS_PER_NAME:
                per_name[caller.name] = per_name.get(caller.name, 0) + 1
                out.append((declaring[caller.declared_in], caller.name, caller.chunk_id))
    return out
