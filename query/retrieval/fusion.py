"""Fusion of ranked lists into one ranking (then boosts and demotions:
query/retrieval/boosts.py; deduplication: query/retrieval/dedupe.py).

Every signal (vector, BM25) of every query variant yields one ranked list over all searched
indexes (`merge_indexes` interleaves the indexes' own lists by score: cosines of one model
are comparable across indexes; BM25 scores only roughly, as each index has its own term
statistics). Ranking each index separately instead would give every index's best hit, however
poor, the score of the best hit overall.

* RRF: score = sum over the lists that hold the chunk of 1 / (k + rank), rank
  1-based. Lists of different signals and variants count alike: no calibration needed.
* Weighted: each list's scores are min-max normalised to [0, 1] (a list whose scores are all
  equal gives 1.0 to every hit), multiplied by the signal's weight and summed over lists.
* Adaptive: weighted, with the signal weights set per query by how distinctive
  its BM25 matches are across documents, and the keyword leg never under half when the
  query names an identifier (query/retrieval/adaptive.py).
* Auto (default): the rule the searched indexes' calibration chose, adaptive or RRF
  (query/retrieval/rules.py).

Where the hits' documents are known (the embedded store's hits carry them; other stores'
are read from the light rows, `Retriever.documents`), each document's
first chunk stands, in every list, where its document's best chunk stands there
(`document_standing`): a document the two legs found through different chunks ranks as
found by both.

While an index's vector phase runs, a chunk without a vector yet counts its BM25 standing
for the vector leg it cannot have (`fuse`, `pending`): RRF and the weighted rules would
otherwise rank it as if the vector leg had judged it irrelevant (measured in
docs/evaluation.md, "While vectors fill in").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from core.store.contract import Hit
from query.retrieval.adaptive import Documents, adaptive_weights
from query.types import Candidate, RankedList

SIGNALS = ("vector", "bm25")
DEFAULT_WEIGHTS: Mapping[str, float] = {"vector": 0.6, "bm25": 0.4}


def merge_indexes(lists: Iterable[RankedList]) -> list[RankedList]:
    """One list per (signal, variant): the hits of every index ordered by score, ties by
    index name then chunk id."""
    merged: dict[tuple[str, int], list[tuple[str, Hit]]] = {}
    for ranked in lists:
        merged.setdefault((ranked.signal, ranked.variant), []).extend(ranked.hits)
    return [
        RankedList(signal, variant, sorted(hits, key=lambda h: (-h[1].score, h[0], h[1].chunk_id)))
        for (signal, variant), hits in sorted(merged.items())
    ]


def order_key(candidate: Candidate) -> tuple[float, str, str]:
    return (-candidate.score, candidate.index, candidate.chunk_id)


def variant_weights(lists: Sequence[RankedList], expansion_share: float | None) -> dict[int, float]:
    """Weight of each query variant's lists: the original query 1; the expansions together
    `expansion_share`, split evenly (None: each expansion counts like the original, as
    plain RRF does). Several keyword-heavy variants must not outvote the original."""
    variants = sorted({ranked.variant for ranked in lists})
    expansions = [v for v in variants if v != 0]
    if expansion_share is None or not expansions:
        return dict.fromkeys(variants, 1.0)
    share = expansion_share / len(expansions)
    return {v: 1.0 if v == 0 else share for v in variants}


# Per chunk, what each signal added to its fused score: the sum is the score, and --explain
# and the JSON show the parts.
Contributions = dict[tuple[str, str], dict[str, float]]
# The (index, chunk_id) of candidates without a vector yet.
Pending = AbstractSet[tuple[str, str]]
# The part a chunk without a vector counts for its vector leg: its BM25 standing (`fuse`).
IMPUTED = "vector_imputed"


def _add(out: Contributions, key: tuple[str, str], signal: str, value: float) -> None:
    parts = out.setdefault(key, {})
    parts[signal] = parts.get(signal, 0.0) + value


def totals(contributions: Contributions) -> dict[tuple[str, str], float]:
    return {key: sum(parts.values()) for key, parts in contributions.items()}


def merged(per_list: Iterable[Contributions]) -> Contributions:
    """The contributions of several lists summed per chunk and signal."""
    out: Contributions = {}
    for contributions in per_list:
        for key, parts in contributions.items():
            for signal, value in parts.items():
                _add(out, key, signal, value)
    return out


def _mirrored(lists: Sequence[RankedList], pending: Pending) -> set[int]:
    """The variants whose BM25 list lends its standing to the chunks in `pending` (no vector
    yet) as their vector leg's: those the vector leg searched."""
    if not pending:
        return set()
    return {ranked.variant for ranked in lists if ranked.signal == "vector"}


