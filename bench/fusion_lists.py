"""Fusion rules scored offline on recorded lists: each judged question's BM25 and vector top
100, asked once of a built index, then fused by every rule of a grid without asking again.

    .venv/bin/python bench/fusion_lists.py record SET_DIR --split S --store DIR --index NAME
        [--corpus DIR] --out FILE.json
    .venv/bin/python bench/fusion_lists.py score FILE.json [FILE.json ...] [--json]

`record` searches the index as the pipeline's first step does (the original question, no
expansion, 100 candidates per signal, no filters) and keeps, per question, both lists with
each hit's score and document, the qrels, whether the question names an identifier the
index declares and whether it asks what uses something in an index calibrated as code (the
usage floor). `score` fuses them with query.retrieval.fusion.fuse, the pipeline's own
fusion, under each rule of GRID and prints nDCG@10 per set (documents ranked where their
best chunk ranks, as python -m query.eval scores them). No links, boosts or callers: the
rules alone, which is what a change to a rule or a constant is decided on before the
pipeline measures it; "chunks alone" fuses as if the hits did not name their documents (docs/evaluation.md, "Fusion calibration").
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.store.contract import Hit  # noqa: E402
from query.eval.metrics import score_query, unique_ranking  # noqa: E402
from query.retrieval.fusion import fuse  # noqa: E402
from query.types import RankedList  # noqa: E402

DEPTH = 100
INDEX = "index"

Question = dict[str, Any]
Rule = Callable[[list[RankedList], Question], list[str]]


def _fused(method: str, usage: bool = True, **options: Any) -> Rule:
    def rule(lists: list[RankedList], question: Question) -> list[str]:
        fused = fuse(
            lists,
            method=method,
            names_identifier=question["names_identifier"],
            asks_usage=usage and bool(question.get("asks_usage")),
            **options,
        )
        return [c.chunk_id for c in fused]

    return rule


def _chunks_alone(rule: Rule) -> Rule:
    """`rule` on hits that do not name their documents: each chunk stands on its own, and
    the adaptive rule's keyword confidence counts chunks (as before documents were used)."""

    def stripped(lists: list[RankedList], question: Question) -> list[str]:
        return rule(
            [
                RankedList(r.signal, r.variant, [(i, h._replace(doc_id=None)) for i, h in r.hits])
                for r in lists
            ],
            question,
        )

    return stripped


def _single(signal: str) -> Rule:
    def rule(lists: list[RankedList], question: Question) -> list[str]:
        return [hit.chunk_id for r in lists if r.signal == signal for _, hit in r.hits]

    return rule


GRID: dict[str, Rule] = {
    "bm25": _single("bm25"),
    "vector": _single("vector"),
    "rrf": _fused("rrf"),
    "rrf, chunks alone": _chunks_alone(_fused("rrf")),
    "adaptive": _fused("adaptive"),
    "adaptive without the usage floor": _fused("adaptive", usage=False),
    "adaptive, chunks alone": _chunks_alone(_fused("adaptive")),
    "weighted, keyword 0.5": _fused("weighted", weights={"vector": 0.5, "bm25": 0.5}),
    "weighted, keyword 0.8": _fused("weighted", weights={"vector": 0.2, "bm25": 0.8}),
}


def record(args: argparse.Namespace) -> int:
    import numpy as np

    from core.embedding.runtimes import load_embedder
    from core.settings import Settings
    from core.store.filters import SearchFilter
    from core.store.modes import LONG_LIVED
    from core.store.open import open_store
    from query.eval.beir import load_beir
    from query.eval.index import Documents
    from query.retrieval.expansion.words import declared_identifiers
    from query.retrieval.rules import calibrated_floor
    from query.retrieval.usage import asks_usage

    settings = Settings.from_env()
    corpus = Path(args.corpus) if args.corpus else None
    data = load_beir(Path(args.set_dir), args.split, corpus, with_corpus=False)
    index = open_store(args.store, settings, modes=LONG_LIVED).open_index(args.index)
    documents = Documents(index, by_path=corpus is not None)
    code = calibrated_floor(index.fusion_calibration(), "usage_floor") is True
    questions = data.judged_queries()
    vectors = np.asarray(
        load_embedder(settings).embed_queries([data.queries[q] for q in questions])
    )

    def declared(names: list[str]) -> set[str]:
        return {str(row["name"]) for row in index.definitions_named(list(names))}

    recorded: list[Question] = []
    for number, (qid, vector) in enumerate(zip(questions, vectors, strict=True), start=1):
        text = data.queries[qid]
        lists = {
            "bm25": index.bm25_search(text, SearchFilter(), DEPTH),
            "vector": index.vector_search(vector, SearchFilter(), DEPTH),
        }
        hits: dict[str, list[tuple[str, float, str]]] = {}
        for signal, found in lists.items():
            judged = documents.of([h.chunk_id for h in found])
            hits[signal] = [
                (h.chunk_id, float(h.score), d) for h, d in zip(found, judged, strict=True)
            ]
        recorded.append(
            {
                "qid": qid,
                "names_identifier": bool(declared_identifiers(text, declared)),
                "asks_usage": code and asks_usage(text),
                "qrels": data.qrels[qid],
                **hits,
            }
        )
        if number % 100 == 0:
            print(f"recorded {number}/{len(questions)} questions", file=sys.stderr)
    Path(args.out).write_text(json.dumps({"set": data.name, "questions": recorded}))
    print(f"{data.name}: {len(recorded)} questions recorded to {args.out}", file=sys.stderr)
    return 0


def score_set(questions: list[Question]) -> dict[str, float]:
    """nDCG@10 of each GRID rule, averaged over the questions."""
    totals: dict[str, list[float]] = {name: [] for name in GRID}
    for question in questions:
        lists = [
            RankedList.of_index(
                signal, INDEX, 0, [Hit(c, s, None, d) for c, s, d in question[signal]]
            )
            for signal in ("bm25", "vector")
        ]
        documents = {(INDEX, c): d for signal in ("bm25", "vector") for c, _, d in question[signal]}
        for name, rule in GRID.items():
            order = rule(lists, question)
            ranking = unique_ranking(documents[(INDEX, c)] for c in order)
            totals[name].append(score_query(ranking, question["qrels"])["ndcg@10"])
    return {name: round(statistics.fmean(values), 4) for name, values in totals.items()}


def score(args: argparse.Namespace) -> int:
    table = {}
    for path in args.files:
        found = json.loads(Path(path).read_text())
        table[found["set"]] = score_set(found["questions"])
    if args.json:
        print(json.dumps(table))
        return 0
    sets = list(table)
    print("| rule | " + " | ".join(sets) + " |")
    print("|---" * (len(sets) + 1) + "|")
    for name in GRID:
        print(f"| {name} | " + " | ".join(f"{table[s][name]:.4f}" for s in sets) + " |")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="record one set's lists")
    rec.add_argument("set_dir")
    rec.add_argument("--split", required=True)
    rec.add_argument("--store", required=True)
    rec.add_argument("--index", required=True)
    rec.add_argument("--corpus")
    rec.add_argument("--out", required=True)
    sc = commands.add_parser("score", help="score the grid on recorded sets")
    sc.add_argument("files", nargs="+")
    sc.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    return record(args) if args.command == "record" else score(args)


if __name__ == "__main__":
    sys.exit(main())
