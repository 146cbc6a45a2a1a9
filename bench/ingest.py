"""Ingestion benchmarks: embedding against the machine's ceiling, SQLite load, unchanged re-run.

    .venv/bin/python bench/ingest.py [--json] [--embed-texts 512] [--load-chunks 20000]
                                     [--rerun-docs 10000] [--only embed,load,rerun]
                                     [--precision auto] [--scifact-docs 0] [--queries 100]

One command, all figures, on whatever the machine is doing: the load average is printed
next to them because on a shared 2-core box other processes take a large share.

- embed: chunks of the real, variable-length corpora (data/sample and the Swift docs in
  /work/shared/data/swift-docs), embedded with the default model and runtime (batches sorted
  by length). Next to it, measured in the same run, the ceiling: the GFLOP/s of one
  transformer layer's matrix multiplies at the same batch shape, divided by the model's
  FLOPs per token (2 x the encoder's linear weights, plus attention: 4 x layers x hidden x
  the length of the token's own sequence, averaged over real tokens; padding excluded).
  Padding waste is reported for the sorted batches used and, computed from the token
  lengths, for the same texts batched in corpus order. The precision `--precision` resolves
  to (`auto`: core/embedding/precision.py) and fp32 take turns on every group of batches
  (`tokens_per_s` against `fp32_tokens_per_s`), then on the SciFact corpus (texts/s) and on
  one-query embeddings (ms): bench/embed_precision.py.
- load: chunks/s through `SQLiteIndex.apply` (rows, vectors and FTS in one transaction per
  batch of 256 documents), for synthetic ~300-token chunks (bench/sqlite_store.py's
  generator) and for the real chunks of the embed corpus; also per CPU second (Arrow
  build + apply), the figure a quiet machine's wall clock approaches.
- rerun: a generated corpus of N one-file documents is ingested through a Prefect flow, then
  ingested again unchanged; the second run's time inside the flow is the figure, with
  Prefect's start-up (first flow call in the process) and its per-run overhead apart.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import sqlite_store as store_bench  # noqa: E402
from embed_precision import (  # noqa: E402
    SCIFACT,
    alternated,
    corpus_rates,
    query_latency,
    scifact_queries,
    scifact_texts,
)
from prefect import flow  # noqa: E402

from chunkers.embedding_text import embedding_text  # noqa: E402
from chunkers.model import Chunk  # noqa: E402
from chunkers.parallel import ChunkSizes, chunk_documents  # noqa: E402
from chunkers.sources.discovery import discover  # noqa: E402
from chunkers.sources.reading import Defaults, read_all  # noqa: E402
from core.embedding.runtimes import load_embedder  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.store.sqlite.store import SQLiteStore  # noqa: E402
from flows.ingest_flow import run_ingest  # noqa: E402
from loaders.target import IngestTarget  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"
SWIFT_DOCS = Path("/work/shared/data/swift-docs")


# -- corpora -------------------------------------------------------------------------------


def real_chunks(settings: Settings, swift_files: int) -> list[Chunk]:
    """Every chunk of data/sample, plus those of every k-th Swift docs file."""
    paths: list[Path] = [SAMPLE]
    if SWIFT_DOCS.is_dir():
        md = sorted(SWIFT_DOCS.rglob("*.md"))
        step = max(1, len(md) // max(swift_files, 1))
        paths.extend(md[::step][:swift_files])
    docs = read_all(discover(paths), Defaults()).documents
    sizes = ChunkSizes.from_settings(settings)
    return [c for r in chunk_documents(docs, sizes) for c in r.chunks]


# -- embedding -------------------------------------------------------------------------------


def linear_flops_per_token(model_dir: Path) -> tuple[int, int, int]:
    """(2 x encoder linear weights, layers, hidden size) of a BERT-shaped model, from its
    config.json (any runtime): per layer Q, K, V and output (h x h each), FFN up and down."""
    config = json.loads((Path(model_dir) / "config.json").read_text(encoding="utf-8"))
    hidden, layers = int(config["hidden_size"]), int(config["num_hidden_layers"])
    inner = int(config.get("intermediate_size", 4 * hidden))
    return 2 * layers * (4 * hidden * hidden + 2 * hidden * inner), layers, hidden


def layer_gflops(rows: int, hidden: int, inner: int, repeats: int = 5) -> float:
    """Best GFLOP/s of one encoder layer's matrix multiplies (QKV, output, FFN up and down)
    on `rows` token positions, with torch's own threads, like the model runs them."""
    import torch

    x = torch.randn(rows, hidden)
    qkv, out = torch.randn(hidden, 3 * hidden), torch.randn(hidden, hidden)
    up, down = torch.randn(hidden, inner), torch.randn(inner, hidden)
    flops = 2 * rows * (3 * hidden * hidden + hidden * hidden + 2 * hidden * inner)
    best = float("inf")
    with torch.inference_mode():
        for _ in range(repeats + 1):  # the first warms caches and thread pools
            t0 = time.perf_counter()
            torch.matmul(x, qkv)
            torch.matmul(x, out)
            torch.matmul(torch.matmul(x, up), down)
            best = min(best, time.perf_counter() - t0)
    return flops / best / 1e9


