"""How the embedded store searches and loads, chosen by whoever opens it and reported by it.

Three choices, each right for one kind of process, so they are made where the store is
opened (`core.store.open.open_store(..., modes=...)`, the query engine's `Engine.open`) and
never by what a process happened to do before:

- the keyword path: FTS5 answers a query in ~14 ms at 100k chunks and costs nothing to
  start; the in-memory postings (core/store/sqlite/keyword.py) answer the common words far
  faster but take seconds to load or build. So a one-shot command asks FTS5, and a process
  that answers many queries (the worker, the MCP server, eval, the benchmarks) keeps the
  postings, rebuilt in the background after a write while FTS5 answers with the same scores.
- the vector path: exact scores over every admitted row, or over a sign-code shortlist
  (core/store/sqlite/sign_codes.py) once an index has `shortlist_from` rows, where scoring
  every row costs more than the codes save.
- where a load batch's text is analysed: a child process takes most of a large batch while
  the writer inserts rows (core/store/sqlite/analysis_process.py), or this process does all.

A TiDB store has no such choices: its keyword and vector paths are properties of each index
(native full-text search or BM25 over a postings table; an HNSW index or an exact scan),
recorded when its model is bound, and it ignores these modes. Both report their paths in
their stats (`keyword_path`, `vector_path`) and after each search (`search_paths`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class KeywordPath(StrEnum):
    FTS5 = "fts5"
    POSTINGS = "postings"


class VectorPath(StrEnum):
    EXACT = "exact"
    SIGN_CODES = "sign-codes"  # exact scores over a sign-code shortlist


class AnalysisSite(StrEnum):
    CHILD = "child"  # batches of at least MIN_OFFLOAD_CHARS of text: mostly in a child
    IN_PROCESS = "in-process"


# Below this many rows exact scoring costs about as much as the shortlist, and is exact
# (bench/README.md, *Vector search*; bench/vectors.py).
SHORTLIST_FROM = 20_000


@dataclass(frozen=True)
class StoreModes:
    keyword: KeywordPath = KeywordPath.FTS5
    # Rows from which an index's vectors get sign codes and a shortlist; None: always exact.
    shortlist_from: int | None = SHORTLIST_FROM
    analysis: AnalysisSite = AnalysisSite.CHILD

    def vector_path(self, rows: int) -> VectorPath:
        """The vector path an index of `rows` vectors is searched by (a filter that leaves
        too few rows for a shortlist to pay is still scored exactly)."""
        if self.shortlist_from is not None and rows >= self.shortlist_from:
            return VectorPath.SIGN_CODES
        return VectorPath.EXACT


# A command that asks one question and exits (`python -m query "..."`, status, doctor) and
# the writers (ingest, refresh, backfill), which search nothing.
ONE_SHOT = StoreModes()
# A process that answers many queries: the worker, the MCP server, eval, the benchmarks.
LONG_LIVED = StoreModes(keyword=KeywordPath.POSTINGS)
