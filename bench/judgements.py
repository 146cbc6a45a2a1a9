"""What the hand-written question sets' validators share (stdlib only): reading a qrels file
with every fault named by its line, and the whitespace normalisation evidence is matched
under. Used by bench/swift-docs-eval/check.py and bench/check_set.py."""

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