def padded_positions(lengths: list[int], batch: int, max_length: int) -> int:
    lengths = [min(n, max_length) for n in lengths]
    return sum(
        max(lengths[i : i + batch]) * len(lengths[i : i + batch])
        for i in range(0, len(lengths), batch)
    )


def bench_embedding(
    settings: Settings, chunks: list[Chunk], count: int, scifact_docs: int, queries: int
) -> dict[str, Any]:
    """fp32 and settings.embedding_precision (resolved; `auto` by default), alternated."""
    import torch

    rng = random.Random(7)
    texts = [embedding_text(c.context, c.content, c.language) for c in chunks]
    texts = rng.sample(texts, min(count, len(texts)))
    embedder = load_embedder(settings)
    reference = load_embedder(settings.model_copy(update={"embedding_precision": "fp32"}))
    pair = {"fp32": reference, "chosen": embedder}
    for each in pair.values():
        each.embed_documents(texts[:8])  # warm-up: first calls allocate and tune kernels
    lengths = embedder._lengths(texts)
    # Token counts include the special tokens, like the attention masks the stats count.
    clipped = [min(n, embedder.max_length) for n in lengths]
    real = sum(clipped)
    mean_len = real / len(texts)
    # A token attends over its own sequence: attention costs per token grow with the length
    # of the sequence it sits in, so its average is weighted by length (sum L^2 / sum L).
    attended = sum(n * n for n in clipped) / real
    flops_linear, layers, hidden = linear_flops_per_token(embedder.model_dir)
    inner = 4 * hidden
    # The ceiling's matrix multiplies run at the shape the embedder's batches have: a token
    # budget when it has one (batches then hold about that many positions), else batch_size
    # texts of mean length. Cache effects make the rate depend on it.
    rows = embedder.batch_tokens or embedder.batch_size * int(mean_len)
    # The ceiling (fp32 matrix multiplies) is sampled between groups of batches, so that it
    # sees the same share of a busy machine as the embedding does; a best-of burst measured
    # apart would flatter it. fp32 and the chosen precision take turns on each group.
    order = sorted(range(len(texts)), key=lambda i: -lengths[i])
    ordered = [texts[i] for i in order]
    rates: list[float] = []
    both = alternated(
        pair,
        ordered,
        2 * embedder.batch_size,
        lambda: rates.append(layer_gflops(rows, hidden, inner, repeats=1)),
    )
    stats, fp32 = both["chosen"], both["fp32"]
    gflops = sum(rates) / len(rates)
    flops_per_token = flops_linear + 4 * layers * hidden * attended
    ceiling = gflops * 1e9 / flops_per_token
    best_ceiling = max(rates) * 1e9 / flops_per_token
    unsorted_padded = padded_positions(lengths, embedder.batch_size, embedder.max_length)
    figures: dict[str, Any] = {
        "model": embedder.model_id,
        "runtime": embedder.runtime,
        "precision": embedder.precision,
        "torch_threads": torch.get_num_threads(),
        "batch_size": embedder.batch_size,
        "batch_tokens": embedder.batch_tokens,
        "max_length": embedder.max_length,
        "texts": stats.texts,
        "tokens": stats.tokens,
        "mean_tokens": round(mean_len, 1),
        "truncated": stats.truncated,
        "seconds": round(stats.seconds, 2),
        "texts_per_s": round(stats.texts_per_s, 1),
        "tokens_per_s": round(stats.tokens_per_s),
        "fp32_tokens_per_s": round(fp32.tokens_per_s),
        "speedup": round(stats.tokens_per_s / fp32.tokens_per_s, 3),
        "gflops_matmul_mean": round(gflops, 1),
        "gflops_matmul_min_max": [round(min(rates), 1), round(max(rates), 1)],
        "mflops_per_token": round(flops_per_token / 1e6, 2),
        # The fp32 matrix-multiply ceiling: lower precisions may pass it.
        "ceiling_tokens_per_s": round(ceiling),
        "share_of_ceiling": round(stats.tokens_per_s / ceiling, 3),
        "fp32_share_of_ceiling": round(fp32.tokens_per_s / ceiling, 3),
        "share_of_best_ceiling": round(stats.tokens_per_s / best_ceiling, 3),
        "padding_waste_sorted": round(stats.padding_waste, 3),
        "padding_waste_corpus_order": round(1 - real / unsorted_padded, 3),
    }
    if scifact_docs >= 0 and SCIFACT.is_dir():
        renamed = {"fp32": reference, embedder.precision + "_chosen": embedder}
        figures["scifact"] = corpus_rates(renamed, scifact_texts(settings, scifact_docs))
    if queries and SCIFACT.is_dir():
        renamed = {"fp32": reference, embedder.precision + "_chosen": embedder}
        figures["query"] = query_latency(renamed, scifact_queries(queries))
    return figures


