"""Validate the apple-docs-eval set (stdlib only).

usage: python bench/apple-docs-eval/check.py [CORPUS_ROOT]

CORPUS_ROOT is Apple's documentation folder, `/work/shared/data/apple-docs` (default:
`../shared/data/apple-docs` beside the repository, as the worktrees keep it).

Checks:
  - query ids are unique and look like apple-qNNN; each query has text, a style
    (natural|identifier), a form (docc_json|apple_md|scraped|xcode_guide|wwdc) and an
    evidence object {judged page: quote}, every quote non-empty and at most 200 characters;
  - the qrels header is `query-id<TAB>corpus-id<TAB>score`, scores are 1, no (query,
    page) pair is repeated, every qrels query id is a known query;
  - every corpus-id exists under the corpus root and is a document, not a sidecar: not a
    session list (sessions.json, wwdc2018.json), an archive's index/, metadata.json or
    theme-settings.json, the swift-docc sources in _format-spec-swift-docc/, a README,
    LICENSE or NOTICE, an HLS master playlist or one of its fileSequenceN.webvtt segments;
  - every query has 1 to 3 judgements, and its form is the form of one of its pages;
  - the evidence names exactly the judged pages, and each quote occurs in its page,
    whitespace normalised: in the file's text; for a .json page also in its "text",
    "code" and "title" strings joined by spaces (JSON escapes such as \\/ and \\u2019 do
    not matter, and a quote may run across inline runs or transcript segments); for a
    .vtt page also in its cue texts joined by spaces (a quote may span cues); for an HLS
    playlist (.m3u8) in the cue texts of the segments it lists, in order, a cue repeated
    at a segment boundary counted once.
Exit status 0 when everything passes, 1 otherwise, 2 on bad usage.
"""

import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from judgements import STYLES, load_queries, norm, quote_errors, read_qrels, verdict  # noqa: E402  (bench/judgements.py)

DEFAULT_ROOT = os.path.join(
    os.path.dirname(os.path.dirname(HERE)), "..", "shared", "data", "apple-docs"
)
FORMS = ("docc_json", "apple_md", "scraped", "xcode_guide", "wwdc")
QUERY_ID = re.compile(r"apple-q\d{3}")
TOP_FORMS = {
    "render-json": "docc_json",
    "apple-md": "apple_md",
    "scraped-md": "scraped",
    "xcode-additional-docs": "xcode_guide",
    "wwdc": "wwdc",
}
SIDECAR_NAMES = {
    "sessions.json",
    "wwdc2018.json",
    "metadata.json",
    "theme-settings.json",
    "hls_vod_mvp.m3u8",
}


def form_of(doc):
    return TOP_FORMS.get(doc.split("/")[0])


def not_a_document(doc):
    """Why `doc` is not a document of the corpus, or None."""
    parts = doc.split("/")
    name = parts[-1]
    if name in SIDECAR_NAMES:
        return "a sidecar (session list, archive metadata or HLS master playlist)"
    if "_format-spec-swift-docc" in parts:
        return "the swift-docc sources of the Markdown format"
    if parts[0] == "render-json" and len(parts) > 2 and parts[2] == "index":
        return "the DocC archive's navigator index"
    if re.match(r"(README|LICENSE|NOTICE)\b", name, re.IGNORECASE):
        return "a README, LICENSE or NOTICE file"
    if re.fullmatch(r"fileSequence\d+\.webvtt", name):
        return "an HLS segment (the session's document is its prog_index.m3u8)"
    if form_of(doc) is None:
        return "outside the corpus's five forms"
    return None


TEXT_KEYS = ("text", "code", "title")


def json_strings(value, out, keep=False):
    """The prose of a JSON page in document order: the string values under "text", "code"
    (a code listing's lines) and "title" keys, wherever they nest (render JSON inline
    content, a transcript's segments)."""
    if isinstance(value, str):
        if keep:
            out.append(value)
    elif isinstance(value, list):
        for v in value:
            json_strings(v, out, keep)
    elif isinstance(value, dict):
        for k, v in value.items():
            json_strings(v, out, k in TEXT_KEYS)
    return out


