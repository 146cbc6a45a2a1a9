"""How soon a saved file answers under `rag-retrieve ingest --watch`: by keyword, and by vector.

    .venv/bin/python bench/watch_latency.py [--edits 5] [--corpus data/sample/guides] [--json]

Starts the real CLI (`python -P -m flows.ingest DIR --watch --json`, the default model) on a
copy of `--corpus` in a temporary folder, waits for its initial run, then saves `--edits` new
markdown files one at a time, each with a word found nowhere else. For each, a reader in this
process (the store opened read-only, as a query opens it) polls every 20 ms and records the
seconds from the save to (a) the first keyword hit on that word, (b) the moment the index
holds a vector for every chunk again (the edit's vector). Printed with the load average:
the figures are wall-clock, and the model shares this machine's cores with whatever runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.store.filters import SearchFilter  # noqa: E402
from core.store.sqlite.store import SQLiteStore  # noqa: E402

INDEX = "watched"
POLL_S = 0.02


def environment(work: Path) -> dict[str, str]:
    return {
        **os.environ,
        "RAG_DATA_DIR": str(work / "data"),
        "RAG_INDEX_DIR": str(work / "store"),
        "RAG_STAGING_DIR": str(work / "staging"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
    }


def wait_for_line(proc: subprocess.Popen[str], kind: str, timeout: float) -> dict[str, Any]:
    """The next JSON line of `kind` the watch prints."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the watch ended before a {kind!r} line")
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("kind") == kind:
            return dict(record)
    raise RuntimeError(f"no {kind!r} line within {timeout:.0f}s")


def measure(corpus: Path, edits: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="watch-latency-"))
    root = work / "corpus"
    shutil.copytree(corpus, root)
    args = [sys.executable, "-P", "-m", "flows.ingest", str(root), "--watch", "--json"]
    args += ["--index", INDEX]
    proc = subprocess.Popen(
        args,
        cwd=ROOT,
        env={**environment(work), "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    keyword: list[float] = []
    vector: list[float] = []
    try:
        initial = wait_for_line(proc, "run", timeout=900)
        print(f"initial run: {initial.get('chunks_written')} chunks", file=sys.stderr)
        store = SQLiteStore(work / "store")
        with store.open_index(INDEX) as index:
            for n in range(edits):
                word = f"quokkabench{n}"
                path = root / f"edit-{n}.md"
                path.write_text(f"# Field note {n}\n\nThe {word} appears in this note only.\n")
                saved = time.monotonic()
                found = None
                while time.monotonic() - saved < 60:
                    if found is None and index.bm25_search(word, SearchFilter(), 3):
                        found = time.monotonic() - saved
                    if found is not None:
                        stats = index.stats()
                        if stats["vectors"] == stats["chunks"]:
                            break
                    time.sleep(POLL_S)
                done = time.monotonic() - saved
                if found is None:
                    raise RuntimeError(f"edit {n} never became keyword-searchable")
                keyword.append(round(found, 3))
                vector.append(round(done, 3))
                print(f"edit {n}: keyword {found:.2f}s, vector {done:.2f}s", file=sys.stderr)
                wait_for_line(proc, "run", timeout=120)  # its run has ended
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(work, ignore_errors=True)
    return {
        "edits": edits,
        "keyword_s": keyword,
        "vector_s": vector,
        "keyword_median_s": statistics.median(keyword),
        "keyword_max_s": max(keyword),
        "vector_median_s": statistics.median(vector),
        "vector_max_s": max(vector),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=ROOT / "data" / "sample" / "guides")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        parser.error(f"{args.corpus}: not a directory")
    load_before = os.getloadavg()
    result = measure(args.corpus, args.edits)
    result["load_average"] = [round(x, 2) for x in (*load_before, *os.getloadavg())]
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"{args.edits} edits: keyword hit after {result['keyword_median_s']:.2f} s "
            f"(max {result['keyword_max_s']:.2f}), vector after {result['vector_median_s']:.2f} s "
            f"(max {result['vector_max_s']:.2f}); load average {result['load_average']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
