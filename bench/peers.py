"""The same workload through this project and through LanceDB, in one run.

    /tmp/peers-venv/bin/python bench/peers.py [--chunks 10000,100000] [--queries 100]
        [--words 200] [--query-mix typical,common] [--fusion adaptive|rrf|...]
        [--store DIR] [--ann-ef N] [--json]

Needs the bench extra (LanceDB, pinned); it is not in the default install nor in the
dev extra, so give it a venv of its own, e.g. (on Linux, torch's CPU build first):

    python3.11 -m venv /tmp/peers-venv
    /tmp/peers-venv/bin/pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0
    /tmp/peers-venv/bin/pip install -e '.[dev,bench]'

Model-free on both sides (no query model runs); nothing needs the network (LanceDB works
on a local directory).

Per size, the project's SQLite index is built by bench/query.py's `build` (synthetic
Zipf-like chunks of --words words, random unit 384-d vectors; or reused from
DIR/<size>), then a LanceDB table (id, text, vector: float32[384]) is written from that
index's own rows, so both sides hold the same bytes (checked: sha256 of ids + texts and of
the vector bytes, read back from each side, must be equal). The LanceDB side gets its
native full-text index (`create_index(config=FTS())`, what the deprecated
`create_fts_index` forwards to: tokenizer "simple", lower case, English stemming and
stopwords, no positions) and an ANN index (IVF_HNSW_SQ, see ANN).

For each query mix (bench/query.py's `queries`, same seed), the same query texts and the
same query vectors (bench/query.py's `RandomQueryEmbedder`; the vectors the project's
engine was handed are recorded and hashed against the ones LanceDB gets) are timed on:

* project: bench/query.py's `in_process` with the stand-in embedder and the project's
  default fusion (--fusion rrf for LanceDB's) — vector, bm25, fuse (fusion + fetch of the
  rows + boosts + dedup) and `retrieval+fusion` = their sum;
* LanceDB vector (exact): a flat scan (`bypass_vector_index`), dot product;
* LanceDB FTS: its BM25 over the native index;
* LanceDB hybrid (exact): `query_type="hybrid"` with its default reranker (RRF, k=60) and
  the flat-scan vector leg;
* LanceDB vector (ANN) and hybrid (ANN): the same with the ANN index.

Every LanceDB path asks for the project's candidates per leg (50) and returns id and text;
the hybrid's fused list is cut to the project's top_k (10). Warm-up queries are not
counted. Reported: p50/p95 ms per path, the ratio LanceDB hybrid ÷ project
retrieval+fusion (p50; >1 means the project is faster), recall@10 of LanceDB's ANN
against its exact scan (random vectors have no cluster structure, so this recall is
pessimistic: real embeddings cluster and index better), build time per part, index bytes
on disk, and peak RSS per phase (Linux: the high-water mark is reset before each phase,
so each peak includes what the process already held when the phase began).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import hashlib
import json
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.query import (  # noqa: E402
    DIM,
    INDEX,
    REQUEST,
    WARMUP,
    RandomQueryEmbedder,
    _peak_rss_mb,
    build,
    in_process,
    queries,
)
from bench.round_trips import p95  # noqa: E402
from core.embedding.models import canonical_model_id  # noqa: E402
from core.progress import Progress  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.store.sqlite.chunk_text import ChunkText  # noqa: E402
from core.store.sqlite.vectors import VECTOR_DTYPE  # noqa: E402
from query.retrieval.retrieve import MIN_CANDIDATES  # noqa: E402
from query.types import DEFAULT_FUSION, FUSIONS  # noqa: E402

TABLE = "bench"
TOP_K = int(REQUEST["top_k"])
# Vectors are unit length on both sides, so dot product ranks as cosine does, without the
# norms LanceDB would otherwise compute per row.
METRIC = "dot"
# One partition: LanceDB's docs recommend few partitions for HNSW ("1 works well for most
# tables"); m and ef_construction are its defaults. At query time ef is LanceDB's default
# (1.5 x limit = 75 for 50 candidates) unless --ann-ef sets it.
ANN = {"index_type": "IVF_HNSW_SQ", "num_partitions": 1, "m": 20, "ef_construction": 300}
EXPORT_BATCH = 10_000
PATHS = ("vector_exact", "fts", "hybrid_exact", "vector_ann", "hybrid_ann")
INSTALL_HINT = "LanceDB is not installed: pip install -e '.[bench]' (from the repository root)"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def import_lancedb() -> Any:
    # LanceDB logs a deprecation warning from Rust on every query that selects columns
    # without its score column; thousands of them would bury the progress lines.
    os.environ.setdefault("LANCEDB_LOG", "error")
    import lancedb

    return lancedb


# --- hashes: the proof that both sides saw the same corpus and the same queries ----------


class CorpusHash:
    """sha256 of ids + texts and, apart, of the float32 vector bytes, in id order."""

    def __init__(self) -> None:
        self.texts = hashlib.sha256()
        self.vectors = hashlib.sha256()
        self.rows = 0
        self._last_id = ""

    def update(self, ids: list[str], texts: list[str], vectors: np.ndarray) -> None:
        # Both sides are hashed as they stream, so the order must be the same on both.
        if ids and (ids[0] <= self._last_id or ids != sorted(ids)):
            raise RuntimeError("rows not in ascending id order: the hashes would not compare")
        for chunk_id, text in zip(ids, texts, strict=True):
            self.texts.update(chunk_id.encode() + b"\0" + text.encode() + b"\0")
        self.vectors.update(np.ascontiguousarray(vectors, dtype="<f4").tobytes())
        self.rows += len(ids)
        self._last_id = ids[-1] if ids else self._last_id

    def digest(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "texts_sha256": self.texts.hexdigest(),
            "vectors_sha256": self.vectors.hexdigest(),
        }


def queries_hash(texts: list[str], vectors: np.ndarray) -> dict[str, str]:
    return {
        "texts_sha256": hashlib.sha256("\n".join(texts).encode()).hexdigest(),
        "vectors_sha256": hashlib.sha256(
            np.ascontiguousarray(vectors, dtype="<f4").tobytes()
        ).hexdigest(),
    }


class RecordingEmbedder(RandomQueryEmbedder):
    """The project's stand-in embedder, keeping each vector it hands the engine."""

    def __init__(self, model_id: str) -> None:
        super().__init__(model_id)
        self.seen: dict[str, np.ndarray] = {}

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        out = super().embed_queries(texts)
        self.seen.update(zip(texts, out, strict=True))
        return out

    def vectors_for(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self.seen]
        if missing:
            raise RuntimeError(f"the engine never embedded {missing[:3]}")
        return np.stack([self.seen[t] for t in texts])


