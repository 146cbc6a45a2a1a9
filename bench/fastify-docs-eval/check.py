"""Validate the fastify-docs-eval set.

usage: python bench/fastify-docs-eval/check.py CORPUS_ROOT

CORPUS_ROOT is the directory of Fastify's documentation
(`python bench/fastify-docs-eval/corpus.py --out DIR` prints it: DIR/corpus).

Checks:
  - query ids are unique and look like fastify-qNNN; each query has text, a style
    (natural|identifier), `product_words` (the camel-case product words of its text, e.g.
    JavaScript, GitHub) and an evidence object {judged page: quote}, every quote non-empty
    and at most 200 characters;
  - the qrels header is `query-id<TAB>corpus-id<TAB>score`, scores are 1, no (query,
    page) pair is repeated, every qrels query id is a known query;
  - every corpus-id exists under the corpus root, and a directory ingest of the root
    reads it (chunkers.sources.discovery, the ingest's own discovery: run with the
    project on the path);
  - every query has 1 to 3 judgements;
  - the evidence names exactly the judged pages, and each quote occurs verbatim
    (whitespace normalised) in its page.
Exit status 0 when everything passes, 1 otherwise, 2 on bad usage.
"""

import collections
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from judgements import STYLES, evidence_errors, load_queries, read_qrels, verdict  # noqa: E402  (bench/judgements.py)

# A camel-case word of prose: an inner capital after lower case (JavaScript, GitHub,
# OpenAPI) or capitals run into lower case (HAProxy, OAuth); a plural acronym (URLs) is not.
PRODUCT_WORD = re.compile(r"\b(?:[A-Z][a-z]+[A-Z]\w*|[A-Z]{2,}[a-z]\w*)\b")


def product_words(text):
    return sorted({w for w in PRODUCT_WORD.findall(text) if not re.fullmatch(r"[A-Z]+s", w)})


def product_word_errors(qid, q):
    words = product_words(q.get("text") or "")
    return (
        []
        if q["metadata"].get("product_words") == words
        else [f"{qid}: product_words should be {words}"]
    )


def ingested(root):
    """The pages a directory ingest of `root` reads, by path relative to it."""
    try:
        from chunkers.sources.discovery import discover
    except ImportError:
        print("run it with the project on the path: PYTHONPATH=. python ...", file=sys.stderr)
        sys.exit(2)

    return {os.path.relpath(os.path.join(root, str(f.path)), root) for f in discover([root])}


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    if not os.path.isdir(root):
        print(f"{root}: not a directory\n\n{__doc__.strip()}", file=sys.stderr)
        return 2
    errors = []
    queries = load_queries(
        os.path.join(HERE, "queries.jsonl"),
        errors,
        r"fastify-q\d{3}",
        "fastify-q001",
        "page",
        extra=product_word_errors,
    )
    judged = read_qrels(os.path.join(HERE, "qrels", "test.tsv"), root, queries, errors)
    for qid in queries:
        if not 1 <= len(judged.get(qid, [])) <= 3:
            errors.append(f"{qid}: {len(judged.get(qid, []))} judgements, expected 1 to 3")
    pages = evidence_errors(root, queries, judged, errors)
    read = ingested(root)
    for doc in sorted({d for docs in judged.values() for d in docs} - read):
        errors.append(f"{doc}: judged, but a directory ingest of {root} does not read it")

    styles = collections.Counter(q["metadata"].get("style") for q in queries.values())
    with_words = sum(1 for q in queries.values() if q["metadata"].get("product_words"))
    per_query = collections.Counter(len(judged.get(qid, [])) for qid in queries)
    n_judg = sum(len(v) for v in judged.values())
    print(
        f"queries: {len(queries)}  judgements: {n_judg}  judged pages: {pages}  "
        f"pages ingested: {len(read)}"
    )
    print("judgements per query: " + ", ".join(f"{k}: {v}" for k, v in sorted(per_query.items())))
    print(", ".join(f"{s}: {styles[s]}" for s in STYLES) + f"; with product words: {with_words}")
    return verdict(errors)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