# -- SQLite load -------------------------------------------------------------------------------


def _apply_all(chunks: list[Chunk], vectors: np.ndarray, dim: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        index = SQLiteStore(tmp).open_index("load", create=True)
        index.bind_model("bench", dim)
        cpu = time.process_time()
        build, apply = store_bench.load(index, chunks, vectors)
        # CPU seconds of the load: on a busy machine the wall clock mostly measures the
        # other processes; this single-threaded path's CPU time is what a quiet one needs.
        cpu = time.process_time() - cpu
        t0 = time.perf_counter()
        index.close()  # the last close checkpoints what is still only in the WAL
        close = time.perf_counter() - t0
        file_bytes = (Path(tmp) / "load.sqlite").stat().st_size
    tokens = sum(c.token_count or 0 for c in chunks)
    return {
        "chunks": len(chunks),
        "mean_tokens": round(tokens / max(len(chunks), 1)),
        "apply_s": round(apply, 3),
        "chunks_per_s": round(len(chunks) / apply),
        "final_checkpoint_s": round(close, 3),
        "chunks_per_s_with_checkpoint": round(len(chunks) / (apply + close)),
        "arrow_build_s": round(build, 3),
        "cpu_s": round(cpu, 3),
        "chunks_per_cpu_s": round(len(chunks) / cpu),
        "file_mb": round(file_bytes / 1e6, 1),
    }


def bench_load(count: int, words: int, real: list[Chunk]) -> dict[str, Any]:
    # token_count of the generator is the word count; ~1.3 tokens per word for the model.
    synthetic = [
        replace(c, token_count=int(words * 1.3))
        for c in store_bench.synthetic_chunks(count, words, seed=1)
    ]
    out = {
        "synthetic": _apply_all(
            synthetic, store_bench.unit_vectors(count, seed=2), store_bench.DIM
        ),
    }
    if real:
        # Renumbered so that the real chunks make documents of CHUNKS_PER_DOC like the
        # synthetic ones (load() batches by that).
        renamed = [
            replace(c, chunk_id=f"r{i:07d}", doc_id=f"d{i // store_bench.CHUNKS_PER_DOC:06d}")
            for i, c in enumerate(real)
        ]
        out["real"] = _apply_all(
            renamed, store_bench.unit_vectors(len(renamed), seed=3), store_bench.DIM
        )
    return out


# -- unchanged re-run --------------------------------------------------------------------------

TOPICS = ["Navigation", "Persistence", "Networking", "Concurrency", "Layout", "Testing"]
PARAGRAPHS = [
    "Use a NavigationStack with a path binding so deep links can push several screens.",
    "SwiftData models persist with @Model; a ModelContainer owns the store on disk.",
    "URLSession tasks are async; check the HTTPURLResponse status before decoding JSON.",
    "Mark UI state @MainActor and move slow work into a Task or a detached actor.",
    "Grid and ViewThatFits adapt layouts without measuring views by hand.",
    "XCTest expectations wait for callbacks; async tests can simply await the result.",
    "Keep the sync engine idempotent: replaying a change twice must not duplicate rows.",
]


def generate_corpus(root: Path, docs: int) -> None:
    """`docs` markdown files in folders of 100. Texts repeat across files on purpose: the
    first run only has to embed a few dozen distinct chunks (the cache does the rest), so
    building the index for the re-run does not take the embedder's time for 10,000 texts."""
    for i in range(docs):
        folder = root / f"part{i // 100:03d}"
        if i % 100 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        topic = TOPICS[i % len(TOPICS)]
        body = PARAGRAPHS[i % len(PARAGRAPHS)]
        (folder / f"note{i:05d}.md").write_text(f"# {topic}\n\n{body}\n", encoding="utf-8")


@flow(name="bench-noop")
def noop_flow() -> None:
    return None


@flow(name="bench-ingest")
def bench_ingest_flow(
    paths: list[str], store: str, data_dir: str, index_dir: str, staging_dir: str
) -> dict[str, Any]:
    """ingest_flow's body with explicit directories (the bench does not touch the
    environment that Settings reads)."""
    settings = Settings(
        data_dir=Path(data_dir), index_dir=Path(index_dir), staging_dir=Path(staging_dir)
    )
    summary = run_ingest(paths, settings, IngestTarget("rerun", store))
    return {"counts": summary.counts(), "timings": summary.timings}


def bench_rerun(docs: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    noop_flow()
    startup = time.perf_counter() - t0
    t0 = time.perf_counter()
    noop_flow()
    per_flow = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        generate_corpus(root / "corpus", docs)
        generated = time.perf_counter() - t0
        args = [
            [str(root / "corpus")],
            str(root / "store"),
            str(root / "data"),
            str(root / "indexes"),
            str(root / "staging"),
        ]
        t0 = time.perf_counter()
        first = bench_ingest_flow(*args)
        first_wall = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = bench_ingest_flow(*args)
        again_wall = time.perf_counter() - t0
    counts = again["counts"]
    assert counts["docs_unchanged"] == docs and counts["chunks_written"] == 0, counts
    return {
        "docs": docs,
        "generate_s": round(generated, 2),
        "first_run_s": round(first["counts"]["seconds"], 2),
        "first_run_chunks_embedded": first["counts"]["chunks_embedded"],
        "first_run_wall_s": round(first_wall, 2),
        "unchanged_rerun_s": round(counts["seconds"], 3),
        "unchanged_rerun_wall_s": round(again_wall, 3),
        "unchanged_rerun_stages": again["timings"],
        "prefect_startup_s": round(startup, 2),
        "prefect_per_flow_s": round(per_flow, 3),
    }


# -- main ------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    parser.add_argument("--embed-texts", type=int, default=512)
    parser.add_argument("--swift-files", type=int, default=120, help="Swift docs files chunked")
    parser.add_argument("--load-chunks", type=int, default=20_000)
    parser.add_argument("--load-words", type=int, default=230, help="~1.3 tokens per word")
    parser.add_argument("--rerun-docs", type=int, default=10_000)
    parser.add_argument("--only", default="embed,load,rerun", help="comma-separated sections")
    parser.add_argument(
        "--runtime", default="auto", choices=["auto", "onnx", "torch", "mlx"], help="embedding"
    )
    parser.add_argument(
        "--precision",
        default="auto",
        choices=["auto", "fp32", "bf16", "int8", "fp16"],
        help="measured against fp32, alternated",
    )
    parser.add_argument(
        "--scifact-docs",
        type=int,
        default=0,
        help="SciFact documents embedded for texts/s in both precisions (0 = all, -1 = skip)",
    )
    parser.add_argument("--queries", type=int, default=100, help="SciFact queries timed")
    args = parser.parse_args()
    sections = set(args.only.split(","))
    settings = Settings(embedding_runtime=args.runtime, embedding_precision=args.precision)
    result: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "loadavg_start": [round(x, 2) for x in os.getloadavg()]}
    }
    chunks = real_chunks(settings, args.swift_files) if sections & {"embed", "load"} else []
    if chunks:
        result["corpus"] = {
            "chunks": len(chunks),
            "mean_tokens": round(sum(c.token_count or 0 for c in chunks) / len(chunks), 1),
        }
    if "embed" in sections:
        result["embed"] = bench_embedding(
            settings, chunks, args.embed_texts, args.scifact_docs, args.queries
        )
        report("embed", result["embed"], args.json)
    if "load" in sections:
        result["load"] = bench_load(args.load_chunks, args.load_words, chunks)
        report("load", result["load"], args.json)
    if "rerun" in sections:
        result["rerun"] = bench_rerun(args.rerun_docs)
        report("rerun", result["rerun"], args.json)
    result["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"load average: start {result['machine']['loadavg_start']}, "
            f"end {result['machine']['loadavg_end']} on {os.cpu_count()} CPUs"
        )


def report(name: str, figures: dict[str, Any], quiet: bool) -> None:
    out = sys.stderr if quiet else sys.stdout
    print(f"{name}: " + json.dumps(figures), file=out, flush=True)


if __name__ == "__main__":
    main()
