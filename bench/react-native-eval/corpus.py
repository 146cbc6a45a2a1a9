"""Assemble the react-native-eval corpus: React Native 0.76.5's `React/` and `Libraries/`.

    python bench/react-native-eval/corpus.py --out DIR

Fetches the package from the npm registry into DIR/download (bench/navigation.py's
`fetch`: `npm pack react-native@0.76.5`, checked against the pinned sha512, extracted to
DIR/download/package), then copies its two source trees to DIR/corpus/React and
DIR/corpus/Libraries (copies, not symlinks, so the corpus is a plain directory). Prints the
corpus path. Idempotent: a second run reuses the download and leaves a tree whose files
(paths and sizes) match the package's as it is; any other tree is copied again
(bench/eval_corpus.py's `copy_trees`).
The qrels name files by their path relative to DIR/corpus.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1]
TREES = ("React", "Libraries")


def _bench(name: str) -> ModuleType:
    """bench/<name>.py, imported by path (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"rn_eval_{name}", BENCH / f"{name}.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import {BENCH / name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assemble(
    out: Path,
    fetch: Callable[[Path], Path] | None = None,
    trees: tuple[str, ...] = TREES,
) -> Path:
    """DIR/corpus with copies of the package's `trees` (React/ and Libraries/ unless another
    set names its own: bench/vision-camera-eval/corpus.py); returns its path."""
    download = out / "download"
    download.mkdir(parents=True, exist_ok=True)
    package = (fetch or _bench("navigation").fetch)(download)
    return _bench("eval_corpus").copy_trees(package, out / "corpus", trees)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="download and corpus go here")
    args = parser.parse_args(argv)
    print(assemble(args.out.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
