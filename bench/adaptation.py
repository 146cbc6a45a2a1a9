"""Issue 27's encoder-adaptation variants, measured from an index's own chunks
(docs/evaluation.md, *Fusion calibration*): neither was kept, and this script is how the
figures there were produced.

    python bench/adaptation.py adapter  --store DIR --index NAME --dataset DIR --split S
        [--corpus DIR] [--lam 0.01] [--rule adaptive]
    python bench/adaptation.py finetune --store DIR --index NAME --out DIR [--no-hard]

`adapter` (variant a): a linear map on query vectors (from identity), trained with InfoNCE on
pairs mined from the index (query/calibration/pairs.py) against the stored vectors of their
sources, 15 hard negatives from the index and in-batch ones, weight decay towards identity,
early stopping on a tenth of the pairs; then the dev set's queries are searched with and
without it (vector leg, and fused with the same BM25 top 50) and nDCG@10 printed for both.

`finetune` (variants b and c): the encoder trained on the mined pairs (the source's text
without what was asked), with one hard negative each from the index's fused ranking unless
`--no-hard`, in-batch negatives, one epoch; a tenth of the pairs held back, reciprocal rank
among themselves printed every 20 steps; the model is saved only if that improved (with
`--save-last`, the last one anyway, to measure it on a dev set:
`RAG_EMBEDDING_MODEL=DIR python -m query.eval ... --store NEW_DIR`).

Both read the store only (and, for `adapter`'s evaluation, the dev set's queries and
judgements). The store's index must have been built with the configured embedding model; `adapter` reads
the stored vectors from the index's SQLite file, so it takes an embedded store only.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chunkers.embedding_text import embedding_text  # noqa: E402
from core.embedding.model_files import model_dir  # noqa: E402
from core.embedding.runtimes import load_embedder  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.store.filters import SearchFilter  # noqa: E402
from core.store.modes import LONG_LIVED  # noqa: E402
from core.store.open import open_store  # noqa: E402
from query.calibration.pairs import Pair, doc_comment, mine_pairs, reveals  # noqa: E402
from query.eval.beir import load_beir  # noqa: E402
from query.eval.metrics import score_query, unique_ranking  # noqa: E402
from query.retrieval.fusion import fuse  # noqa: E402
from query.types import RankedList  # noqa: E402

EVERYTHING = SearchFilter()
NEGATIVES = 15


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)


def adapter(args: argparse.Namespace, settings: Settings) -> None:
    import torch

    torch.set_num_threads(2)
    index = open_store(args.store, settings, modes=LONG_LIVED).open_index(args.index)
    embedder = load_embedder(settings)
    rows = index.fetch(index.sample_chunk_ids(6000))
    pairs = mine_pairs(rows, 3000)
    queries = unit(np.asarray(embedder.embed_queries([p.query for p in pairs]), np.float32))
    kept: list[tuple[Pair, np.ndarray, list[str]]] = []
    for pair, q in zip(pairs, queries, strict=True):
        hits = index.vector_search(q, EVERYTHING, 40)
        rows.update(index.fetch([h.chunk_id for h in hits if h.chunk_id not in rows]))
        negatives = [h.chunk_id for h in hits if str(rows[h.chunk_id]["doc_id"]) != pair.doc_id]
        if len(negatives) >= NEGATIVES:
            kept.append((pair, q, negatives[:NEGATIVES]))
    # The sources' and negatives' vectors as the index holds them (read from the SQLite file:
    # the store contract lends no stored vectors), so the map moves queries towards them.
    wanted = sorted({c for _, _, n in kept for c in n} | {p.chunk_id for p, _, _ in kept})
    stored = _stored_vectors(Path(args.store) / f"{args.index}.sqlite", wanted, index.dim)
    q_t = torch.tensor(np.stack([q for _, q, _ in kept]))
    p_t = torch.tensor(np.stack([stored[p.chunk_id] for p, _, _ in kept]))
    n_t = torch.tensor(np.stack([[stored[c] for c in n] for _, _, n in kept]))
    order = list(range(len(kept)))
    random.Random(0).shuffle(order)
    held, train = order[: len(kept) // 10], order[len(kept) // 10 :]
    eye = torch.eye(q_t.shape[1])
    w = torch.nn.Parameter(eye.clone())
    opt = torch.optim.Adam([w], lr=1e-3)

    def logits(ids: list[int], m: torch.Tensor) -> torch.Tensor:
        q = torch.nn.functional.normalize(q_t[ids] @ m.T, dim=1)
        inbatch = (q @ p_t[ids].T).masked_fill(torch.eye(len(ids), dtype=torch.bool), -1e4)
        return torch.cat(
            [(q * p_t[ids]).sum(1, keepdim=True), torch.einsum("bd,bkd->bk", q, n_t[ids]), inbatch],
            1,
        )

    def held_mrr(m: torch.Tensor) -> float:
        with torch.no_grad():
            scores = logits(held, m)[:, : 1 + NEGATIVES]
            ranks = (scores[:, 1:] > scores[:, :1]).sum(1) + 1
            return float((1.0 / ranks.float()).mean())

    best, best_w, stale = held_mrr(w), w.detach().clone(), 0
    print(f"{len(kept)} pairs; held-back reciprocal rank, identity: {best:.4f}", flush=True)
    for step in range(600):
        batch = random.Random(step).sample(train, min(64, len(train)))
        loss = (
            torch.nn.functional.cross_entropy(
                logits(batch, w) / 0.05, torch.zeros(len(batch), dtype=torch.long)
            )
            + args.lam * ((w - eye) ** 2).sum()
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 25 == 24:
            now = held_mrr(w)
            if now > best + 1e-4:
                best, best_w, stale = now, w.detach().clone(), 0
            elif (stale := stale + 1) >= 4:
                break
    print(f"held-back reciprocal rank, trained: {best:.4f} after {step + 1} steps", flush=True)
    _evaluate(args, settings, index, embedder, best_w.numpy())


def _stored_vectors(path: Path, chunk_ids: list[str], dim: int | None) -> dict[str, np.ndarray]:
    import sqlite3

    from core.store.sqlite.vectors import decode_vectors

    found: dict[str, np.ndarray] = {}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        for start in range(0, len(chunk_ids), 500):
            part = chunk_ids[start : start + 500]
            marks = ",".join("?" * len(part))
            rows = conn.execute(
                f"SELECT chunk_id, embedding FROM vectors WHERE chunk_id IN ({marks})", part
            ).fetchall()
            matrix = decode_vectors([blob for _, blob in rows], int(dim or 0), str(path))
            found.update(zip((c for c, _ in rows), matrix, strict=True))
    return found


def _evaluate(args, settings, index, embedder, matrix: np.ndarray) -> None:
    data = load_beir(Path(args.dataset), args.split, Path(args.corpus) if args.corpus else None)
    qids = data.judged_queries()
    vectors = np.asarray(embedder.embed_queries([data.queries[q] for q in qids]), np.float32)
    paths: dict[str, str] = {}
    for label, adapt in (("base", False), ("adapted", True)):
        vector_only, fused = [], []
        for qid, v in zip(qids, vectors, strict=True):
            vector_hits = index.vector_search(matrix @ v if adapt else v, EVERYTHING, 50)
            keyword_hits = index.bm25_search(data.queries[qid], EVERYTHING, 50)
            need = [h.chunk_id for h in vector_hits + keyword_hits if h.chunk_id not in paths]
            paths.update({c: str(r["doc_id"]) for c, r in index.fetch(need).items()})
            lists = [
                RankedList("bm25", 0, [("i", h) for h in keyword_hits]),
                RankedList("vector", 0, [("i", h) for h in vector_hits]),
            ]
            judged = data.qrels[qid]
            vector_only.append(
                score_query(unique_ranking(paths[h.chunk_id] for h in vector_hits), judged)[
                    "ndcg@10"
                ]
            )
            order = [c.chunk_id for c in fuse(lists, method=args.rule, k=settings.rrf_k)]
            fused.append(score_query(unique_ranking(paths[c] for c in order), judged)["ndcg@10"])
        print(
            f"{label}: vector nDCG@10 {statistics.fmean(vector_only):.4f}, {args.rule} fusion {statistics.fmean(fused):.4f}",
            flush=True,
        )


def finetune(args: argparse.Namespace, settings: Settings) -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(2)
    torch.manual_seed(0)
    started = time.perf_counter()
    index = open_store(args.store, settings, modes=LONG_LIVED).open_index(args.index)
    embedder = load_embedder(settings)
    rows = index.fetch(index.sample_chunk_ids(8000))
    pairs = mine_pairs(rows, 3000)
    triples = []
    for pair, v in zip(pairs, embedder.embed_queries([p.query for p in pairs]), strict=True):
        keyword = index.bm25_search(pair.query, EVERYTHING, 30)
        vector = index.vector_search(v, EVERYTHING, 30)
        rows.update(index.fetch([h.chunk_id for h in keyword + vector if h.chunk_id not in rows]))
        negative = None
        for cand in fuse(
            [
                RankedList("bm25", 0, [("i", h) for h in keyword]),
                RankedList("vector", 0, [("i", h) for h in vector]),
            ],
            method="adaptive",
        ):
            row = rows.get(cand.chunk_id)
            if row is None or str(row["doc_id"]) == pair.doc_id or reveals(pair, row):
                continue
            negative = _stripped(row)
            break
        triples.append((pair.query, embedding_text(None, pair.text, pair.language), negative))
    random.Random(0).shuffle(triples)
    held, train = triples[: len(triples) // 10], triples[len(triples) // 10 :]
    model = SentenceTransformer(str(model_dir(settings)), device="cpu")
    model.max_seq_length = 128

    def held_mrr() -> float:
        model.eval()
        q = torch.tensor(model.encode([t[0] for t in held], normalize_embeddings=True))
        d = torch.tensor(model.encode([t[1] for t in held], normalize_embeddings=True))
        scores = q @ d.T
        return float((1.0 / ((scores > scores.diag().unsqueeze(1)).sum(1) + 1).float()).mean())

    def encode(texts: list[str]) -> torch.Tensor:
        out = model(model.tokenize(texts))["sentence_embedding"]
        return torch.nn.functional.normalize(out, dim=1)

    base = best = held_mrr()
    print(f"{len(triples)} pairs; held-back reciprocal rank, base: {base:.4f}", flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.01)
    steps, stale = len(train) // 32, 0
    for step in range(steps):
        model.train()
        batch = train[step * 32 : (step + 1) * 32]
        docs = [t[1] for t in batch] + ([t[2] for t in batch if t[2]] if not args.no_hard else [])
        scores = encode([t[0] for t in batch]) @ encode(docs).T * 20.0
        loss = torch.nn.functional.cross_entropy(scores, torch.arange(len(batch)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 20 == 19 or step == steps - 1:
            now = held_mrr()
            print(
                f"step {step + 1}/{steps}: loss {loss.item():.4f}, held-back {now:.4f}", flush=True
            )
            if now > best + 1e-4:
                best, stale = now, 0
                model.save(args.out)
            elif (stale := stale + 1) >= 3:
                break
    if args.save_last:
        model.save(args.out)  # to measure on a dev set what training gave, gain or not
    verdict = f"saved to {args.out}" if best > base or args.save_last else "no gain: nothing saved"
    print(f"best held-back {best:.4f} ({verdict}) in {time.perf_counter() - started:.0f} s")


def _stripped(row: dict) -> str:
    content = str(row.get("content") or "")
    found = doc_comment(content, row.get("language")) if row.get("language") else None
    context = None if found else row.get("context")
    return embedding_text(context, found[1] if found else content, row.get("language"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="variant", required=True)
    for name in ("adapter", "finetune"):
        p = sub.add_parser(name)
        p.add_argument("--store", required=True)
        p.add_argument("--index", required=True)
    a = sub.choices["adapter"]
    a.add_argument("--dataset", required=True)
    a.add_argument("--split", required=True)
    a.add_argument("--corpus")
    a.add_argument("--lam", type=float, default=0.01)
    a.add_argument("--rule", default="adaptive", choices=("adaptive", "rrf"))
    f = sub.choices["finetune"]
    f.add_argument("--out", required=True)
    f.add_argument("--no-hard", action="store_true")
    f.add_argument(
        "--save-last", action="store_true", help="save the last model even without a gain"
    )
    args = parser.parse_args()
    settings = Settings.from_env()
    (adapter if args.variant == "adapter" else finetune)(args, settings)


if __name__ == "__main__":
    main()
