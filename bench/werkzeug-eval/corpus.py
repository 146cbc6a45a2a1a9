"""Assemble the werkzeug-eval corpus: Werkzeug 3.1.3's `src/` (the library) and `tests/`.

    python bench/werkzeug-eval/corpus.py --out DIR

Fetches the sdist from PyPI into DIR/download (bench/eval_corpus.py's `fetch_sdist`:
`pip download --no-deps --no-binary :all: werkzeug==3.1.3`, checked against the pinned
sha256, extracted under DIR/download/package), then copies its two trees to DIR/corpus/src
and DIR/corpus/tests (copies, not symlinks, so the corpus is a plain directory). Prints the
corpus path. Idempotent: a second run reuses the download and leaves a tree whose files
(paths and sizes) match the package's as it is; any other tree is copied again.
The qrels name files by their path relative to DIR/corpus.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

EVAL_CORPUS = Path(__file__).resolve().parents[1] / "eval_corpus.py"
PACKAGE, VERSION = "werkzeug", "3.1.3"
# sha256 of werkzeug-3.1.3.tar.gz as `pip download` fetched it from PyPI (hashlib).
SHA256 = "60723ce945c19328679790e3282cc758aa4a6040e4bb330f53d30fa546d44746"
TREES = ("src", "tests")


def _eval_corpus() -> ModuleType:
    """bench/eval_corpus.py, imported by path (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location("werkzeug_eval_corpus", EVAL_CORPUS)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import {EVAL_CORPUS}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assemble(out: Path) -> Path:
    """DIR/corpus with copies of the sdist's src/ and tests/; returns its path."""
    shared = _eval_corpus()
    download = out / "download"
    download.mkdir(parents=True, exist_ok=True)
    package = shared.fetch_sdist(PACKAGE, VERSION, SHA256, download)
    return shared.copy_trees(package, out / "corpus", TREES)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="download and corpus go here")
    args = parser.parse_args(argv)
    print(assemble(args.out.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
