"""What the hand-written question sets' validators share (stdlib only): reading the queries
and a qrels file with every fault named by its line, the whitespace normalisation evidence is
matched under, and the check of per-file evidence quotes. Used by
bench/swift-docs-eval/check.py, bench/fastify-docs-eval/check.py,
bench/apple-docs-eval/check.py, bench/wwdc-eval/check.py and bench/check_set.py (the code
sets)."""

import collections
import json
import os
import re

STYLES = ("natural", "identifier")


def norm(s):
    return re.sub(r"\s+", " ", s).strip()


def load_queries(path, errors, id_pattern, id_example, noun, choices=None, extra=None):
    """{query id: query} from the JSONL file `path`, each query checked for a unique id that
    fully matches `id_pattern` (`id_example` shows one), text, a style in STYLES, every
    `choices` metadata field ({field: allowed values}) and an evidence object {judged
    `noun`: quote}, every quote non-empty and at most 200 characters; `extra(qid, query)`
    returns the set's own faults. Faults go to `errors`, named by line or query id."""
    choices = {"style": STYLES, **(choices or {})}
    queries = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                q = json.loads(line)
            except json.JSONDecodeError as exc:
                errors.append(f"queries.jsonl:{n}: {exc.msg}")
                continue
            qid = q.get("_id")
            if not qid:
                errors.append(f"queries.jsonl:{n}: no _id")
                continue
            if not re.fullmatch(id_pattern, qid):
                errors.append(f"{qid}: id should look like {id_example}")
            if qid in queries:
                errors.append(f"{qid}: duplicate query id")
            meta = q.get("metadata") or {}
            if not (q.get("text") or "").strip():
                errors.append(f"{qid}: empty text")
            for field, allowed in choices.items():
                if meta.get(field) not in allowed:
                    errors.append(f"{qid}: {field} must be one of {', '.join(allowed)}")
            evidence = meta.get("evidence")
            if not isinstance(evidence, dict) or not evidence:
                errors.append(f"{qid}: evidence must be a non-empty object {{{noun}: quote}}")
                evidence = {}
            for doc, quote in evidence.items():
                if not isinstance(quote, str) or not quote.strip():
                    errors.append(f"{qid}: empty evidence for {doc}")
                elif len(quote) > 200:
                    errors.append(f"{qid}: evidence for {doc} longer than 200 characters")
            q["metadata"] = dict(meta, evidence=evidence)
            errors.extend(extra(qid, q) if extra else ())
            queries[qid] = q
    return queries


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


def verdict(errors):
    """Print every fault, then FAIL or OK; the validator's exit status (1 or 0)."""
    for e in errors:
        print("ERROR", e)
    print("FAIL" if errors else "OK")
    return 1 if errors else 0