def rrf_contributions(
    lists: Sequence[RankedList],
    k: int,
    *,
    signal_weights: Mapping[str, float] | None = None,
    expansion_share: float | None = None,
    pending: Pending = frozenset(),
) -> Contributions:
    """Weighted RRF: each list adds weight(signal) x weight(variant) / (k + rank); with no
    weights, every list counts alike (Cormack et al.). A chunk in `pending` adds, for its
    missing vector leg, what its BM25 rank adds (`fuse`)."""
    return merged(
        _rrf_parts(
            lists,
            k,
            signal_weights=signal_weights,
            expansion_share=expansion_share,
            pending=pending,
        )
    )


def _rrf_parts(
    lists: Sequence[RankedList],
    k: int,
    *,
    signal_weights: Mapping[str, float] | None = None,
    expansion_share: float | None = None,
    pending: Pending = frozenset(),
) -> list[Contributions]:
    """`rrf_contributions`, one Contributions per list."""

    def reciprocal_ranks(ranked: RankedList) -> list[float]:
        return [1 / (k + rank) for rank in range(1, len(ranked.hits) + 1)]

    weights = signal_weights or {}
    return _per_list(
        lists, reciprocal_ranks, lambda signal: weights.get(signal, 1.0), expansion_share, pending
    )


def rrf_scores(
    lists: Sequence[RankedList],
    k: int,
    *,
    signal_weights: Mapping[str, float] | None = None,
    expansion_share: float | None = None,
) -> dict[tuple[str, str], float]:
    return totals(
        rrf_contributions(lists, k, signal_weights=signal_weights, expansion_share=expansion_share)
    )


def weighted_contributions(
    lists: Sequence[RankedList],
    weights: Mapping[str, float] = DEFAULT_WEIGHTS,
    *,
    expansion_share: float | None = None,
    pending: Pending = frozenset(),
) -> Contributions:
    """Each list's min-max normalised scores times weight(signal) x weight(variant); a chunk
    in `pending` adds, for its missing vector leg, its normalised BM25 score (`fuse`)."""
    return merged(_weighted_parts(lists, weights, expansion_share=expansion_share, pending=pending))


def _weighted_parts(
    lists: Sequence[RankedList],
    weights: Mapping[str, float],
    *,
    expansion_share: float | None = None,
    pending: Pending = frozenset(),
) -> list[Contributions]:
    """`weighted_contributions`, one Contributions per list."""

    def normalised(ranked: RankedList) -> list[float]:
        values = [hit.score for _, hit in ranked.hits]
        low, high = min(values, default=0.0), max(values, default=0.0)
        return [1.0 if high == low else (v - low) / (high - low) for v in values]

    return _per_list(
        lists, normalised, lambda signal: weights.get(signal, 0.0), expansion_share, pending
    )


def _per_list(
    lists: Sequence[RankedList],
    values: Callable[[RankedList], list[float]],
    signal_weight: Callable[[str], float],
    expansion_share: float | None,
    pending: Pending,
) -> list[Contributions]:
    """Each list's hits' `values` times weight(signal) x weight(variant); a chunk in
    `pending` adds, for its missing vector leg, its value in the BM25 list times the vector
    leg's weight (`fuse`)."""
    by_variant = variant_weights(lists, expansion_share)
    mirrored = _mirrored(lists, pending)
    parts: list[Contributions] = []
    for ranked in lists:
        out: Contributions = {}
        weight = signal_weight(ranked.signal) * by_variant[ranked.variant]
        mirror = ranked.signal == "bm25" and ranked.variant in mirrored
        vector_weight = signal_weight("vector") * by_variant[ranked.variant]
        for (index, hit), value in zip(ranked.hits, values(ranked), strict=True):
            key = (index, hit.chunk_id)
            _add(out, key, ranked.signal, weight * value)
            if mirror and key in pending:
                _add(out, key, IMPUTED, vector_weight * value)
        parts.append(out)
    return parts


def weighted_scores(
    lists: Sequence[RankedList],
    weights: Mapping[str, float] = DEFAULT_WEIGHTS,
    *,
    expansion_share: float | None = None,
) -> dict[tuple[str, str], float]:
    return totals(weighted_contributions(lists, weights, expansion_share=expansion_share))


def hit_documents(lists: Sequence[RankedList], documents: Documents | None = None) -> Documents:
    """(index, chunk_id) -> doc_id of every hit whose document is known: from the hit itself
    (the embedded store's searches carry it) or from `documents` (read from the rows otherwise)."""
    known = dict(documents or {})
    for ranked in lists:
        for index, hit in ranked.hits:
            if hit.doc_id is not None:
                known.setdefault((index, hit.chunk_id), hit.doc_id)
    return known


