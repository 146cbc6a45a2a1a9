"""Query latency per stage on synthetic indexes: in-process, through the worker and MCP.

    .venv/bin/python bench/query.py [--chunks 10000,100000] [--queries 100] [--words 200]
        [--query-mix common|typical] [--no-model] [--no-worker] [--no-mcp] [--store DIR] [--json]

(--store DIR keeps each size's index under DIR/<size> and reuses it on the next run; the
peak RSS reported is this process's, in-process paths included.)

For each size: an SQLite index built directly through the store API (synthetic Zipf-like
text of --words words per chunk, random L2-normalised 384-d vectors, bound to the
configured embedding model's id so the real query embedder may search it), then
--queries hybrid queries (RRF, top 10, no expansion, no rerank — the model-free path) timed
these ways:

* in-process, model-free: the Engine gets a stand-in embedder that returns a random unit
  vector at no cost, so `total` is retrieval + fusion + pack without model inference
  (the target: p50 < 50 ms at 100k chunks);
* in-process, real model: the configured query embedder (MiniLM on CPU) is loaded too;
* worker: `python -m query serve` as a subprocess on a loopback port, POST /retrieve; its
  own stage timings come back in the response, and `round_trip` is the client's wall time;
* worker under load (--concurrency 1,10,50): that many clients at once, each request on
  its own connection; round-trip p50/p95, throughput, and any request not answered 200
  (the worker turns requests beyond RAG_WORKER_MAX_PENDING away with 503);
* MCP (unless --no-mcp; bench/query_mcp.py): the `retrieve` tool through the MCP SDK's
  client, alternating with the worker routes of the same `python -m query mcp --http`.

Stages are the pipeline's timings_ms: embed, vector, bm25, fuse (fusion, fetch of the
rows, boosts, dedup), corag (with --corag: the bridge hop and follow-ups), pack, total. `retrieval+fusion` = vector + bm25 + fuse.
Warm-up queries (not counted) load the vector matrix and the model first.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.round_trips import (  # noqa: E402
    STAGES,
    free_port,
    p95,
    post_json,
    sample_of,
    summarise,
    wait_healthy,
)
from bench.sqlite_store import WORDS, load, synthetic_chunks, unit_vectors  # noqa: E402
from core.embedding.models import canonical_model_id  # noqa: E402
from core.progress import Progress  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.store.modes import LONG_LIVED  # noqa: E402
from core.store.sqlite.store import SQLiteStore  # noqa: E402
from query.retrieval.engine import Engine  # noqa: E402
from query.retrieval.pipeline import answer, make_request  # noqa: E402
from query.types import DEFAULT_FUSION, FUSIONS  # noqa: E402

DIM = 384
INDEX = "bench"
WARMUP = 5
REQUEST = {"top_k": 10, "mode": "hybrid", "expand": False, "rerank": False}


class RandomQueryEmbedder:
    """Stands in for the query model: a unit vector derived from the text, no inference."""

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id
        self.dim = DIM
        self.notes: list[str] = []

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
            rows.append(v / np.linalg.norm(v))
        return np.stack(rows)


def queries(count: int, seed: int, mix: str = "common") -> list[str]:
    """Query texts over the synthetic vocabulary (Zipf ranks: the listed WORDS are ranks
    1-52, `termN` is rank 53 + N).

    * common: 1-4 of the listed words (each in roughly 30-100% of the chunks) plus 1-2 rarer
      terms — a worst case for BM25, whose cost grows with the postings of every term;
    * typical: 2-4 terms of ranks ~250-5000 (each in ~0.4-8% of the chunks), as content
      words of real questions are once stopwords are gone.
    """
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        if mix == "typical":
            words = [f"term{rng.randint(200, 5_000)}" for _ in range(rng.randint(2, 4))]
        else:
            words = rng.sample(WORDS, rng.randint(1, 4))
            words += [f"term{rng.randint(100, 20_000)}" for _ in range(rng.randint(1, 2))]
        out.append(" ".join(words))
    return out


def build(store_dir: Path, chunks: int, words: int, model_id: str, log) -> float:
    store = SQLiteStore(store_dir)
    index = store.open_index(INDEX, create=True)
    index.bind_model(model_id, DIM)
    started = time.perf_counter()
    step = 10_000
    progress = Progress(chunks, f"build {chunks}-chunk index", log=log, unit="chunks")
    for start in range(0, chunks, step):
        n = min(step, chunks - start)
        part = synthetic_chunks(n, words, seed=start + 1)
        for offset, c in enumerate(part):  # ids unique across parts
            c.chunk_id = f"c{start + offset:07d}"
            c.doc_id = f"d{(start + offset) // 10:07d}"
        load(index, part, unit_vectors(n, seed=start + 2))
        progress.advance(n)
    progress.done()
    stats = index.stats()
    index.close()
    if stats["chunks"] != chunks:
        raise RuntimeError(f"built {stats['chunks']} chunks, wanted {chunks}")
    return time.perf_counter() - started


def in_process(store_dir: Path, settings: Settings, texts: list[str], embedder: Any, log) -> dict:
    store = SQLiteStore(store_dir, modes=LONG_LIVED)  # as the worker opens it
    engine = Engine(settings, store, embedder=embedder, reranker=None, llm=None)
    samples = []
    label = "model-free" if isinstance(embedder, RandomQueryEmbedder) else "real model"
    engine.warm_indexes()  # as the worker does at start
    progress = Progress(len(texts), f"in-process ({label})", log=log, unit="queries")
    try:
        for number, text in enumerate(texts):
            response = answer(make_request({"query": text, "indexes": [INDEX], **REQUEST}), engine)
            if not response.chunks:
                raise RuntimeError(f"no results for {text!r}: {response.notes}")
            if number >= WARMUP:
                samples.append(sample_of(response.timings_ms))
            progress.advance()
    finally:
        engine.close()
    progress.done()
    return summarise(samples)


def post(url: str, text: str) -> tuple[int, float, dict[str, Any] | None]:
    return post_json(url, {"query": text, "indexes": [INDEX], **REQUEST})


def under_load(url: str, texts: list[str], clients: int) -> dict[str, Any]:
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        results = list(pool.map(lambda t: post(url, t), texts))
    wall = time.perf_counter() - started
    times = sorted(ms for status, ms, _ in results if status == 200)
    failed: dict[str, int] = {}
    for status, _, _ in results:
        if status != 200:
            failed[str(status or "reset")] = failed.get(str(status or "reset"), 0) + 1
    out: dict[str, Any] = {"requests": len(results), "qps": round(len(results) / wall, 1)}
    if times:
        out["round_trip"] = {
            "p50": round(statistics.median(times), 1),
            "p95": round(p95(times), 1),
        }
    out["not_200"] = failed
    return out


def through_worker(
    store_dir: Path, texts: list[str], log, concurrency: list[int] | None = None
) -> dict:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    worker = subprocess.Popen(
        [sys.executable, "-m", "query", "serve", "--port", str(port), "--store", str(store_dir)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_healthy(url, worker)
        samples = []
        progress = Progress(len(texts), "worker", log=log, unit="queries")
        for number, text in enumerate(texts):
            status, elapsed, payload = post(url, text)
            if status != 200 or payload is None or not payload["chunks"]:
                raise RuntimeError(f"worker: {status} for {text!r}: {payload}")
            if number >= WARMUP:
                sample = sample_of(payload["timings_ms"])
                sample["round_trip"] = elapsed
                samples.append(sample)
            progress.advance()
        progress.done()
        result: dict[str, Any] = summarise(samples)
        for clients in concurrency or []:
            log(f"worker under load: {clients} concurrent clients")
            result[f"concurrency_{clients}"] = under_load(url, texts[WARMUP:], clients)
        return result
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=10)
        except subprocess.TimeoutExpired:
            worker.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", default="10000,100000", help="comma-separated sizes")
    parser.add_argument("--queries", type=int, default=100, help="timed queries per path")
    parser.add_argument("--words", type=int, default=200, help="words per chunk (~1.3 tokens)")
    parser.add_argument("--no-worker", action="store_true", help="skip the worker and MCP paths")
    parser.add_argument("--no-mcp", action="store_true", help="skip the MCP path")
    parser.add_argument(
        "--concurrency", default="1,10,50", help="concurrent worker clients, comma-separated"
    )
    parser.add_argument("--no-model", action="store_true", help="skip the real-model path")
    parser.add_argument(
        "--query-mix", choices=("common", "typical"), default="common", help="see queries()"
    )
    parser.add_argument(
        "--fusion", choices=FUSIONS, default=DEFAULT_FUSION, help="fusion of the hybrid queries"
    )
    parser.add_argument(
        "--corag", action="store_true", help="ask with --corag (hops without an LLM)"
    )
    parser.add_argument(
        "--store", type=Path, help="keep the built indexes under DIR/<size> and reuse them"
    )
    parser.add_argument("--json", action="store_true", help="last line: the results as JSON")
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    settings = Settings.from_env()
    model_id = canonical_model_id(settings.embedding_model)
    sizes = [int(s) for s in args.chunks.split(",") if s.strip()]
    texts = queries(args.queries + WARMUP, seed=7, mix=args.query_mix)
    REQUEST["fusion"] = args.fusion
    REQUEST["corag"] = args.corag
    results: dict[str, Any] = {
        "queries": args.queries,
        "query_mix": args.query_mix,
        "corag": args.corag,
        "words_per_chunk": args.words,
        "request": REQUEST,
        "sizes": {},
    }
    real = None
    if not args.no_model:
        from core.embedding.runtimes import load_embedder

        real = load_embedder(settings)
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="rag-bench-") as tmp:
            store_dir = args.store / str(size) if args.store else Path(tmp)
            entry: dict[str, Any] = {}
            if not (store_dir / f"{INDEX}.sqlite").exists():
                entry["build_s"] = round(build(store_dir, size, args.words, model_id, log), 1)
            entry["peak_rss_mb_before_queries"] = _peak_rss_mb()
            entry["in_process_model_free"] = in_process(
                store_dir, settings, texts, RandomQueryEmbedder(model_id), log
            )
            if real is not None:
                entry["in_process_real_model"] = in_process(store_dir, settings, texts, real, log)
            if not args.no_worker:
                levels = [int(c) for c in args.concurrency.split(",") if c.strip()]
                entry["worker"] = through_worker(store_dir, texts, log, levels)
                if not args.no_mcp:
                    from bench.query_mcp import through_mcp

                    entry.update(
                        through_mcp(
                            store_dir, texts, log, index=INDEX, warmup=WARMUP, corag=args.corag
                        )
                    )
            entry["peak_rss_mb"] = _peak_rss_mb()
            results["sizes"][str(size)] = entry
        print(render_size(size, entry), flush=True)
    if args.json:
        print(json.dumps(results))
    return 0


def _peak_rss_mb() -> int:
    """This process's peak resident memory so far (Linux and macOS report different units)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1 << 20) if sys.platform == "darwin" else peak / 1024)