def vtt_cues(text):
    """[(timing, cue text)] of a WebVTT file, cue settings (A:middle) left out."""
    cues = []
    for block in re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n")):
        lines = block.strip("\n").split("\n")
        for i, line in enumerate(lines):
            if "-->" in line:
                start, _, end = line.partition("-->")
                timing = (start.strip(), end.split()[0] if end.split() else "")
                cues.append((timing, " ".join(x.strip() for x in lines[i + 1 :] if x.strip())))
                break
    return cues


def hls_cues(path):
    """Cue texts of the segments an HLS media playlist lists, a cue that a segment repeats
    from the one before (it crosses the boundary) kept once."""
    base = os.path.dirname(path)
    with open(path, encoding="utf-8") as f:
        segments = [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
    texts, previous = [], set()
    for seg in segments:
        with open(os.path.join(base, seg), encoding="utf-8") as f:
            cues = vtt_cues(f.read())
        texts.extend(text for timing, text in cues if (timing, text) not in previous)
        previous = set(cues)
    return texts


def haystacks(path):
    """The normalised texts a quote from `path` may occur in."""
    with open(path, encoding="utf-8", errors="replace") as f:
        raw = f.read()
    if path.endswith(".m3u8"):
        return [norm(" ".join(hls_cues(path)))]
    texts = [norm(raw)]
    if path.endswith(".json"):
        texts.append(norm(" ".join(json_strings(json.loads(raw), []))))
    elif path.endswith(".vtt"):
        texts.append(norm(" ".join(text for _, text in vtt_cues(raw))))
    return texts


def judged_document_errors(queries, judged, errors, is_not_document, form, noun):
    """Each query has 1 to 3 judgements, each a document (`is_not_document(doc)` says why
    not, or None), and its form is the `form(doc)` of one of them; faults go to `errors`.
    Shared with bench/wwdc-eval/check.py, whose sessions are this corpus's `wwdc/`."""
    for qid, q in queries.items():
        docs = judged.get(qid, [])
        if not 1 <= len(docs) <= 3:
            errors.append(f"{qid}: {len(docs)} judgements, expected 1 to 3")
        for doc in docs:
            why = is_not_document(doc)
            if why:
                errors.append(f"{qid}: {doc} is not a document: {why}")
        wanted = q["metadata"].get("form")
        if docs and wanted not in {form(d) for d in docs}:
            errors.append(f"{qid}: form {wanted!r}, but no judged {noun} is of that form")


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
        QUERY_ID,
        "apple-q001",
        "page",
        {"form": FORMS},
    )
    judged = read_qrels(os.path.join(HERE, "qrels", "dev.tsv"), root, queries, errors)

    judged_document_errors(queries, judged, errors, not_a_document, form_of, "page")

    pages = quote_errors(root, queries, judged, errors, haystacks, noun="page")

    forms = collections.Counter(q["metadata"].get("form") for q in queries.values())
    styles = collections.Counter(q["metadata"].get("style") for q in queries.values())
    per_query = collections.Counter(len(judged.get(qid, [])) for qid in queries)
    cross = sum(1 for qid in queries if len({form_of(d) for d in judged.get(qid, [])}) > 1)
    n_judg = sum(len(v) for v in judged.values())
    print(f"queries: {len(queries)}  judgements: {n_judg}  judged pages: {pages}")
    print("form: " + ", ".join(f"{f} {forms[f]}" for f in FORMS) + f"; across forms: {cross}")
    print("style: " + ", ".join(f"{s} {styles[s]}" for s in STYLES))
    print("judgements per query: " + ", ".join(f"{k}: {v}" for k, v in sorted(per_query.items())))
    return verdict(errors)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