def document_standing(per_list: Sequence[Contributions], documents: Documents) -> Contributions:
    """The lists' contributions summed per chunk, with each document's first chunk (its
    highest summed score) standing in every list where its document stands: it takes, list by
    list, the contribution of its document's best chunk there.

    A question is answered by a document (a file, a page), and the two legs often find it
    through different chunks: BM25 the part that repeats the question's words, the vector leg
    the part that paraphrases it. Summed per chunk, neither part earns both legs' credit and
    the document falls behind one that a single chunk matched for both. Each leg ranks
    documents by their best chunk, and so does the fused ranking's first chunk of each
    document; the document's other chunks keep their own standing, below it. On the recorded
    top-100 lists (bench/fusion_lists.py, docs/evaluation.md) this gained React Native's code
    questions 0.036 nDCG@10 (adaptive) and 0.046 (RRF), the Swift docs 0.029 and 0.012,
    Werkzeug 0.014 and 0.014; SciFact, CoSQA and HotpotQA (about one chunk per document)
    moved by less than 0.002. A chunk of unknown document is its own document."""
    summed = merged(per_list)
    if not documents:
        return summed

    def document(key: tuple[str, str]) -> tuple[str, str, str]:
        found = documents.get(key)
        return (key[0], "doc", found) if found is not None else (key[0], "chunk", key[1])

    first: dict[tuple[str, str, str], tuple[float, tuple[str, str]]] = {}
    for key, parts in summed.items():
        total = sum(parts.values())
        doc = document(key)
        held = first.get(doc)
        # Ties go to the lower (index, chunk_id), as `order_key` breaks them.
        if held is None or total > held[0] or (total == held[0] and key < held[1]):
            first[doc] = (total, key)
    lifted: Contributions = {}
    for contributions in per_list:
        best: dict[tuple[str, str, str], tuple[float, dict[str, float]]] = {}
        for key, parts in contributions.items():
            total = sum(parts.values())
            doc = document(key)
            if doc not in best or total > best[doc][0]:
                best[doc] = (total, parts)
        for doc, (_, parts) in best.items():
            for signal, value in parts.items():
                _add(lifted, first[doc][1], signal, value)
    summed.update(lifted)
    return summed


def fuse(
    lists: Sequence[RankedList],
    *,
    method: str = "rrf",
    k: int = 60,
    weights: Mapping[str, float] = DEFAULT_WEIGHTS,
    expansion_share: float | None = None,
    names_identifier: bool = False,
    asks_usage: bool = False,
    pending: Pending = frozenset(),
    documents: Documents | None = None,
) -> list[Candidate]:
    """One Candidate per (index, chunk_id), sorted by `order_key`. A candidate's rank in a
    signal is its best rank over the query variants; its signal score is the raw score there.
    `lists` are expected one per (signal, variant), as `merge_indexes` makes them;
    `names_identifier`: the query names an identifier, `asks_usage`: it asks what uses
    something in code (the adaptive rule's floors, query/retrieval/adaptive.py);
    `documents`: doc_ids of hits that do not carry their own (`hit_documents`). Where the
    hits' documents are known, each document's first chunk stands where its document stands
    in each list (`document_standing`), and the adaptive rule's keyword confidence counts
    documents (`keyword_confidence`).

    `pending`: the (index, chunk_id) of candidates that have no vector yet (their index's
    vector phase is still running). Each counts its BM25 standing for the vector leg it
    cannot have (IMPUTED), so it competes with chunks that have both legs instead of
    missing a leg they can earn; empty once every chunk has a vector, when nothing changes."""
    known = hit_documents(lists, documents)
    if method == "rrf":
        per_list = _rrf_parts(lists, k, expansion_share=expansion_share, pending=pending)
    elif method in ("weighted", "adaptive"):
        if method == "adaptive":
            weights = adaptive_weights(lists, names_identifier, known, asks_usage)
        per_list = _weighted_parts(lists, weights, expansion_share=expansion_share, pending=pending)
    else:
        raise ValueError(f"unknown fusion {method!r}")
    parts = document_standing(per_list, known)
    candidates = {
        key: Candidate(
            chunk_id=key[1], index=key[0], score=sum(signals.values()), contributions=signals
        )
        for key, signals in parts.items()
    }
    for ranked in lists:
        for rank, (index, hit) in enumerate(ranked.hits, start=1):
            cand = candidates[(index, hit.chunk_id)]
            if hit.text_key is not None:
                cand.text_key = hit.text_key
            best = cand.ranks.get(ranked.signal)
            if best is None or rank < best:
                cand.ranks[ranked.signal] = rank
                cand.signal_scores[ranked.signal] = hit.score
    return sorted(candidates.values(), key=order_key)
