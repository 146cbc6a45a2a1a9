"""BEIR-format data: `corpus.jsonl` (`_id`, `title`, `text`), `queries.jsonl` (`_id`, `text`)
and `qrels/<split>.tsv` (header, then query-id, corpus-id, score).

A set may instead judge a directory of files (`corpus_dir`, e.g. the Swift documentation):
its corpus ids are the files' paths relative to that directory, which is what a directory
ingest records as each chunk's path."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class DatasetError(ValueError):
    """The dataset directory is not usable BEIR data; the message names the file."""


@dataclass
class BeirData:
    name: str
    corpus: dict[str, tuple[str, str]]  # doc id -> (title, text)
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]  # query id -> doc id -> grade
    corpus_dir: Path | None = None  # files instead of corpus.jsonl
    # query id -> the text fields of its metadata (a question's kind, style, level, ...)
    labels: dict[str, dict[str, str]] = field(default_factory=dict)

    def judged_queries(self) -> list[str]:
        """Queries with a relevant judgement and a text, in qrels order (BEIR evaluates
        exactly these)."""
        return [
            q
            for q, docs in self.qrels.items()
            if q in self.queries and any(g > 0 for g in docs.values())
        ]


def load_beir(
    directory: Path, split: str, corpus_dir: Path | None = None, *, with_corpus: bool = True
) -> BeirData:
    """The set's queries and judgements, and its corpus unless `with_corpus` is False (an
    index already built from it is evaluated) or `corpus_dir` stands in for it."""
    corpus_file, queries_file = directory / "corpus.jsonl", directory / "queries.jsonl"
    qrels_file = directory / "qrels" / f"{split}.tsv"
    read_corpus = with_corpus and corpus_dir is None
    needed = (corpus_file, queries_file, qrels_file) if read_corpus else (queries_file, qrels_file)
    for path in needed:
        if path == qrels_file and not path.is_file() and (directory / "qrels").is_dir():
            splits = sorted(p.stem for p in (directory / "qrels").glob("*.tsv"))
            raise DatasetError(
                f"{directory} has no split {split!r} ({path} not found); its splits: "
                + (", ".join(splits) or "none")
            )
        if not path.is_file():
            raise DatasetError(
                f"{path} not found (BEIR layout: corpus.jsonl, queries.jsonl, qrels/<split>.tsv)"
            )
    if corpus_dir is not None and not corpus_dir.is_dir():
        raise DatasetError(f"corpus directory {corpus_dir} not found")
    corpus = (
        {
            str(r["_id"]): (str(r.get("title") or ""), str(r.get("text") or ""))
            for r in _jsonl(corpus_file)
        }
        if read_corpus
        else {}
    )
    queries, labels = {}, {}
    for r in _jsonl(queries_file):
        queries[str(r["_id"])] = str(r.get("text") or "")
        meta = r.get("metadata")
        if isinstance(meta, dict):
            labels[str(r["_id"])] = {k: v for k, v in meta.items() if isinstance(v, str)}
    qrels: dict[str, dict[str, int]] = {}
    with qrels_file.open(encoding="utf-8", newline="") as handle:
        rows = csv.reader(handle, delimiter="\t")
        header = next(rows, None)
        if header is None or header[:2] != ["query-id", "corpus-id"]:
            raise DatasetError(f"{qrels_file}: expected the header query-id, corpus-id, score")
        for number, row in enumerate(rows, start=2):
            if not row:
                continue
            try:
                qid, did, grade = row[0], row[1], int(row[2])
            except (IndexError, ValueError):
                raise DatasetError(f"{qrels_file}:{number}: malformed row {row!r}") from None
            qrels.setdefault(qid, {})[did] = grade
    return BeirData(directory.resolve().name, corpus, queries, qrels, corpus_dir, labels)


def _jsonl(path: Path) -> Iterable[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{number}: {exc.msg}") from None
            if not isinstance(record, dict) or "_id" not in record:
                raise DatasetError(f"{path}:{number}: expected an object with an _id")
            yield record
