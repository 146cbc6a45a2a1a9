"""The adaptive fusion rule's signal weights: the keyword leg's share is set per query by how
distinctive its BM25 matches are across documents, never under half when the query names
an identifier, and most of the say when it asks what uses something in a codebase."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from query.types import RankedList

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
# A question about the uses of something (query/retrieval/usage.py) over an index of code
# gives the keyword leg at least this share: its answer is the files that mention the thing,
# and the encoder ranks the file that declares it, or one that merely reads alike, above
# them. Whether an index is code is its calibration's measure (`usage_floor`, from the share
# of its chunks in a code language); documentation's "which hooks are called" questions are
# better served by the vector leg (the Swift docs lost 0.017 on recorded lists with it).
# On recorded lists (bench/fusion_lists.py, docs/evaluation.md), floors of 0.7 / 0.8 / 1.0
# gave Werkzeug 0.730 / 0.738 / 0.745, react-native-vision-camera 0.688 / 0.698 / 0.700,
# React Native 0.565 / 0.565 / 0.561 and CoSQA (4 usage questions) 0.6064 / 0.6063 / 0.6057
# against 0.711, 0.674, 0.561 and 0.6067 without; 0.8 is where the gains level off.
USAGE_KEYWORD_FLOOR = 0.8


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
    asks_usage: bool = False,
) -> dict[str, float]:
    """Signal weights for this query from its keyword confidence (over `documents`), whether
    it names an identifier and whether it asks about uses in code (see above)."""
    confidence = keyword_confidence(lists, documents)
    if confidence is None:
        return {"vector": 1.0, "bm25": 0.0}
    keyword = min(KEYWORD_WEIGHT_CAP, KEYWORD_WEIGHT_SLOPE * confidence)
    if names_identifier:
        keyword = max(keyword, IDENTIFIER_KEYWORD_FLOOR)
    if asks_usage:
        keyword = max(keyword, USAGE_KEYWORD_FLOOR)
    return {"vector": 1.0 - keyword, "bm25": keyword}
