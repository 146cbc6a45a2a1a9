"""Assemble the vision-camera-eval corpus: react-native-vision-camera 5.2.3's `ios/` and `src/`.

    python bench/vision-camera-eval/corpus.py --out DIR

Fetches the package from the npm registry into DIR/download (bench/navigation.py's `fetch`:
`npm pack react-native-vision-camera@5.2.3`, checked against the pinned sha512, extracted
to DIR/download/package), then copies its Swift sources (`ios/`) and its TypeScript API and
Nitro specs (`src/`) to DIR/corpus (bench/react-native-eval/corpus.py's `assemble`: copies,
not symlinks; a second run reuses the download and leaves a complete copy alone). Prints
the corpus path. The qrels name files by their path relative to DIR/corpus.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1]
PACKAGE = "react-native-vision-camera"
VERSION = "5.2.3"
# The registry's `dist.integrity` of that version (`npm view react-native-vision-camera@5.2.3
# dist.integrity`).
INTEGRITY = "sha512-OHjgM8BPzxppTqbF1FEltj+fxvisj4xdghM7ypoT1p6cOe28HByhOJP1c7LkBiUiZuotbsdbQwGdJ8nU7ZvPzA=="
TREES = ("ios", "src")


def _load(path: Path, name: str) -> ModuleType:
    """A bench script imported by path (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assemble(out: Path) -> Path:
    """DIR/corpus with copies of the package's ios/ and src/; returns its path."""
    navigation = _load(BENCH / "navigation.py", "vc_eval_navigation")
    react_native = _load(BENCH / "react-native-eval" / "corpus.py", "vc_eval_rn_corpus")
    return react_native.assemble(
        out, lambda work: navigation.fetch(work, PACKAGE, VERSION, INTEGRITY), TREES
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="download and corpus go here")
    args = parser.parse_args(argv)
    print(assemble(args.out.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
