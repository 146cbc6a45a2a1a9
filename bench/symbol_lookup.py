"""How fast `symbol NAME` answers on an index of 100k code chunks: warm (a long-lived process,
as the MCP server's `find_symbol` answers) and cold (a fresh `python -m query symbol`).

    python bench/symbol_lookup.py [--work DIR] [--chunks 100000] [--repeats 30] [--cold 5]
        [--names A,B,...] [--json]

The index: React Native's iOS sources (bench/navigation.py fetches them, pinned by version
and sha512) chunked once with the ingest's chunker, their chunks and references then copied
under distinct paths (`copy07/React/...`, new chunk and document ids) until the index holds
`--chunks` chunks, and loaded through the store's own batched load with random unit vectors
(no embedding model: the vectors play no part in a lookup). Each copy is a codebase of its
own in the same index, so a name declared once in React Native is declared once per copy:
lookups answer over every copy's uses and ambiguities, which is what a large index holds.
Built once under `--work` (DIR/store) and reused while the chunk count matches.

Two sets of names: `NAMES`, six of React Native's most used declarations (a class used in
some 270 places per copy, so about 5,000 uses and 550 declarations in the index), reported
one by one; and `--sample` names drawn (seeded) from every name declared in the index, what a
lookup typically meets. Warm: one process opens the store as the server does (LONG_LIVED),
answers each name once (not counted), then `--repeats` rounds over the names, each
`query.navigation.lookup.find_symbol` timed: p50/p95 per name and over each set. Cold: `--cold` runs per name of
`python -m query symbol NAME --store DIR --json` in a fresh process, wall time from start to
exit (interpreter start and imports included). Targets (issue 28): warm p50 <= 20 ms, cold
<= 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from navigation import OBJC_SUFFIXES, SOURCE_DIRS, fetch  # noqa: E402

from chunkers.config import ChunkConfig  # noqa: E402
from chunkers.model import Chunk  # noqa: E402
from chunkers.pipeline import chunk_document  # noqa: E402
from chunkers.sources.discovery import discover  # noqa: E402
from chunkers.sources.reading import Defaults, read_all  # noqa: E402
from core.embedding.model_files import model_dir  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.store.contract import LoadBatch  # noqa: E402
from core.store.modes import LONG_LIVED  # noqa: E402
from core.store.sqlite.store import SQLiteStore  # noqa: E402
from core.tokens import counter_for_model  # noqa: E402
from loaders.arrow_tables import (  # noqa: E402
    chunks_to_table,
    documents_to_table,
    references_to_table,
)
from query.navigation.lookup import find_symbol  # noqa: E402
from query.retrieval.engine import Engine  # noqa: E402

INDEX = "code"
DIM = 384
MODEL_ID = "bench-random-vectors"
# From a class used in hundreds of places to a method called a few times: the lookup's cost
# grows with the rows of the name and the files they are in.
NAMES = ("RCTBridge", "reactTag", "RCTUIManager", "invalidate", "moduleForClass:", "RCTKeyWindow")
DOCS_PER_BATCH = 200


def source_chunks(work: Path) -> tuple[list[Chunk], dict[str, str]]:
    """React Native's chunks (with their references) and each document's content hash."""
    root = fetch(work)
    sources = [
        s for s in discover([str(root / d) for d in SOURCE_DIRS]) if s.path.suffix in OBJC_SUFFIXES
    ]
    documents = read_all(sources, Defaults(source="user_codebase", domain="ios")).documents
    cfg = ChunkConfig(counter=counter_for_model(str(model_dir(Settings.from_env()))))
    chunks: list[Chunk] = []
    for doc in documents:
        chunks += chunk_document(doc, cfg).chunks
    return chunks, {c.doc_id: c.content_hash or "" for c in chunks}


def build(store_dir: Path, work: Path, target: int) -> dict[str, Any]:
    """The index of `target` chunks (copies of React Native's) in `store_dir`."""
    started = time.perf_counter()
    base, _ = source_chunks(work)
    store = SQLiteStore(store_dir)
    index = store.open_index(INDEX, create=True)
    index.bind_model(MODEL_ID, DIM)
    rng = np.random.default_rng(7)
    written = refs = 0
    copy = 0
    while written < target:
        copied = []
        for c in base[: target - written]:
            path = f"copy{copy:02d}/{c.path}"
            copied.append(
                replace(
                    c,
                    chunk_id=f"{copy:02d}-{c.chunk_id}",
                    doc_id=f"{copy:02d}-{c.doc_id}",
                    path=path,
                )
            )
        by_doc: dict[str, list[Chunk]] = {}
        for c in copied:
            by_doc.setdefault(c.doc_id, []).append(c)
        doc_ids = list(by_doc)
        for at in range(0, len(doc_ids), DOCS_PER_BATCH):
            part = [c for d in doc_ids[at : at + DOCS_PER_BATCH] for c in by_doc[d]]
            docs = documents_to_table(
                [{"doc_id": d, "content_hash": f"h{d}"} for d in doc_ids[at : at + DOCS_PER_BATCH]]
            )
            vectors = rng.standard_normal((len(part), DIM), dtype=np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            table = references_to_table(part)
            index.apply(LoadBatch(docs, chunks_to_table(part), vectors, references=table))
            refs += table.num_rows
        written += len(copied)
        copy += 1
    stats = index.stats()
    index.close()
    return {
        "chunks": stats["chunks"],
        "references": refs,
        "copies": copy,
        "build_s": round(time.perf_counter() - started, 1),
    }


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def sampled_names(store_dir: Path, count: int, seed: int = 11) -> tuple[str, ...]:
    """`count` names drawn from every name the index declares (read from the file directly:
    the store has no listing of names)."""
    path = store_dir / f"{INDEX}.sqlite"
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT DISTINCT name FROM refs WHERE role = 'definition'")
        declared = sorted(name for (name,) in rows)
    finally:
        conn.close()
    return tuple(random.Random(seed).sample(declared, min(count, len(declared))))


def warm(store_dir: Path, names: tuple[str, ...], repeats: int) -> dict[str, Any]:
    # Through an engine's handles, as the MCP server and `symbol` look names up.
    engine = Engine(Settings(), SQLiteStore(store_dir, modes=LONG_LIVED), embedder=None)
    try:
        sizes = {}
        for name in names:  # the first answer of each name is not counted
            found = find_symbol(engine.checkout, name, [INDEX])
            sizes[name] = {k: len(found[k]) for k in ("definitions", "references", "callers")}
        times: dict[str, list[float]] = {name: [] for name in names}
        for _ in range(repeats):
            for name in names:
                started = time.perf_counter()
                find_symbol(engine.checkout, name, [INDEX])
                times[name].append((time.perf_counter() - started) * 1000)
    finally:
        engine.close()
    every = [t for ts in times.values() for t in ts]
    return {
        "p50_ms": round(statistics.median(every), 1),
        "p95_ms": round(percentile(every, 0.95), 1),
        "names": {
            name: {
                **sizes[name],
                "p50_ms": round(statistics.median(ts), 1),
                "p95_ms": round(percentile(ts, 0.95), 1),
            }
            for name, ts in times.items()
        },
    }


def cold(store_dir: Path, names: tuple[str, ...], runs: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    times: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(runs):
        for name in names:
            command = [sys.executable, "-m", "query", "symbol", name, "--store", str(store_dir)]
            started = time.perf_counter()
            done = subprocess.run([*command, "--json"], capture_output=True, env=env, cwd=ROOT)
            times[name].append((time.perf_counter() - started) * 1000)
            if done.returncode != 0:
                raise SystemExit(f"{' '.join(command)}: exit {done.returncode}\n{done.stderr!r}")
    every = [t for ts in times.values() for t in ts]
    return {
        "p50_ms": round(statistics.median(every), 0),
        "max_ms": round(max(every), 0),
        "names": {name: round(statistics.median(ts), 0) for name, ts in times.items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--work", type=Path, help="package and store (default: a temp dir)")
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=30, help="warm rounds over the names")
    parser.add_argument("--cold", type=int, default=5, help="fresh processes per name")
    parser.add_argument("--names", help="comma-separated symbols (default: NAMES)")
    parser.add_argument("--sample", type=int, default=50, help="names drawn from the index")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="rag-symbol-lookup-"))
    work.mkdir(parents=True, exist_ok=True)
    names = tuple(args.names.split(",")) if args.names else NAMES
    store_dir = work / "store"
    built: dict[str, Any] = {"reused": True}
    existing = store_dir / f"{INDEX}.sqlite"
    if existing.exists():
        store = SQLiteStore(store_dir)
        index = store.open_index(INDEX)
        count = index.stats()["chunks"]
        index.close()
        if count != args.chunks:
            raise SystemExit(f"{existing} holds {count} chunks, not {args.chunks}: remove it")
        built["chunks"] = count
    else:
        built = build(store_dir, work, args.chunks)
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()} {platform.system()}",
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "index": built,
        "warm": warm(store_dir, names, args.repeats),
        "cold": cold(store_dir, names, args.cold) if args.cold else None,
    }
    if args.sample:
        sample = sampled_names(store_dir, args.sample)
        typical = warm(store_dir, sample, args.repeats)
        report["sample"] = {k: typical[k] for k in ("p50_ms", "p95_ms")}
        report["sample"]["names"] = len(sample)
        refs = [r["references"] for r in typical["names"].values()]
        report["sample"]["references_p50"] = statistics.median(refs)
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"index: {built}")
    print("| name | definitions | references | warm p50 ms | warm p95 ms | cold p50 ms |")
    print("|---|---|---|---|---|---|")
    for name, r in report["warm"]["names"].items():
        cold_ms = report["cold"]["names"][name] if report["cold"] else "—"
        print(
            f"| {name} | {r['definitions']} | {r['references']} | {r['p50_ms']} "
            f"| {r['p95_ms']} | {cold_ms} |"
        )
    w = report["warm"]
    print(f"warm, these names: p50 {w['p50_ms']} ms, p95 {w['p95_ms']} ms")
    if args.sample:
        t = report["sample"]
        print(
            f"warm, {t['names']} names drawn from the index (median {t['references_p50']} "
            f"references each): p50 {t['p50_ms']} ms, p95 {t['p95_ms']} ms"
        )
    if report["cold"]:
        print(f"cold: p50 {report['cold']['p50_ms']} ms, max {report['cold']['max_ms']} ms")
    print(f"load average {report['load_average']} -> {report['load_average_after']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
