"""Assemble the fastify-docs-eval corpus: the Markdown documentation shipped in Fastify 5.12.8.

    python bench/fastify-docs-eval/corpus.py --out DIR

Fetches the package from the npm registry into DIR/download (bench/registry.py's `npm_fetch`:
`npm pack fastify@VERSION`, checked against the registry's pinned sha512, extracted to
DIR/download/package), then copies its documentation to DIR/corpus: the `docs/` tree (the
Reference and the Guides) and the Markdown files at the package's top (README.md,
SECURITY.md, ...). Copies, not symlinks, so the corpus is a plain directory of Markdown that
`python -m query.eval --corpus DIR/corpus` ingests as a user's directory is ingested. Prints
the corpus path. Idempotent: a second run reuses the download and leaves a complete copy
alone. The qrels name files by their path relative to DIR/corpus (`docs/Reference/Hooks.md`).
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

REGISTRY = Path(__file__).resolve().parents[1] / "registry.py"
PACKAGE = "fastify"
VERSION = "5.12.8"
# The registry's `dist.integrity` of that version (`npm view fastify@5.12.8 dist.integrity`).
INTEGRITY = "sha512-moP8exb2sCHLUbJkwp+I6C0padhy4D8lp0SdmzY7HhSdZuqm7O/u3o2aq7u8okaQ//33QDzj3G/u+FsSdB8Qzw=="


def _registry() -> ModuleType:
    """bench/registry.py, imported by path (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location("fastify_eval_registry", REGISTRY)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import {REGISTRY}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def documentation(package: Path) -> list[Path]:
    """The package's documentation files, relative to it: docs/**/*.md and the top's *.md."""
    pages = [p for p in (package / "docs").rglob("*.md") if p.is_file()]
    pages += [p for p in package.glob("*.md") if p.is_file()]
    return sorted(p.relative_to(package) for p in pages)


def assemble(out: Path) -> Path:
    """DIR/corpus with a copy of the package's documentation; returns its path."""
    download = out / "download"
    download.mkdir(parents=True, exist_ok=True)
    package = _registry().npm_fetch(download, PACKAGE, VERSION, INTEGRITY)
    pages = documentation(package)
    if not pages:
        raise SystemExit(f"no documentation found in {package}")
    corpus = out / "corpus"
    wanted = {str(p): (package / p).stat().st_size for p in pages}
    if corpus.is_dir():
        present = {
            str(p.relative_to(corpus)): p.stat().st_size for p in corpus.rglob("*") if p.is_file()
        }
        if present == wanted:
            return corpus  # already assembled
        shutil.rmtree(corpus)
    partial = out / ".corpus.partial"
    if partial.exists():
        shutil.rmtree(partial)
    for page in pages:
        (partial / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(package / page, partial / page)
    partial.rename(corpus)
    return corpus


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="download and corpus go here")
    args = parser.parse_args(argv)
    print(assemble(args.out.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
