"""Where an embedded index's bytes go: each table and index of the SQLite file (SQLite's
`dbstat`), the saved keyword postings beside it, and bytes per chunk.

    .venv/bin/python bench/index_size.py PATH.sqlite [--json]

The total is what the index holds on disk: the SQLite file, its WAL if any, and the saved
keyword postings (`PATH.sqlite-keywords`), which a long-lived process writes.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.store.sqlite.keyword import KEYWORDS_SUFFIX  # noqa: E402


def measure(path: Path) -> dict[str, Any]:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        parts = dict(
            conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC")
        )
        content = conn.execute(
            "SELECT sum(length(CAST(content AS BLOB))), count(*) FILTER "
            "(WHERE typeof(content) = 'blob') FROM chunks"
        ).fetchone()
    finally:
        conn.close()
    files = {
        "sqlite": path.stat().st_size,
        "wal": _size(Path(f"{path}-wal")),
        "keyword_postings": _size(Path(f"{path}{KEYWORDS_SUFFIX}")),
    }
    total = sum(files.values())
    per = max(chunks, 1)
    return {
        "path": str(path),
        "chunks": chunks,
        "total_bytes": total,
        "bytes_per_chunk": round(total / per, 1),
        "files": files,
        "tables_bytes_per_chunk": {name: round(size / per, 1) for name, size in parts.items()},
        "stored_content_bytes_per_chunk": round((content[0] or 0) / per, 1),
        "compressed_rows": content[1],
    }


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("index", type=Path, help="an index file (.sqlite)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    if not args.index.is_file():
        parser.error(f"no index file at {args.index}")
    report = measure(args.index)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"{report['path']}: {report['chunks']:,} chunks, {report['total_bytes'] / 1e9:.3f} GB, "
        f"{report['bytes_per_chunk']:,.0f} bytes per chunk"
    )
    for name, size in report["files"].items():
        print(f"  file {name:<28} {size / 1e9:8.3f} GB")
    for name, per_chunk in report["tables_bytes_per_chunk"].items():
        print(f"  {name:<33} {per_chunk:8.1f} bytes per chunk")
    print(
        f"  stored chunk text                 {report['stored_content_bytes_per_chunk']:8.1f} "
        f"bytes per chunk ({report['compressed_rows']:,} rows compressed)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
