"""Validate the wwdc-eval set (stdlib only).

usage: python bench/wwdc-eval/check.py [CORPUS_ROOT]

CORPUS_ROOT is the WWDC transcript folder, `/work/shared/data/apple-docs/wwdc` (default:
`../shared/data/apple-docs/wwdc` beside the repository, as the worktrees keep it).

Checks:
  - query ids are unique and look like wwdc-qNNN; each query has text, a style
    (natural|identifier), a form (vtt|hls|json: the transcript form of its first judged
    session) and an evidence object {judged session: quote}, every quote non-empty and at
    most 200 characters;
  - the qrels header is `query-id<TAB>corpus-id<TAB>score`, scores are 1, no (query,
    session) pair is repeated, every qrels query id is a known query;
  - every corpus-id exists under the corpus root and is a session document, not a sidecar
    (sessions.json, wwdc2018.json, metadata.json, an HLS master playlist or one of its
    fileSequenceN.webvtt segments, a README, LICENSE or NOTICE): the rules of
    bench/apple-docs-eval/check.py, whose corpus holds this folder as `wwdc/`;
  - every query has 1 to 3 judgements, and its form is the form of one of its sessions;
  - the evidence names exactly the judged sessions, and each quote occurs in its session,
    whitespace normalised, where bench/apple-docs-eval/check.py looks for it: in a .vtt
    file's cue texts joined by spaces (a quote may span cues), in the cue texts of the
    segments an HLS playlist (.m3u8) lists, a cue repeated at a segment boundary counted
    once, in a JSON transcript's "text" strings joined by spaces, or in the file's text.
Exit status 0 when everything passes, 1 otherwise, 2 on bad usage.
"""

import collections
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
sys.path.insert(0, BENCH)
from judgements import STYLES, load_queries, quote_errors, read_qrels, verdict  # noqa: E402  (bench/judgements.py)

# The transcript readers and the sidecar rules are apple-docs-eval's (its corpus is this
# folder's parent); its folder name has a hyphen, so it is loaded by path.
_spec = importlib.util.spec_from_file_location(
    "apple_docs_eval_check", os.path.join(BENCH, "apple-docs-eval", "check.py")
)
apple = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(apple)

DEFAULT_ROOT = os.path.join(os.path.dirname(BENCH), "..", "shared", "data", "apple-docs", "wwdc")
FORMS = ("vtt", "hls", "json")


def form_of(doc):
    return {".vtt": "vtt", ".m3u8": "hls", ".json": "json"}.get(os.path.splitext(doc)[1])


def not_a_document(doc):
    """Why `doc` is not a session document, or None."""
    return apple.not_a_document("wwdc/" + doc) or (
        None if form_of(doc) else "not a transcript (.vtt, .m3u8 or .json)"
    )


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1] if len(argv) == 2 else DEFAULT_ROOT)
    if not os.path.isdir(root):
        print(f"{root}: not a directory\n\n{__doc__.strip()}", file=sys.stderr)
        return 2
    errors = []
    queries = load_queries(
        os.path.join(HERE, "queries.jsonl"),
        errors,
        r"wwdc-q\d{3}",
        "wwdc-q001",
        "session",
        {"form": FORMS},
    )
    judged = read_qrels(os.path.join(HERE, "qrels", "dev.tsv"), root, queries, errors)

    apple.judged_document_errors(queries, judged, errors, not_a_document, form_of, "session")

    sessions = quote_errors(root, queries, judged, errors, apple.haystacks, noun="session")

    forms = collections.Counter(q["metadata"].get("form") for q in queries.values())
    styles = collections.Counter(q["metadata"].get("style") for q in queries.values())
    per_query = collections.Counter(len(judged.get(qid, [])) for qid in queries)
    first = {judged[qid][0] for qid in queries if judged.get(qid)}
    n_judg = sum(len(v) for v in judged.values())
    print(f"queries: {len(queries)}  judgements: {n_judg}  judged sessions: {sessions}")
    print(f"sessions judged first (the one a question was written from): {len(first)}")
    print("form: " + ", ".join(f"{f} {forms[f]}" for f in FORMS))
    print("style: " + ", ".join(f"{s} {styles[s]}" for s in STYLES))
    print("judgements per query: " + ", ".join(f"{k}: {v}" for k, v in sorted(per_query.items())))
    return verdict(errors)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
