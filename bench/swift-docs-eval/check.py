"""Validate the swift-docs evaluation set (stdlib only).

usage: python3 bench/swift-docs-eval/check.py /work/shared/data/swift-docs

Checks:
  - query ids are unique, each query has text, a style (natural|identifier)
    and an evidence string of at most 200 characters;
  - the qrels header is `query-id<TAB>corpus-id<TAB>score`, scores are 1,
    no (query, doc) pair is repeated, every qrels query id is a known query;
  - every corpus-id exists as a file under the corpus root;
  - every query has 1 or 2 judgements;
  - every evidence string occurs verbatim (whitespace normalised) in at
    least one of the files judged for its query.
Exit status 0 when everything passes, 1 otherwise.
"""

import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from judgements import norm, read_qrels, verdict  # noqa: E402  (bench/judgements.py, beside this set)


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = argv[1]
    errors = []

    queries = {}
    with open(os.path.join(HERE, "queries.jsonl"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            q = json.loads(line)
            qid = q.get("_id")
            if not qid:
                errors.append(f"queries.jsonl:{n}: no _id")
                continue
            if qid in queries:
                errors.append(f"{qid}: duplicate query id")
            meta = q.get("metadata") or {}
            if not (q.get("text") or "").strip():
                errors.append(f"{qid}: empty text")
            if meta.get("style") not in ("natural", "identifier"):
                errors.append(f"{qid}: style must be natural or identifier")
            ev = meta.get("evidence") or ""
            if not ev.strip():
                errors.append(f"{qid}: no evidence")
            elif len(ev) > 200:
                errors.append(f"{qid}: evidence longer than 200 characters")
            queries[qid] = q

    judged = read_qrels(os.path.join(HERE, "qrels", "test.tsv"), root, queries, errors)

    texts = {}
    for qid, q in queries.items():
        docs = judged.get(qid, [])
        if not 1 <= len(docs) <= 2:
            errors.append(f"{qid}: {len(docs)} judgements, expected 1 or 2")
            continue
        ev = norm(q["metadata"].get("evidence") or "")
        found = False
        for doc in docs:
            path = os.path.join(root, doc)
            if not os.path.isfile(path):
                continue
            if doc not in texts:
                with open(path, encoding="utf-8") as f:
                    texts[doc] = norm(f.read())
            if ev and ev in texts[doc]:
                found = True
                break
        if not found:
            errors.append(f"{qid}: evidence not found in {', '.join(docs)}")

    styles = collections.Counter(q["metadata"].get("style") for q in queries.values())
    trees = collections.Counter()
    for qid in queries:
        kinds = {d.split("/")[0] for d in judged.get(qid, [])}
        trees["both" if len(kinds) > 1 else (kinds.pop() if kinds else "none")] += 1
    n_judg = sum(len(v) for v in judged.values())
    print(f"queries: {len(queries)}  judgements: {n_judg}  files: {len(texts)}")
    print("style: " + ", ".join(f"{k} {v}" for k, v in sorted(styles.items())))
    print("tree:  " + ", ".join(f"{k} {v}" for k, v in sorted(trees.items())))
    return verdict(errors)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
