"""Ranking metrics for one query, as BEIR reports them (pytrec_eval / trec_eval rules).

A run is the list of retrieved document ids, best first (duplicates are ignored after their
first, best, position). Qrels map document id -> graded relevance; a document counts as
relevant when its grade is > 0 (trec_eval's default relevance level 1), and unjudged
documents count as grade 0.

* nDCG@k: DCG = sum over ranks i = 1..k of grade_i / log2(i + 1), linear gain as trec_eval's
  ndcg_cut (not the 2^grade - 1 variant), divided by the DCG of the ideal ordering of the
  judged grades cut at k.
* Recall@k: relevant documents in the top k / relevant documents judged.
* MRR@k: 1 / rank of the first relevant document within the top k, else 0.
* All-relevant@k: 1 when every relevant document is in the top k, else 0 — for multi-hop
  questions, whether all supporting paragraphs were found.

Every function returns 0.0 for a query without any relevant judgement instead of dividing by
zero; callers are expected to leave such queries out of the average, as BEIR does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence


def unique_ranking(doc_ids: Iterable[str]) -> list[str]:
    """The run with repeated ids removed, each kept at its first (best) rank."""
    return list(dict.fromkeys(doc_ids))


def relevant(qrels: Mapping[str, int]) -> set[str]:
    return {doc for doc, grade in qrels.items() if grade > 0}


def dcg(grades: Sequence[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(grades) if g > 0)


def ndcg_at(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    run = unique_ranking(ranking)[:k]
    ideal = dcg(sorted((g for g in qrels.values() if g > 0), reverse=True)[:k])
    if ideal == 0:
        return 0.0
    return dcg([max(qrels.get(doc, 0), 0) for doc in run]) / ideal


def recall_at(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    wanted = relevant(qrels)
    if not wanted:
        return 0.0
    return len(wanted.intersection(unique_ranking(ranking)[:k])) / len(wanted)


def mrr_at(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    wanted = relevant(qrels)
    for rank, doc in enumerate(unique_ranking(ranking)[:k], start=1):
        if doc in wanted:
            return 1.0 / rank
    return 0.0


def all_relevant_at(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    wanted = relevant(qrels)
    if not wanted:
        return 0.0
    return 1.0 if wanted <= set(unique_ranking(ranking)[:k]) else 0.0


METRICS = {
    "ndcg@10": lambda r, q: ndcg_at(r, q, 10),
    "recall@10": lambda r, q: recall_at(r, q, 10),
    "recall@100": lambda r, q: recall_at(r, q, 100),
    "mrr@10": lambda r, q: mrr_at(r, q, 10),
    "all@10": lambda r, q: all_relevant_at(r, q, 10),
    "all@20": lambda r, q: all_relevant_at(r, q, 20),
}


def score_query(ranking: Sequence[str], qrels: Mapping[str, int]) -> dict[str, float]:
    """Every metric of METRICS for one query."""
    return {name: fn(ranking, qrels) for name, fn in METRICS.items()}


def mean_scores(per_query: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The mean of each metric over queries; an empty list gives an empty dict."""
    if not per_query:
        return {}
    return {name: sum(s[name] for s in per_query) / len(per_query) for name in per_query[0]}
