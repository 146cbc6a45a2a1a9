"""Assemble the react-native-eval corpus: React Native 0.76.5's `React/` and `Libraries/`.

    python bench/react-native-eval/corpus.py --out DIR

Fetches the package from the npm registry into DIR/download (bench/navigation.py's
`fetch`: `npm pack react-native@0.76.5`, checked against the pinned sha512, extracted to
DIR/download/package), then copies its two source trees to DIR/corpus/React and
DIR/corpus/Libraries (copies, not symlinks, so the corpus is a plain directory). Prints the
corpus path. Idempotent: a second run reuses the download and leaves a tree whose files
(paths and sizes) match the package's as it is; any other tree is copied again.
The qrels name files by their path relative to DIR/corpus.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

NAVIGATION = Path(__file__).resolve().parents[1] / "navigation.py"
TREES = ("React", "Libraries")


def _navigation() -> ModuleType:
    """bench/navigation.py, imported by path (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location("rn_eval_navigation", NAVIGATION)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import {NAVIGATION}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _manifest(tree: Path) -> set[tuple[str, int]]:
    """(relative path, size) of every file under `tree`: enough to tell a complete copy."""
    return {(str(p.relative_to(tree)), p.stat().st_size) for p in tree.rglob("*") if p.is_file()}


def assemble(
    out: Path, fetch: Callable[[Path], Path] | None = None, trees: tuple[str, ...] = TREES
) -> Path:
    """DIR/corpus with copies of the package's `trees` (React/ and Libraries/ unless another
    set's corpus.py names its own package and trees); returns its path."""
    download = out / "download"
    download.mkdir(parents=True, exist_ok=True)
    package = (fetch or _navigation().fetch)(download)
    corpus = out / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for name in trees:
        source, target = package / name, corpus / name
        if not source.is_dir():
            raise SystemExit(f"{source} not found in the package")
        if target.is_dir() and not target.is_symlink():
            if _manifest(target) == _manifest(source):
                continue  # already assembled
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
        partial = corpus / f".{name}.partial"
        if partial.exists():
            shutil.rmtree(partial)
        shutil.copytree(source, partial, symlinks=False)
        partial.rename(target)
    return corpus


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="download and corpus go here")
    args = parser.parse_args(argv)
    print(assemble(args.out.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