# --- the project's index, read back as LanceDB's input ------------------------------------


def sqlite_rows(path: Path, hasher: CorpusHash, read_s: list[float]) -> Iterator[Any]:
    """The index's chunks as Arrow batches (id, text, vector), in id order; time spent
    reading SQLite is added to read_s[0] so the LanceDB write can be timed without it."""
    import pyarrow as pa

    schema = lance_schema()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    text = ChunkText(str(path))
    try:
        cursor = conn.execute(
            "SELECT c.chunk_id, c.content, v.embedding FROM chunks c "
            "JOIN vectors v ON v.chunk_id = c.chunk_id ORDER BY c.chunk_id"
        )
        while True:
            started = time.perf_counter()
            rows = cursor.fetchmany(EXPORT_BATCH)
            if not rows:
                break
            ids = [r[0] for r in rows]
            texts = text.decode_all(conn, (r[1] for r in rows))
            stored = np.frombuffer(b"".join(r[2] for r in rows), dtype=VECTOR_DTYPE)
            vectors = stored.astype(np.float32).reshape(-1, DIM)
            hasher.update(ids, texts, vectors)
            flat = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM)
            batch = pa.record_batch([pa.array(ids), pa.array(texts), flat], schema=schema)
            read_s[0] += time.perf_counter() - started
            yield batch
    finally:
        conn.close()


