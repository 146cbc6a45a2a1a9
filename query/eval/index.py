"""The throwaway index an evaluation searches: every corpus record one document, read as a
line of a user's JSONL file is read (or, for a set that judges a directory, every file read
as a directory ingest reads it), chunked, embedded and loaded by the same ingestion code as
every other index. The one module of the
query side that imports ingestion (.importlinter names it)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from chunkers.code.python import parse_python
from chunkers.model import Document
from chunkers.sources.discovery import discover
from chunkers.sources.reading import Defaults, ReadResult, parse_record, read_all
from core.settings import Settings
from core.store.contract import IndexStore, Store
from loaders.ingest import ingest_documents
from query.calibration.calibrate import Calibration
from query.eval.beir import BeirData
from query.eval.metrics import unique_ranking

SOURCE = "beir"
CORPUS_FILE = "corpus.jsonl"


def looks_like_python(text: str) -> bool:
    """Function or class source (CoSQA): give it to the Python chunker, as ingest would a
    .py file; anything else is prose."""
    if not text.lstrip().startswith(("def ", "async def ", "class ", "@")):
        return False
    try:
        parse_python(text)
    except (SyntaxError, ValueError):
        return False
    return True


def corpus_line(doc_id: str, title: str, text: str) -> bytes:
    """A BEIR record as a user's JSONL corpus would hold it (docs/ingestion.md): `id`,
    `title`, `text`, and the `language` a user names for source code; no `path`, as Apple
    documentation and WWDC transcripts have none."""
    record: dict[str, str] = {"id": doc_id, "text": text if text.strip() else title}
    if title:
        record["title"] = title
    if looks_like_python(text):
        record["language"] = "python"
    return json.dumps(record, ensure_ascii=False).encode()


def read_corpus(corpus: dict[str, tuple[str, str]], defaults: Defaults) -> ReadResult:
    """The corpus read exactly as the lines of a user's JSONL file are read (`parse_record`):
    each document is named by its `id`, the BEIR id the judgements name."""
    read = ReadResult()
    for line, (doc_id, (title, text)) in enumerate(corpus.items(), start=1):
        item = parse_record(corpus_line(doc_id, title, text), CORPUS_FILE, line, defaults, None)
        if isinstance(item, Document):
            read.documents.append(item)
        else:
            read.rejects.append(item)
    return read


def to_document(doc_id: str, title: str, text: str) -> Document:
    """One record as `read_corpus` reads it (the benchmarks embed the evaluation's texts)."""
    read = read_corpus({doc_id: (title, text)}, Defaults(source=SOURCE))
    if read.rejects:
        raise ValueError(str(read.rejects[0]))
    return read.documents[0]


def index_name(dataset: str) -> str:
    return "eval-" + (re.sub(r"[^a-z0-9_-]+", "-", dataset.lower()).strip("-") or "data")


def build_index(
    data: BeirData, index: IndexStore, settings: Settings, embedder: Any, log: Callable
) -> dict[str, Any]:
    """Chunk, embed (through the cache) and load the documents that are new or changed,
    with the same ingestion code as every other index (`loaders.ingest`); the summary."""
    defaults = Defaults(source=SOURCE, max_document_bytes=settings.max_document_bytes)
    if data.corpus_dir is not None:
        read = read_all(discover([data.corpus_dir]), defaults)
        paths = {str(doc.path) for doc in read.documents}
        unknown = sorted({d for judged in data.qrels.values() for d in judged} - paths)
        if unknown:
            log(f"warning: {len(unknown)} judged file(s) not in {data.corpus_dir}: {unknown[:3]}")
    else:
        read = read_corpus(data.corpus, defaults)
    for reject in read.rejects[:5]:
        log(f"rejected: {reject}")
    summary = ingest_documents(read.documents, index, settings, embedder=embedder)
    return {
        "documents": len(read.documents),
        "rejected": len(read.rejects),
        "reused": summary.docs_unchanged,
        "chunks": index.stats().get("chunks"),
        "embedded": summary.chunks_embedded,
        "cache_hits": summary.embedding_cache_hits,
    }


def build_in_store(
    data: BeirData,
    store: Store,
    name: str,
    settings: Settings,
    embedder: Any,
    log: Callable,
) -> dict[str, Any]:
    """`build_index` into the store's index `name` (created if new), timed and logged."""
    target = store.open_index(name, create=True)
    started = time.perf_counter()
    try:
        built = build_index(data, target, settings, embedder, log)
    finally:
        target.close()
    built["seconds"] = round(time.perf_counter() - started, 1)
    log(f"index {name}: {json.dumps(built)}")
    return built


class Documents:
    """The judged ids of the results' documents: each chunk's doc_id read from the index
    (never its path, which a JSONL record need not have), or, `by_path` for a set that
    judges a directory of files, its path relative to the directory the index was ingested
    from (whether the evaluation built that index or an ingest did)."""

    def __init__(self, index: IndexStore, by_path: bool = False) -> None:
        self.index = index
        self.column = "path" if by_path else "doc_id"
        self._judged: dict[str, str] = {}  # chunk id → judged id, for every chunk seen

    def ranking(self, chunk_ids: Sequence[str]) -> list[str]:
        """The documents of the chunks in order, each once, where its best chunk ranks."""
        return unique_ranking(self.of(chunk_ids))

    def of(self, chunk_ids: Sequence[str]) -> list[str]:
        """The judged id of each chunk, in order (a chunk no longer stored stands for itself)."""
        missing = [c for c in dict.fromkeys(chunk_ids) if c not in self._judged]
        if missing:
            self._judged.update(
                (c, str(r[self.column])) for c, r in self.index.fetch(missing).items()
            )
        return [self._judged.get(c, c) for c in chunk_ids]


def calibration_report(index: IndexStore) -> dict[str, Any] | None:
    """The fusion decision the index's calibration recorded, as the evaluation reports it
    (so a held-out run sees what was chosen): the rule, whether the identifier floor and
    the usage floor apply, the confidence (RRF's mean gain over the adaptive rule in reciprocal rank and
    its one-sided 95 % lower bound), the pairs and the seconds it took; None if never
    calibrated (the default rule and floor apply)."""
    found = Calibration.from_json(index.fusion_calibration())
    if found is None:
        return None
    return {
        "rule": found.rule,
        "floor": found.floor,
        "usage_floor": found.usage_floor,
        "decided_by": found.decided_by,
        "gain": found.gain,
        "gain_low": found.gain_low,
        "gain_high": found.gain_high,
        "floor_pairs": found.floor_pairs,
        "floor_gain": found.floor_gain,
        "chunks_per_document": found.chunks_per_document,
        "prose_share": found.prose_share,
        "mrr": found.mrr,
        "pairs": found.pairs,
        "sources": found.sources,
        "seconds": found.seconds,
        "reason": found.reason,
        "at": found.at,
    }


def as_built(index: IndexStore) -> dict[str, Any]:
    """What an evaluation reports of an index built elsewhere (by an ingest): its size and
    its calibration's decision."""
    try:
        stats = index.stats()
        calibration = calibration_report(index)
    finally:
        index.close()
    built: dict[str, Any] = {
        "documents": stats.get("documents"),
        "chunks": stats.get("chunks"),
        "existing": True,
    }
    if calibration is not None:
        built["calibration"] = calibration
    return built
