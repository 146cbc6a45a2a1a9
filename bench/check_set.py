"""Validate a hand-written code question set (bench/react-native-eval, bench/werkzeug-eval).

usage: python bench/check_set.py SET_DIR CORPUS_ROOT

SET_DIR holds queries.jsonl and qrels/test.tsv; CORPUS_ROOT is the directory the set's
corpus.py prints (`python bench/<set>/corpus.py --out DIR`: DIR/corpus).

Checks:
  - query ids are unique and look like <prefix>-qNNN, one prefix for the set; each query
    has text, a style (natural|identifier), a kind (where|usage) and an evidence object
    {judged file: quote}, every quote non-empty and at most 200 characters;
  - the qrels header is `query-id<TAB>corpus-id<TAB>score`, scores are 1,
    no (query, doc) pair is repeated, every qrels query id is a known query;
  - every corpus-id is a file that a directory ingest of CORPUS_ROOT reads (the project's
    own discovery and reading, as `python -m query.eval --corpus` ingests it);
  - every query has 1 to 3 judgements;
  - the evidence names exactly the judged files: for every judged file there is
    a quote, and it occurs verbatim (whitespace normalised) in that file.
Exit status 0 when everything passes, 1 otherwise, 2 on bad usage.
"""

import collections
import os
import re
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(BENCH))
# Last: bench's own scripts (keyword_search.py, query.py) must shadow no module or package
# of the standard library or of the project, in this process or in a test importing it.
sys.path.append(BENCH)
from judgements import STYLES, load_queries, norm, read_qrels, verdict  # noqa: E402  (bench/judgements.py)

KINDS = ("where", "usage")
QUERY_ID = r"([a-z][a-z0-9]*)-q\d{3}"


def one_prefix(queries, errors):
    """A set's query ids share one prefix."""
    prefixes = {qid.split("-q")[0] for qid in queries if re.fullmatch(QUERY_ID, qid)}
    if len(prefixes) > 1:
        errors.append(f"query ids mix prefixes: {', '.join(sorted(prefixes))}")


def ingested_files(root):
    """The files a directory ingest of `root` reads, by their paths relative to it (the
    corpus ids `python -m query.eval --corpus` judges)."""
    from chunkers.sources.discovery import discover
    from chunkers.sources.reading import Defaults, read_all

    return {str(doc.path) for doc in read_all(discover([root]), Defaults()).documents}


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    set_dir, root = argv[1], argv[2]
    for path in (set_dir, root):
        if not os.path.isdir(path):
            print(f"{path}: not a directory\n\n{__doc__.strip()}", file=sys.stderr)
            return 2
    errors = []
    queries = load_queries(
        os.path.join(set_dir, "queries.jsonl"),
        errors,
        QUERY_ID,
        "<prefix>-q001",
        "file",
        {"kind": KINDS},
    )
    one_prefix(queries, errors)
    judged = read_qrels(os.path.join(set_dir, "qrels", "test.tsv"), root, queries, errors)
    ingested = ingested_files(root)

    texts = {}
    for qid, q in queries.items():
        docs = judged.get(qid, [])
        evidence = q["metadata"]["evidence"]
        if not 1 <= len(docs) <= 3:
            errors.append(f"{qid}: {len(docs)} judgements, expected 1 to 3")
        for doc in sorted(set(evidence) - set(docs)):
            errors.append(f"{qid}: evidence for {doc}, which is not judged")
        for doc in docs:
            path = os.path.join(root, doc)
            if os.path.isfile(path) and doc not in ingested:
                errors.append(f"{qid}: {doc} is not read by a directory ingest of {root}")
            quote = evidence.get(doc)
            if not isinstance(quote, str) or not quote.strip():
                errors.append(f"{qid}: no evidence quoted from judged file {doc}")
                continue
            if not os.path.isfile(path):
                continue
            if doc not in texts:
                with open(path, encoding="utf-8", errors="replace") as f:
                    texts[doc] = norm(f.read())
            if norm(quote) not in texts[doc]:
                errors.append(f"{qid}: evidence not found in {doc}: {quote[:60]!r}")

    cells = collections.Counter(
        (q["metadata"].get("style"), q["metadata"].get("kind")) for q in queries.values()
    )
    n_judg = sum(len(v) for v in judged.values())
    per_query = collections.Counter(len(judged.get(qid, [])) for qid in queries)
    print(f"queries: {len(queries)}  judgements: {n_judg}  files: {len(texts)}")
    print(f"files a directory ingest reads: {len(ingested)}")
    print("judgements per query: " + ", ".join(f"{k}: {v}" for k, v in sorted(per_query.items())))
    for style in STYLES:
        row = ", ".join(f"{kind} {cells[(style, kind)]}" for kind in KINDS)
        print(f"{style}: {row}")
    return verdict(errors)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
