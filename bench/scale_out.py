"""The vector phase's throughput in this process against the same work spread out: tokens
per second of `local`, of `dask` (a LocalCluster of N single-threaded workers) and of
`endpoints` (N `rag-retrieve embeddings-server` processes on this machine, each with its
share of the cores), alternated in one run, with each one's overhead against local and its
cost per shard.

    .venv/bin/python bench/scale_out.py [--corpus DIR] [--rounds 2] [--workers 2]
        [--shard-tokens 200000] [--executors local,dask,endpoints] [--work DIR] [--json]

The corpus (default: the Swift book of the shared Swift docs set) is ingested once with
`--vectors later` into WORK/base; each measured run embeds a fresh copy of that index (every
chunk pending) with a fresh embedding cache, through `loaders.ingest.embed`, the function
`rag-retrieve embed` runs. Needs the `dask` extra. On a machine of C cores, local uses all C
(ONNX Runtime's threads) and the cluster C single-threaded processes: no speed-up is
possible, so what the figures show is the price of the distribution itself. Per-shard
cost: the cluster's wall time times its workers, less the shards' own time on the workers,
over the shards (start-up of the cluster and of each worker's model included). The servers
start once, before the first round, as a pool of long-lived servers would be running
already; their model load is not in the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.embedding.model_files import model_dir  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.store.open import open_store  # noqa: E402
from core.tokens import TokenCounter  # noqa: E402
from flows.prefect_api.server import temporary_api_server  # noqa: E402
from loaders.ingest import embed, ingest  # noqa: E402
from loaders.target import IngestTarget  # noqa: E402

SWIFT_BOOK = Path("/work/shared/data/swift-docs/swift-book")
INDEX = "bench"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def settings_at(work: Path, **overrides: Any) -> Settings:
    return Settings.from_env(
        data_dir=work / "data",
        index_dir=work / "cache",
        staging_dir=work / "staging",
        fusion_calibration=False,
        **overrides,
    )


def pending_tokens(store: Path, settings: Settings) -> int:
    """Tokens of every pending chunk's text, as the model counts them."""
    from chunkers.embedding_text import embedding_text

    counter = TokenCounter(model_dir(settings) / "tokenizer.json")
    index = open_store(str(store), settings).open_index(INDEX)
    total, after = 0, ""
    try:
        while page := index.pending_vectors(after, 2048):
            texts = [embedding_text(p.context, p.content, p.language) for p in page]
            total += sum(counter.count_many(texts))
            after = page[-1].chunk_id
    finally:
        index.close()
    return total


@contextmanager
def embeddings_server(threads: int, log: Path) -> Iterator[str]:
    """A `python -m query embeddings-server` on a free port with `threads` ONNX threads; its
    URL once it listens (its JSON line)."""
    env = {**os.environ, "RAG_EMBEDDING_THREADS": str(threads), "PYTHONPATH": str(ROOT)}
    with log.open("w") as err:
        process = subprocess.Popen(
            [sys.executable, "-P", "-m", "query", "embeddings-server", "--port", "0", "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line:
            raise SystemExit(f"the embeddings server did not start: {log.read_text()[-800:]}")
        yield json.loads(line)["url"]
    finally:
        process.terminate()
        process.wait(30)


def one_run(
    base: Path, work: Path, executor: str, workers: int, shard_tokens: int, endpoints: str
) -> dict[str, Any]:
    run = Path(tempfile.mkdtemp(dir=work, prefix=f"{executor}-"))
    shutil.copytree(base, run / "store")
    settings = settings_at(
        run,
        vector_executor=executor,
        dask_workers=workers,
        embedding_endpoints=endpoints or None,
        vector_shard_tokens=shard_tokens,
        vector_spool_dir=run / "spool",
    )
    started = time.perf_counter()
    summary = embed(settings, IngestTarget(INDEX, str(run / "store")))
    wall = time.perf_counter() - started
    shutil.rmtree(run, ignore_errors=True)
    out: dict[str, Any] = {
        "executor": executor,
        "chunks": summary.chunks_embedded,
        "embed_s": summary.timings.get("embed", wall),
        "wall_s": round(wall, 3),
    }
    if summary.vector_shards:
        reports = summary.vector_shards["reports"]
        on_workers = sum(r["seconds"] for r in reports)
        out["shards"] = len(reports)
        out["resubmitted"] = summary.vector_shards["resubmitted"]
        out["per_shard_s"] = round((out["embed_s"] * workers - on_workers) / len(reports), 3)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=SWIFT_BOOK)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--shard-tokens", type=int, default=200_000)
    parser.add_argument(
        "--executors",
        default="local,dask,endpoints",
        help="which to run, comma-separated (endpoints starts --workers servers)",
    )
    parser.add_argument("--work", type=Path, help="work folder (default: a temporary one)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="scale-out-"))
    work.mkdir(parents=True, exist_ok=True)
    base = work / "base"
    settings = settings_at(work / "ingest")
    log(f"ingesting {args.corpus} (--vectors later) into {base}")
    ingest(
        [str(args.corpus)],
        settings,
        IngestTarget(INDEX, str(base), defer_vectors=True),
    )
    tokens = pending_tokens(base, settings)
    log(f"{tokens} tokens pending")
    executors = [e for e in args.executors.split(",") if e]
    runs: list[dict[str, Any]] = []
    with temporary_api_server(settings), ExitStack() as servers:
        endpoints = ""
        if "endpoints" in executors:
            threads = max(1, (os.cpu_count() or 1) // args.workers)
            endpoints = ",".join(
                servers.enter_context(embeddings_server(threads, work / f"server-{n}.log"))
                for n in range(args.workers)
            )
            log(f"embedding servers: {endpoints}")
        for round_number in range(args.rounds):
            for executor in executors:
                result = one_run(base, work, executor, args.workers, args.shard_tokens, endpoints)
                result["round"] = round_number + 1
                result["tokens_per_s"] = round(tokens / result["embed_s"], 1)
                log(json.dumps(result))
                runs.append(result)
    best = {
        name: max(r["tokens_per_s"] for r in runs if r["executor"] == name) for name in executors
    }
    report = {
        "corpus": str(args.corpus),
        "tokens": tokens,
        "workers": args.workers,
        "shard_tokens": args.shard_tokens,
        "load_average": os.getloadavg(),
        "runs": runs,
        "best_tokens_per_s": best,
        "overhead": {
            name: round(1 - best[name] / best["local"], 3)
            for name in executors
            if name != "local" and "local" in best
        },
    }
    if args.json:
        print(json.dumps(report))
    else:
        for r in runs:
            print(
                f"round {r['round']} {r['executor']:9}: {r['tokens_per_s']:8.1f} tokens/s "
                f"({r['embed_s']:.1f} s)"
                + (
                    f", {r['shards']} shards, {r['per_shard_s']} s per shard"
                    if "shards" in r
                    else ""
                )
            )
        for name, overhead in report["overhead"].items():
            print(f"{name} overhead against local: {overhead:.1%}")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
