"""`python -m chunkers PATH... [--json | --summary]`: show the chunks a corpus produces.

Exit codes: 0 everything parsed, 1 some records were rejected (the good ones are still
printed), 2 usage errors (no such path, bad option values).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from chunkers.model import Chunk, Reject
from chunkers.parallel import ChunkSizes
from chunkers.pipeline import chunk_document, screen
from chunkers.sources.discovery import SourceError, discover
from chunkers.sources.reading import Defaults, read_all
from core.cli import EXIT_FAILURE, EXIT_USAGE, error_exit
from core.embedding.model_files import tokenizer_source
from core.embedding.models import ModelNotFound
from core.settings import Settings, SettingsError
from core.tokens import TokenizerNotFound, counter_for_model

SNIPPET_CHARS = 160


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m chunkers",
        description="Chunk and tag JSONL corpora and directories of code and prose.",
    )
    parser.add_argument("paths", nargs="+", help="JSONL files, globs or directories")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="one JSON object per chunk per line")
    out.add_argument("--summary", action="store_true", help="counts only")
    parser.add_argument("--source", help="source for records that do not name one")
    parser.add_argument("--domain", help="domain for records that do not name one")
    parser.add_argument("--max-tokens", type=int, help="hard token limit per chunk")
    parser.add_argument("--target-tokens", type=int, help="target tokens per chunk")
    parser.add_argument("--rejects", type=Path, help="where to write rejects (JSONL)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env(
            chunk_max_tokens=args.max_tokens, chunk_target_tokens=args.target_tokens
        )
        # No tokenizer: a usage error, up front (the default model's is fetched first).
        counter_for_model(str(tokenizer_source(settings).directory))
        skipped: Counter[str] = Counter()
        sources = discover(args.paths, skipped)
    except (SettingsError, SourceError, TokenizerNotFound) as exc:
        return error_exit(exc, EXIT_USAGE)
    except ModelNotFound as exc:
        return error_exit(exc, EXIT_FAILURE)
    started = time.perf_counter()
    read = read_all(
        sources,
        Defaults(args.source, args.domain, max_document_bytes=settings.max_document_bytes),
    )
    cfg = ChunkSizes.from_settings(settings).config()
    chunks: list[Chunk] = []
    results, rejected = screen(
        [chunk_document(doc, cfg) for doc in read.documents], settings.max_chunks_per_document
    )
    read.rejects.extend(reject for _, reject in rejected)
    for result in results:
        for warning in result.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        if args.json:
            for chunk in result.chunks:
                sys.stdout.write(json.dumps(chunk.to_dict(), ensure_ascii=False) + "\n")
        elif not args.summary:
            for chunk in result.chunks:
                print(render(chunk))
        chunks.extend(result.chunks)
    seconds = time.perf_counter() - started
    if args.summary:
        print(summarize(len(sources), len(read.documents), chunks, read.rejects, seconds))
        if skipped:
            shown = sorted(skipped.items(), key=lambda item: (-item[1], item[0]))
            print("skipped by type: " + ", ".join(f"{n} {kind}" for kind, n in shown))
    if read.rejects:
        path = args.rejects or settings.data_dir / "runs" / _run_name() / "rejects.jsonl"
        write_rejects(path, read.rejects)
        for reject in read.rejects:
            print(f"rejected: {reject}", file=sys.stderr)
        print(f"{len(read.rejects)} record(s) rejected; details in {path}", file=sys.stderr)
        return 1
    return 0


def render(chunk: Chunk) -> str:
    where = chunk.path or chunk.doc_id
    lines = f":{chunk.start_line}-{chunk.end_line}" if chunk.start_line else ""
    label = chunk.symbol or chunk.context or chunk.title or ""
    versions = ""
    if chunk.ios_version_min or chunk.ios_version_max:
        versions = f" iOS {chunk.ios_version_min or '…'}–{chunk.ios_version_max or ''}"
    if chunk.deprecated:
        versions += f" deprecated{' ' + chunk.deprecated_in if chunk.deprecated_in else ''}"
    frameworks = f" [{', '.join(chunk.framework_tags)}]" if chunk.framework_tags else ""
    snippet = " ".join(chunk.content.split())[:SNIPPET_CHARS]
    return (
        f"{where}{lines}  {chunk.chunk_type}/{chunk.kind or '-'}  {label}"
        f"  ({chunk.token_count} tok){versions}{frameworks}\n    {snippet}"
    )


def summarize(
    files: int, documents: int, chunks: list[Chunk], rejects: list[Reject], seconds: float
) -> str:
    by_type = Counter(c.chunk_type for c in chunks)
    by_language = Counter(c.language for c in chunks)
    tokens = sorted(c.token_count for c in chunks)
    median = tokens[len(tokens) // 2] if tokens else 0
    lines = [
        f"files: {files}  documents: {documents}  chunks: {len(chunks)}  "
        f"rejected: {len(rejects)}  ({seconds:.2f} s)",
        "chunk types: " + ", ".join(f"{k} {v}" for k, v in sorted(by_type.items())),
        "languages: " + ", ".join(f"{k} {v}" for k, v in sorted(by_language.items())),
        f"tokens per chunk: median {median}, max {tokens[-1] if tokens else 0}",
        f"tagged: {sum(1 for c in chunks if c.ios_version_min)} with an iOS minimum, "
        f"{sum(1 for c in chunks if c.deprecated)} deprecated, "
        f"{sum(1 for c in chunks if c.framework_tags)} with frameworks, "
        f"{sum(1 for c in chunks if c.swift_version)} with a Swift version",
    ]
    return "\n".join(lines)


def write_rejects(path: Path, rejects: list[Reject]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for reject in rejects:
            handle.write(json.dumps(reject.to_dict(), ensure_ascii=False) + "\n")


def _run_name() -> str:
    return "chunks-" + datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


if __name__ == "__main__":
    sys.exit(main())