def render_size(size: int, entry: dict[str, Any]) -> str:
    built = f"built in {entry['build_s']}s" if "build_s" in entry else "index reused"
    lines = [f"{size} chunks ({built}; peak RSS {entry['peak_rss_mb']} MB): p50 / p95 ms"]
    keys = [*STAGES, "retrieval+fusion", "round_trip"]
    lines.append(f"  {'path':<24}" + "".join(f"{k:>19}" for k in keys))
    paths = ("in_process_model_free", "in_process_real_model", "worker", "worker_beside_mcp")
    for path in (*paths, "mcp"):
        if path not in entry:
            continue
        cells = []
        for key in keys:
            v = entry[path].get(key)
            cells.append(f"{v['p50']:>9.1f} /{v['p95']:>7.1f}" if v else f"{'-':>17}")
        lines.append(f"  {path:<24}" + "".join(f"{c:>19}" for c in cells))
    for key, level in entry.get("worker", {}).items():
        if key.startswith("concurrency_"):
            rt = level.get("round_trip", {})
            lines.append(
                f"  worker, {key.split('_')[1]:>3} clients: round trip p50 {rt.get('p50', '-')} / "
                f"p95 {rt.get('p95', '-')} ms, {level['qps']} queries/s, "
                f"not 200: {level['not_200'] or 'none'}"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