def lance_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("id", pa.string()),
            pa.field("text", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), DIM)),
        ]
    )


def hash_sqlite(path: Path) -> dict[str, Any]:
    hasher = CorpusHash()
    for _ in sqlite_rows(path, hasher, [0.0]):
        pass
    return hasher.digest()


def hash_lance(table: Any) -> dict[str, Any]:
    hasher = CorpusHash()
    for batch in table.search().select(["id", "text", "vector"]).to_batches(EXPORT_BATCH):
        vectors = batch.column("vector").values.to_numpy().reshape(-1, DIM)
        hasher.update(batch.column("id").to_pylist(), batch.column("text").to_pylist(), vectors)
    return hasher.digest()


# --- builds ---------------------------------------------------------------------------------


def build_project(store_dir: Path, size: int, words: int, model_id: str) -> dict[str, Any]:
    if (store_dir / f"{INDEX}.sqlite").exists():
        return {"reused": True}
    return {"reused": False, "build_s": round(build(store_dir, size, words, model_id, log), 1)}


def build_lance(lancedb: Any, lance_dir: Path, sqlite_path: Path) -> dict[str, Any]:
    """Table, FTS index and ANN index, each skipped when already there (--store)."""
    db = lancedb.connect(str(lance_dir))
    out: dict[str, Any] = {}
    if (lance_dir / f"{TABLE}.lance").exists():
        table = db.open_table(TABLE)
    else:
        table, out["table_write_s"], out["sqlite_read_s"] = write_table(db, sqlite_path)
    kinds = {ix.index_type for ix in table.list_indices()}
    if "FTS" not in kinds:
        out["fts_index_s"] = timed_call(lambda: create_fts(table))
    if not kinds & {"IvfHnswSq", "IVF_HNSW_SQ"}:
        out["ann_index_s"] = timed_call(lambda: create_ann(table))
    out["index_bytes"] = {ix.index_type: ix.size_bytes for ix in table.list_indices()}
    out["disk_bytes"] = dir_bytes(lance_dir)
    return out


def write_table(db: Any, sqlite_path: Path) -> tuple[Any, float, float]:
    import pyarrow as pa

    log(f"LanceDB: writing the table from {sqlite_path}")
    read_s = [0.0]
    reader = pa.RecordBatchReader.from_batches(
        lance_schema(), sqlite_rows(sqlite_path, CorpusHash(), read_s)
    )
    started = time.perf_counter()
    table = db.create_table(TABLE, data=reader)
    total = time.perf_counter() - started
    return table, round(total - read_s[0], 1), round(read_s[0], 1)


def create_fts(table: Any) -> None:
    from lancedb.index import FTS

    log("LanceDB: building the FTS index")
    # create_fts_index is deprecated in favour of this call, which it forwards to: the
    # native index (Tantivy's is gone from LanceDB). Positions only serve phrase queries,
    # which the workload has none of.
    table.create_index("text", config=FTS(with_position=False))


def create_ann(table: Any) -> None:
    from lancedb.index import HnswSq

    log(f"LanceDB: building the ANN index {ANN}")
    config = HnswSq(
        distance_type=METRIC,
        num_partitions=ANN["num_partitions"],
        m=ANN["m"],
        ef_construction=ANN["ef_construction"],
    )
    table.create_index("vector", config=config)


