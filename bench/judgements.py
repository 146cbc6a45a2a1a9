"""What the hand-written question sets' validators share (stdlib only): reading a qrels file
with every fault named by its line, the whitespace normalisation evidence is matched under,
and the check of per-file evidence quotes. Used by bench/swift-docs-eval/check.py,
bench/fastify-docs-eval/check.py, bench/apple-docs-eval/check.py and bench/check_set.py
(the code sets)."""

import collections
import os
import re


def norm(s):
    return re.sub(r"\s+", " ", s).strip()


def read_qrels(path, root, queries, errors, trees=None):
    """{query id: [judged files]} from `path` (`query-id<TAB>corpus-id<TAB>score`, scores 1),
    each judged file checked to exist under `root` (and, with `trees`, to lie in one of
    those top directories); faults go to `errors`."""
    judged = collections.defaultdict(list)
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n")
        if header != "query-id\tcorpus-id\tscore":
            errors.append(f"qrels: bad header {header!r}")
        for n, line in enumerate(f, 2):
            line = line.rstrip("\n")
            if not line:
                continue
            parts = line.split("\t")
            if len(parts) != 3:
                errors.append(f"qrels:{n}: expected 3 tab-separated fields")
                continue
            qid, doc, score = parts
            if qid not in queries:
                errors.append(f"qrels:{n}: unknown query id {qid}")
            if score != "1":
                errors.append(f"qrels:{n}: score {score!r}, expected 1")
            if doc in judged[qid]:
                errors.append(f"qrels:{n}: {qid} judges {doc} twice")
                continue
            if trees is not None and doc.split("/")[0] not in trees:
                errors.append(f"qrels:{n}: {doc} is outside {' and '.join(trees)}")
            if not os.path.isfile(os.path.join(root, doc)):
                errors.append(f"qrels:{n}: {doc} not found under {root}")
            judged[qid].append(doc)
    return judged


def evidence_errors(root, queries, judged, errors):
    """Check that each query's `metadata.evidence` ({judged file: quote}) names exactly its
    judged files and that every quote occurs verbatim, whitespace normalised, in its file;
    faults go to `errors`. Returns the number of distinct files read."""
    return quote_errors(root, queries, judged, errors)


def quote_errors(root, queries, judged, errors, haystacks=None, noun="file"):
    """evidence_errors where a quote may occur in any of the normalised texts
    `haystacks(path)` lists for its file (by default the file's own text) and a judged file
    is called a `noun` in the faults."""
    texts = {}
    for qid, q in queries.items():
        docs = judged.get(qid, [])
        evidence = q["metadata"]["evidence"]
        for doc in sorted(set(evidence) - set(docs)):
            errors.append(f"{qid}: evidence for {doc}, which is not judged")
        for doc in docs:
            quote = evidence.get(doc)
            if not isinstance(quote, str) or not quote.strip():
                errors.append(f"{qid}: no evidence quoted from judged {noun} {doc}")
                continue
            path = os.path.join(root, doc)
            if not os.path.isfile(path):
                continue
            if doc not in texts and haystacks:
                texts[doc] = haystacks(path)
            elif doc not in texts:
                with open(path, encoding="utf-8", errors="replace") as f:
                    texts[doc] = [norm(f.read())]
            if not any(norm(quote) in text for text in texts[doc]):
                errors.append(f"{qid}: evidence not found in {doc}: {quote[:60]!r}")
    return len(texts)
