"""Where an ingest writes and with which defaults: one value, built once by whoever starts
the ingest (the ingest CLI, a deployment's corpus or backfill request, the evaluation) and
carried unchanged through the flow, the ingest and the watcher."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class IngestTarget:
    """The index of the store to write, the domain and source given to records that name
    none, whether every document is chunked and embedded again (`force`), and the folders
    every file read must lie in, links followed (`within`; empty: anywhere, as a person
    names them; chunkers/sources/paths.py), and whether the vector phase waits for
    `rag-retrieve embed` (`defer_vectors`)."""

    index: str = "default"
    store: str | None = None  # a directory or a TiDB DSN; None: the settings' store
    domain: str | None = None
    source: str | None = None
    force: bool = False
    within: tuple[str, ...] = ()
    # `--vectors later`: stop after the lexical phase; `rag-retrieve embed` runs the vector
    # phase.
    defer_vectors: bool = False
    # Where a fetched DocC site's pages open (chunkers/sources/web/site.py's base_url): the
    # URL of its pages; None: RAG_DOCC_BASE_URL, else archive-relative paths.
    docc_base_url: str | None = None

    def unforced(self) -> IngestTarget:
        """The same target without `force`: a watch forces its first run only."""
        return replace(self, force=False)