def timed_call(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return round(time.perf_counter() - started, 1)


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# --- LanceDB queries ------------------------------------------------------------------------


def lance_paths(
    table: Any, k: int, ef: int | None
) -> dict[str, Callable[[str, np.ndarray], list[str]]]:
    """Each path: (query text, query vector) -> ids of its result, best first."""
    cols = ["id", "text"]

    def ann(query: Any, exact: bool) -> Any:
        if exact:
            return query.bypass_vector_index()
        return query.ef(ef) if ef else query

    def ids(query: Any, top: int | None = None) -> list[str]:
        return query.to_arrow().column("id").to_pylist()[:top]

    def vector(vec: np.ndarray, exact: bool) -> Any:
        return ann(table.search(vec).distance_type(METRIC).select(cols).limit(k), exact)

    def hybrid(text: str, vec: np.ndarray, exact: bool) -> Any:
        query = table.search(query_type="hybrid").vector(vec).text(text)
        # limit is both each leg's candidates and the fused list's length; the fused list
        # is cut to top_k below, as the project's pipeline cuts its own.
        return ann(query.distance_type(METRIC).select(cols).limit(k), exact)

    return {
        "vector_exact": lambda text, vec: ids(vector(vec, exact=True)),
        "fts": lambda text, vec: ids(table.search(text, query_type="fts").select(cols).limit(k)),
        "hybrid_exact": lambda text, vec: ids(hybrid(text, vec, exact=True), TOP_K),
        "vector_ann": lambda text, vec: ids(vector(vec, exact=False)),
        "hybrid_ann": lambda text, vec: ids(hybrid(text, vec, exact=False), TOP_K),
    }


def time_lance(
    sides: Sides, texts: list[str], vectors: np.ndarray
) -> tuple[dict[str, dict[str, float]], dict[str, list[list[str]]]]:
    # A fresh connection per mix, as the project's engine is opened per mix: index caches
    # are warmed by the warm-up queries on both sides alike.
    table = sides.lancedb.connect(str(sides.lance_dir)).open_table(TABLE)
    summary: dict[str, dict[str, float]] = {}
    results: dict[str, list[list[str]]] = {}
    for name, path in lance_paths(table, sides.candidates, sides.ef).items():
        times, results[name] = [], []
        progress = Progress(len(texts), f"LanceDB {name}", log=log, unit="queries")
        for number, (text, vec) in enumerate(zip(texts, vectors, strict=True)):
            started = time.perf_counter()
            hits = path(text, vec)
            elapsed = (time.perf_counter() - started) * 1000.0
            if not hits:
                raise RuntimeError(f"LanceDB {name}: no results for {text!r}")
            if number >= WARMUP:
                times.append(elapsed)
                results[name].append(hits)
            progress.advance()
        progress.done()
        summary[name] = percentiles(times)
    return summary, results


def percentiles(times: list[float]) -> dict[str, float]:
    values = sorted(times)
    return {"p50": round(statistics.median(values), 2), "p95": round(p95(values), 2)}


def recall_at(exact: list[list[str]], approx: list[list[str]], k: int) -> float:
    hits = sum(len(set(e[:k]) & set(a[:k])) for e, a in zip(exact, approx, strict=True))
    return round(hits / (k * len(exact)), 4)


# --- memory ---------------------------------------------------------------------------------


def reset_peak_rss() -> int:
    """Resets the high-water mark where the kernel allows it; returns the RSS now (MB)."""
    gc.collect()
    with contextlib.suppress(OSError):  # not Linux, or not allowed: the peak stays global
        Path("/proc/self/clear_refs").write_text("5")
    return _proc_status_mb("VmRSS") or _peak_rss_mb()


def peak_rss() -> int:
    return _proc_status_mb("VmHWM") or _peak_rss_mb()


def _proc_status_mb(field: str) -> int | None:
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return None
    match = re.search(rf"^{field}:\s+(\d+) kB", status, re.M)
    return round(int(match.group(1)) / 1024) if match else None


def phase(entry: dict[str, Any], name: str, fn: Callable[[], Any]) -> Any:
    start = reset_peak_rss()
    out = fn()
    entry.setdefault("rss_mb", {})[name] = {"start": start, "peak": peak_rss()}
    return out


# --- one size -------------------------------------------------------------------------------


@dataclass
class Sides:
    """Where one size's two indexes live, and what both sides are asked."""

    lancedb: Any
    settings: Settings
    store_dir: Path
    queries: int
    ef: int | None

    @property
    def lance_dir(self) -> Path:
        return self.store_dir / "lancedb"

    @property
    def sqlite_path(self) -> Path:
        return self.store_dir / f"{INDEX}.sqlite"

    @property
    def model_id(self) -> str:
        return canonical_model_id(self.settings.embedding_model)

    @property
    def candidates(self) -> int:
        # The project's own candidates per leg, so LanceDB's legs fetch as many.
        return max(self.settings.candidates_per_signal, MIN_CANDIDATES)


def run_size(sides: Sides, size: int, words: int, mixes: list[str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"load_average": {"start": load_average()}}
    entry["project_build"] = phase(
        entry,
        "project_build",
        lambda: build_project(sides.store_dir, size, words, sides.model_id),
    )
    entry["project_build"]["disk_bytes"] = sides.sqlite_path.stat().st_size
    entry["lance_build"] = phase(
        entry, "lance_build", lambda: build_lance(sides.lancedb, sides.lance_dir, sides.sqlite_path)
    )
    entry["corpus"] = check_corpus(sides)
    entry["mixes"] = {mix: run_mix(sides, entry, mix) for mix in mixes}
    entry["peak_rss_mb_process"] = _peak_rss_mb()
    entry["load_average"]["end"] = load_average()
    return entry


def load_average() -> list[float] | None:
    """1/5/15-minute load: on a shared 2-core box, what else ran colours every timing."""
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def check_corpus(sides: Sides) -> dict[str, Any]:
    log("hashing both corpora")
    project = hash_sqlite(sides.sqlite_path)
    lance = hash_lance(sides.lancedb.connect(str(sides.lance_dir)).open_table(TABLE))
    if project != lance:
        raise RuntimeError(f"the two sides hold different corpora: {project} vs {lance}")
    return project


def run_mix(sides: Sides, entry: dict[str, Any], mix: str) -> dict[str, Any]:
    texts = queries(sides.queries + WARMUP, seed=7, mix=mix)
    embedder = RecordingEmbedder(sides.model_id)
    project = phase(
        entry,
        f"project_queries_{mix}",
        lambda: in_process(sides.store_dir, sides.settings, texts, embedder, log),
    )
    vectors = RandomQueryEmbedder(sides.model_id).embed_queries(texts)
    hashes = {"lancedb": queries_hash(texts, vectors)}
    hashes["project"] = queries_hash(texts, embedder.vectors_for(texts))
    if hashes["project"] != hashes["lancedb"]:
        raise RuntimeError(f"the two sides got different queries: {hashes}")
    lance, results = phase(entry, f"lance_queries_{mix}", lambda: time_lance(sides, texts, vectors))
    ours = project["retrieval+fusion"]["p50"]
    return {
        "queries": hashes["project"],
        "project": project,
        "lancedb": lance,
        "ratio_hybrid_exact": round(lance["hybrid_exact"]["p50"] / ours, 2),
        "ratio_hybrid_ann": round(lance["hybrid_ann"]["p50"] / ours, 2),
        "ann_recall_at_10": recall_at(results["vector_exact"], results["vector_ann"], TOP_K),
    }


# --- output ---------------------------------------------------------------------------------


def render_header(results: dict[str, Any]) -> str:
    return (
        f"LanceDB {results['lancedb_version']}; ANN {results['ann']}; project fusion "
        f"{results['request']['fusion']}; {results['queries']} timed queries per path after "
        f"{WARMUP} warm-up; top {TOP_K}"
    )


def render_size(size: int, entry: dict[str, Any]) -> str:
    corpus = entry["corpus"]
    lines = [
        f"{size} chunks: corpus sha256 texts {corpus['texts_sha256'][:16]} vectors "
        f"{corpus['vectors_sha256'][:16]} (equal on both sides, {corpus['rows']} rows)",
        "  build: " + render_builds(entry),
        f"  load average at start / end: {entry['load_average']['start']} / "
        f"{entry['load_average']['end']}",
        "  peak RSS MB (at phase start): "
        + ", ".join(f"{k} {v['peak']} ({v['start']})" for k, v in entry["rss_mb"].items()),
    ]
    for mix, result in entry["mixes"].items():
        lines.extend(render_mix(mix, result))
    return "\n".join(lines)


def render_builds(entry: dict[str, Any]) -> str:
    ours, lance = entry["project_build"], entry["lance_build"]
    built = "reused" if ours["reused"] else f"{ours['build_s']} s"
    parts = [f"project {built} ({ours['disk_bytes'] / 1e6:.0f} MB on disk)"]
    for key in ("table_write_s", "fts_index_s", "ann_index_s"):
        parts.append(f"LanceDB {key[:-2]} " + (f"{lance[key]} s" if key in lance else "reused"))
    if "sqlite_read_s" in lance:  # timed apart: reading the project's index is not LanceDB's
        parts[1] += f" (+ {lance['sqlite_read_s']} s reading SQLite)"
    sizes = ", ".join(f"{k} {v / 1e6:.0f} MB" for k, v in lance["index_bytes"].items())
    return "; ".join(parts) + f" (LanceDB dir {lance['disk_bytes'] / 1e6:.0f} MB; {sizes})"


def render_mix(mix: str, result: dict[str, Any]) -> list[str]:
    q = result["queries"]
    lines = [
        f"  query mix {mix}: query sha256 texts {q['texts_sha256'][:16]} vectors "
        f"{q['vectors_sha256'][:16]} (equal on both sides); p50 / p95 ms",
    ]
    rows = [(f"project {key}", result["project"][key]) for key in PROJECT_KEYS]
    rows += [(f"LanceDB {path}", result["lancedb"][path]) for path in PATHS]
    lines += [f"    {name:<28}{v['p50']:>9.2f} /{v['p95']:>8.2f}" for name, v in rows]
    lines.append(
        f"    LanceDB hybrid / project retrieval+fusion (p50): exact {result['ratio_hybrid_exact']}x, "
        f"ANN {result['ratio_hybrid_ann']}x; LanceDB ANN recall@10 vs its exact scan "
        f"{result['ann_recall_at_10']} (random vectors: pessimistic)"
    )
    return lines


PROJECT_KEYS = ("vector", "bm25", "fuse", "retrieval+fusion")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", default="10000,100000", help="comma-separated sizes")
    parser.add_argument("--queries", type=int, default=100, help="timed queries per path")
    parser.add_argument("--words", type=int, default=200, help="words per chunk (~1.3 tokens)")
    parser.add_argument(
        "--query-mix",
        default="typical,common",
        help="comma-separated: typical, common (see bench/query.py's queries())",
    )
    parser.add_argument(
        "--store", type=Path, help="keep both sides' indexes under DIR/<size> and reuse them"
    )
    parser.add_argument(
        "--fusion",
        choices=FUSIONS,
        default=DEFAULT_FUSION,
        help="the project's fusion (LanceDB's hybrid always uses its RRF reranker)",
    )
    parser.add_argument(
        "--ann-ef", type=int, help="HNSW ef of LanceDB's ANN queries (default: LanceDB's)"
    )
    parser.add_argument("--json", action="store_true", help="last line: the results as JSON")
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in args.chunks.split(",") if s.strip()]
    args.query_mix = [m.strip() for m in args.query_mix.split(",") if m.strip()]
    unknown = set(args.query_mix) - {"typical", "common"}
    if unknown:
        parser.error(f"unknown query mix {sorted(unknown)}: typical, common")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        lancedb = import_lancedb()
    except ImportError as exc:
        print(f"{INSTALL_HINT} ({exc})", file=sys.stderr)
        return 2
    settings = Settings.from_env()
    REQUEST["fusion"] = args.fusion  # bench/query.py's in_process reads it from there
    results: dict[str, Any] = {
        "lancedb_version": lancedb.__version__,
        "queries": args.queries,
        "words_per_chunk": args.words,
        "request": REQUEST,
        "ann": {**ANN, "metric": METRIC, "ef": args.ann_ef or "LanceDB's default (1.5 x limit)"},
        "sizes": {},
    }
    print(render_header(results), flush=True)
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="rag-peers-") as tmp:
            root = args.store if args.store else Path(tmp)
            sides = Sides(lancedb, settings, root / str(size), args.queries, args.ann_ef)
            entry = run_size(sides, size, args.words, args.query_mix)
        results["sizes"][str(size)] = entry
        print(render_size(size, entry), flush=True)
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
