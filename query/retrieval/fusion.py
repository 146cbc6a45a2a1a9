"""Fusion of ranked lists into one ranking, with boosts, demotions and deduplication.

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
  query names an identifier (`adaptive_weights`).
* Auto (default): the rule the searched indexes' calibration chose, adaptive or RRF
  (query/calibration; `calibrated_rule` reads the record); adaptive for an index never
  calibrated, or when the indexes searched together chose differently. The identifier
  floor applies unless a searched index's calibration switched it off (`auto_floor`).

While an index's vector phase runs, a chunk without a vector yet counts its BM25 standing
for the vector leg it cannot have (`fuse`, `pending`): RRF and the weighted rules would
otherwise rank it as if the vector leg had judged it irrelevant (measured in
docs/evaluation.md, "While vectors fill in").

After fusion (`adjust`): a chunk whose symbol (or, for a part of a split type, a member it
lists) is an identifier the query names is multiplied by DEFINITION_BOOST; a chunk tagged with any requested framework (case-insensitive) is
multiplied by FRAMEWORK_BOOST once, however many tags match; a chunk deprecated at or before
the target iOS version, admitted only because of --include-deprecated, is multiplied by
DEPRECATED_DEMOTION. The order is score descending, then index name, then chunk id, so ties
break the same way on every run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from core.store.contract import Hit
from core.store.text_key import EMPTY_TEXT_KEY, normalised_text
from query.types import Candidate

SIGNALS = ("vector", "bm25")
DEFAULT_WEIGHTS: Mapping[str, float] = {"vector": 0.6, "bm25": 0.4}
# Strong enough to lift a tagged chunk over an untagged one a few ranks above it (RRF
# scores of neighbouring ranks differ by ~2%), too weak to lift an irrelevant chunk to the top.
FRAMEWORK_BOOST = 1.25
# Deprecated-for-the-target chunks the user asked to see stay, below current equivalents.
DEPRECATED_DEMOTION = 0.5
# A chunk that defines an identifier the query names (`TripStore`, `fetch_user`) is what an
# agent asking for it wants. The keyword leg alone does not ensure it: across indexes of
# very different sizes, a document sharing only the identifier's parts can outscore the
# definition (each index has its own term statistics). Doubling lifts a definition over
# anything that does not define the name unless that scores twice as high.
DEFINITION_BOOST = 2.0


# The rules a calibration may choose between, and the one an index without one uses.
CALIBRATED_RULES = ("adaptive", "rrf")
UNCALIBRATED_RULE = "adaptive"


def calibrated_rule(record: str | None) -> str | None:
    """The fusion rule an index's calibration record (JSON, query/calibration) chose; None
    without a record, or for one this version cannot read."""
    if not record:
        return None
    try:
        rule = json.loads(record).get("rule")
    except (ValueError, AttributeError):
        return None
    return rule if rule in CALIBRATED_RULES else None


def calibrated_floor(record: str | None) -> bool | None:
    """Whether an index's calibration record keeps the identifier floor
    (IDENTIFIER_KEYWORD_FLOOR); None without a record or a readable `floor`."""
    if not record:
        return None
    try:
        floor = json.loads(record).get("floor")
    except (ValueError, AttributeError):
        return None
    return floor if isinstance(floor, bool) else None


def auto_floor(floors: Iterable[bool | None]) -> bool:
    """Whether `auto` fusion keeps the identifier floor over the searched indexes: unless a
    calibration found that it costs (False); the floor is the default."""
    return all(floor is not False for floor in floors)


def auto_rule(rules: Iterable[str | None]) -> tuple[str, bool]:
    """(the rule `auto` fuses with, whether a calibration chose it) for the searched indexes'
    calibrated rules: theirs when they all chose the same, else the uncalibrated rule."""
    chosen = set(rules)
    if len(chosen) == 1 and None not in chosen:
        return str(chosen.pop()), True
    return UNCALIBRATED_RULE, False


@dataclass(frozen=True)
class RankedList:
    """The hits of one signal for one query variant, best first, each with its index."""

    signal: str  # "vector" | "bm25"
    variant: int  # position of the query variant (0 = the original query)
    hits: Sequence[tuple[str, Hit]]  # (index name, hit)

    @classmethod
    def of_index(cls, signal: str, index: str, variant: int, hits: Sequence[Hit]) -> RankedList:
        return cls(signal, variant, [(index, hit) for hit in hits])


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
    by_variant = variant_weights(lists, expansion_share)
    mirrored = _mirrored(lists, pending)
    out: Contributions = {}
    for ranked in lists:
        weight = by_variant[ranked.variant] * (signal_weights or {}).get(ranked.signal, 1.0)
        mirror = ranked.signal == "bm25" and ranked.variant in mirrored
        vector_weight = by_variant[ranked.variant] * (signal_weights or {}).get("vector", 1.0)
        for rank, (index, hit) in enumerate(ranked.hits, start=1):
            key = (index, hit.chunk_id)
            _add(out, key, ranked.signal, weight / (k + rank))
            if mirror and key in pending:
                _add(out, key, IMPUTED, vector_weight / (k + rank))
    return out


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
    by_variant = variant_weights(lists, expansion_share)
    mirrored = _mirrored(lists, pending)
    out: Contributions = {}
    for ranked in lists:
        if not ranked.hits:
            continue
        values = [hit.score for _, hit in ranked.hits]
        low, high = min(values), max(values)
        weight = weights.get(ranked.signal, 0.0) * by_variant[ranked.variant]
        mirror = ranked.signal == "bm25" and ranked.variant in mirrored
        vector_weight = weights.get("vector", 0.0) * by_variant[ranked.variant]
        for index, hit in ranked.hits:
            key = (index, hit.chunk_id)
            norm = 1.0 if high == low else (hit.score - low) / (high - low)
            _add(out, key, ranked.signal, weight * norm)
            if mirror and key in pending:
                _add(out, key, IMPUTED, vector_weight * norm)
    return out


def weighted_scores(
    lists: Sequence[RankedList],
    weights: Mapping[str, float] = DEFAULT_WEIGHTS,
    *,
    expansion_share: float | None = None,
) -> dict[tuple[str, str], float]:
    return totals(weighted_contributions(lists, weights, expansion_share=expansion_share))


# Keyword confidence: how much the original query's BM25 top 10 stands out, (s1 - s10) / s1.
# A flat top 10 (common words, a natural-language question against code) means BM25 found
# nothing distinctive; a steep one, a distinctive match. The keyword leg's weight is
# min(KEYWORD_WEIGHT_CAP, KEYWORD_WEIGHT_SLOPE x confidence), the vector leg's the rest.
# Measured against the fixed 0.6/0.4 on the three dev sets (docs/evaluation.md): CoSQA
# +0.022 nDCG@10, HotpotQA +0.002, SciFact -0.003.
KEYWORD_CONFIDENCE_DEPTH = 10
KEYWORD_WEIGHT_SLOPE = 0.8
KEYWORD_WEIGHT_CAP = 0.6
# A query naming an identifier (`RCTEventDispatcher`, `fetch_user`) gives the keyword leg at
# least an equal share: the encoder splits the name into sub-words and matches it loosely,
# while BM25 matches it exactly. An identifier is a name the searched indexes declare or one
# spelled as code (expansion/words.py, `declared_identifiers`): "JavaScript" and "Swift" in
# an iOS question are words, and the floor on them cost a held-out code set 0.016. Each
# index's calibration may switch the floor off (query/calibration, `auto_floor`). Measured through the pipeline (docs/evaluation.md): React
# Native's code questions 0.4705 -> 0.4871, SciFact 0.7141 -> 0.7150; CoSQA and HotpotQA
# unchanged (their questions name none), the Swift docs too (their index fuses by RRF;
# on recorded lists with the adaptive rule, +0.005). Floors of 0.4 and 0.6 did worse there.
IDENTIFIER_KEYWORD_FLOOR = 0.5


# (index, chunk id) -> the chunk's doc_id, for the hits whose documents are known.
Documents = Mapping[tuple[str, str], str]


def keyword_confidence(
    lists: Sequence[RankedList], documents: Documents | None = None
) -> float | None:
    """(s1 - s10) / s1 of the original query's BM25 list, s10 the best score of its tenth
    document (`documents`; a hit of unknown document counts as its own); 1.0 for fewer than
    10 documents (few match at all: distinctive); None without a BM25 list.

    Across documents, because the ranking is read per document: the sections of one page or
    the chunks of one source file share its words and score alike, so counted per chunk a
    clear keyword match on two or three documents looked as flat as a vague one, and the
    keyword leg lost its say exactly where it had found the right files. On recorded top-100
    lists (bench/fusion_lists.py, docs/evaluation.md) this gained react-native-vision-camera
    0.017, Werkzeug 0.031, React Native 0.003, SciFact 0.002 and CoSQA 0.001 nDCG@10 with
    the adaptive rule; the Swift docs lost 0.004 (their index fuses by RRF). One chunk per
    document: unchanged."""
    for ranked in lists:
        if ranked.signal == "bm25" and ranked.variant == 0:
            best: dict[tuple[str, str], float] = {}
            for index, hit in ranked.hits:
                key = (index, (documents or {}).get((index, hit.chunk_id), hit.chunk_id))
                best.setdefault(key, hit.score)
                if len(best) == KEYWORD_CONFIDENCE_DEPTH:
                    break
            scores = list(best.values())
            if len(scores) < KEYWORD_CONFIDENCE_DEPTH or scores[0] <= 0:
                return 1.0
            return (scores[0] - scores[-1]) / scores[0]
    return None


def adaptive_weights(
    lists: Sequence[RankedList],
    names_identifier: bool = False,
    documents: Documents | None = None,
) -> dict[str, float]:
    """Signal weights for this query from its keyword confidence (over `documents`), and
    whether it names an identifier (see above)."""
    confidence = keyword_confidence(lists, documents)
    if confidence is None:
        return {"vector": 1.0, "bm25": 0.0}
    keyword = min(KEYWORD_WEIGHT_CAP, KEYWORD_WEIGHT_SLOPE * confidence)
    if names_identifier:
        keyword = max(keyword, IDENTIFIER_KEYWORD_FLOOR)
    return {"vector": 1.0 - keyword, "bm25": keyword}


def fuse(
    lists: Sequence[RankedList],
    *,
    method: str = "rrf",
    k: int = 60,
    weights: Mapping[str, float] = DEFAULT_WEIGHTS,
    expansion_share: float | None = None,
    names_identifier: bool = False,
    pending: Pending = frozenset(),
    documents: Documents | None = None,
) -> list[Candidate]:
    """One Candidate per (index, chunk_id), sorted by `order_key`. A candidate's rank in a
    signal is its best rank over the query variants; its signal score is the raw score there.
    `lists` are expected one per (signal, variant), as `merge_indexes` makes them;
    `names_identifier`: the query names an identifier (the adaptive rule's floor);
    `documents`: the doc_ids of the original query's BM25 hits (the adaptive rule's
    keyword confidence counts documents, `keyword_confidence`).

    `pending`: the (index, chunk_id) of candidates that have no vector yet (their index's
    vector phase is still running). Each counts its BM25 standing for the vector leg it
    cannot have (IMPUTED), so it competes with chunks that have both legs instead of
    missing a leg they can earn; empty once every chunk has a vector, when nothing changes."""
    if method == "rrf":
        parts = rrf_contributions(lists, k, expansion_share=expansion_share, pending=pending)
    elif method == "weighted":
        parts = weighted_contributions(
            lists, weights, expansion_share=expansion_share, pending=pending
        )
    elif method == "adaptive":
        parts = weighted_contributions(
            lists,
            adaptive_weights(lists, names_identifier, documents),
            expansion_share=expansion_share,
            pending=pending,
        )
    else:
        raise ValueError(f"unknown fusion {method!r}")
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


# Texts equal once normalised share their first words, so those words key the duplicate
# check and the whole text is normalised only when two keys meet: normalising every
# candidate's content was ~1 ms of each query's fusion at 100k chunks.
PREFIX_WORDS = 16


def _prefix_key(text: str) -> str:
    return " ".join(text.split(None, PREFIX_WORDS)[:PREFIX_WORDS]).lower()


def dedupe_by_text(candidates: Sequence[Candidate]) -> tuple[list[Candidate], int]:
    """Keep the first (best-ranked) of candidates whose contents are equal once whitespace is
    collapsed and case folded: the same passage from two indexes or two documents is shown once.
    Candidates without a fetched row (content unknown) are kept. Returns (kept, dropped)."""
    # prefix key -> the first kept content with it, then (once a second one comes) the
    # normalised contents of all kept candidates with it
    seen: dict[str, str | list[str]] = {}
    kept: list[Candidate] = []
    for cand in candidates:
        raw = (cand.row.get("content") or "") if cand.row else ""
        key = _prefix_key(raw)
        if key:
            earlier = seen.get(key)
            if earlier is None:
                seen[key] = raw
            else:
                if isinstance(earlier, str):
                    earlier = seen[key] = [normalised_text(earlier)]
                text = normalised_text(raw)
                if text in earlier:
                    continue
                earlier.append(text)
        kept.append(cand)
    return kept, len(candidates) - len(kept)


def dedupe_by_key(
    candidates: Sequence[Candidate],
    fetch: Callable[[list[Candidate]], list[Candidate]],
) -> tuple[list[Candidate], int]:
    """What `dedupe_by_text` keeps, read from the candidates' `text_key`s (the fingerprint
    of the normalised content, core/store/text_key.py) instead of their texts. Equal texts
    have equal keys, so a candidate whose key no other candidate shares is kept without its
    text; only the candidates whose keys meet, or that have none (rows stored before keys
    were), get their whole rows from `fetch` and are compared by text, so two different
    passages whose keys collide both stay. `fetch` attaches whole rows in place and returns
    the candidates it found (a chunk deleted meanwhile is dropped, as a fetch drops it).
    Returns (kept, dropped as duplicates)."""
    counts: dict[int | None, int] = {}
    for cand in candidates:
        counts[cand.text_key] = counts.get(cand.text_key, 0) + 1
    if None in counts:
        # Some row has no key: any other may equal it, so every text is compared.
        compared = list(candidates)
    else:
        # Wordless chunks share one key and are never duplicates of each other.
        compared = [
            c for c in candidates if counts[c.text_key] > 1 and c.text_key != EMPTY_TEXT_KEY
        ]
    if not compared:
        return list(candidates), 0
    found = {id(c) for c in fetch(compared)}
    kept_compared, dropped = dedupe_by_text([c for c in compared if id(c) in found])
    gone = {id(c) for c in compared} - {id(c) for c in kept_compared}
    return [c for c in candidates if id(c) not in gone], dropped


def matches_framework(row: Mapping, frameworks: Sequence[str]) -> bool:
    wanted = {f.lower() for f in frameworks}
    return any(str(tag).lower() in wanted for tag in row.get("framework_tags") or ())


def deprecated_for_target(row: Mapping, target: int | None) -> bool:
    """The SearchFilter rule for exclusion: deprecated at or before the target, or deprecated
    with no version. Without a target nothing counts as deprecated for it."""
    if target is None or not row.get("deprecated"):
        return False
    dep = row.get("deprecated_in_int")
    return dep is None or dep <= target


def defines(row: Mapping, identifiers: Sequence[str]) -> bool:
    """The chunk declares one of `identifiers`: its symbol, the symbol's last dotted part
    (`TripRepository.save` defines `save`), or a member it lists as a part of a type split
    at its members (`metadata["members"]`: the part of `TripStore` holding `fetchTrips`
    carries the symbol `TripStore`), equals one of them or their last dotted part."""
    symbol = row.get("symbol")
    if not symbol or not identifiers:
        return False
    names = {symbol, symbol.rsplit(".", 1)[-1]}
    metadata = row.get("metadata")
    members = metadata.get("members") if isinstance(metadata, Mapping) else None
    if isinstance(members, list):
        names.update(m for m in members if isinstance(m, str))
    return any(name in names or name.rsplit(".", 1)[-1] in names for name in identifiers)


def adjust(
    candidates: Sequence[Candidate],
    *,
    frameworks: Sequence[str] = (),
    ios_version_int: int | None = None,
    identifiers: Sequence[str] = (),
) -> list[Candidate]:
    """Apply the definition and framework boosts and the deprecation demotion, re-sort."""
    for cand in candidates:
        if identifiers and defines(cand.row, identifiers):
            cand.score *= DEFINITION_BOOST
        if frameworks and matches_framework(cand.row, frameworks):
            cand.score *= FRAMEWORK_BOOST
        if deprecated_for_target(cand.row, ios_version_int):
            cand.score *= DEPRECATED_DEMOTION
    return sorted(candidates, key=order_key)
