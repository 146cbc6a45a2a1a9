"""The contract every index store honours (embedded SQLite, TiDB).

Loaders write through `IndexStore.apply`; the query side reads through the search and fetch
methods. One contract test suite runs against every implementation.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

import numpy as np
import pyarrow as pa

from core.store.errors import InvalidLocation as InvalidLocation
from core.store.errors import SchemaOutdated as SchemaOutdated
from core.store.errors import StoreError as StoreError
from core.store.filters import SearchFilter

# Arrow schema of the chunk rows a loader hands to a store. Lists and dicts that have no
# natural column type travel as JSON text.
CHUNK_SCHEMA = pa.schema(
    [
        ("chunk_id", pa.string()),
        ("doc_id", pa.string()),
        ("chunk_index", pa.int32()),
        ("content", pa.string()),
        ("context", pa.string()),
        ("chunk_type", pa.string()),
        ("language", pa.string()),
        ("source", pa.string()),
        ("domain", pa.string()),
        ("token_count", pa.int32()),
        ("content_hash", pa.string()),
        ("path", pa.string()),
        ("title", pa.string()),
        ("url", pa.string()),
        ("symbol", pa.string()),
        ("kind", pa.string()),
        ("start_line", pa.int32()),
        ("end_line", pa.int32()),
        ("ios_version_min", pa.string()),
        ("ios_version_max", pa.string()),
        ("ios_version_min_int", pa.int32()),
        ("ios_version_max_int", pa.int32()),
        ("swift_version", pa.string()),
        ("swift_version_int", pa.int32()),
        ("deprecated", pa.bool_()),
        ("deprecated_in", pa.string()),
        ("deprecated_in_int", pa.int32()),
        ("platforms", pa.string()),  # JSON
        ("framework_tags", pa.list_(pa.string())),
        ("imports", pa.list_(pa.string())),
        ("attributes", pa.list_(pa.string())),
        ("last_verified", pa.string()),
        ("metadata", pa.string()),  # JSON
    ]
)

# What the code of each chunk declares and uses (chunkers.code.references.Reference), one
# row each, in the index's references table: written in the transaction that writes the
# chunk and deleted with it. `role` is "definition" or the kind of use; `scope` the type a
# definition belongs to, or the declaration a use is made in.
REFERENCE_SCHEMA = pa.schema(
    [
        ("chunk_id", pa.string()),
        ("doc_id", pa.string()),
        ("name", pa.string()),
        ("role", pa.string()),
        ("kind", pa.string()),
        ("line", pa.int32()),
        ("end_line", pa.int32()),
        ("scope", pa.string()),
        ("qualifier", pa.string()),
    ]
)
# What a read of the references table returns per row: REFERENCE_SCHEMA and the chunk's path.
REFERENCE_COLUMNS = (*REFERENCE_SCHEMA.names, "path")

# Chunk columns stored as JSON text by both stores.
LIST_COLUMNS = ("framework_tags", "imports", "attributes")
DICT_COLUMNS = ("platforms", "metadata")


# The JSON columns repeat a few values across chunks ('[]', '["SwiftUI"]'): decoding each
# distinct text once was ~2 ms of every query's fetch of 100 rows. Bounded, and cleared when
# full, so odd metadata cannot grow it without limit.
_DECODED: dict[str, Any] = {}
_DECODED_MAX = 4096


def _json_list(text: str | None) -> list[Any]:
    if not text:
        return []
    value = _DECODED.get(text)
    if value is None:
        value = json.loads(text)
        value = tuple(value) if isinstance(value, list) else value
        if len(_DECODED) >= _DECODED_MAX:
            _DECODED.clear()
        _DECODED[text] = value
    return list(value) if isinstance(value, tuple) else value


def decode_chunk_row(names: list[str], row: tuple[Any, ...]) -> dict[str, Any]:
    """A stored chunk row (column names, values) as the dict `fetch` returns."""
    out = dict(zip(names, row, strict=True))
    for name in LIST_COLUMNS:
        out[name] = _json_list(out[name])
    for name in DICT_COLUMNS:
        # Dicts may nest, so they are decoded afresh: a shared one could be mutated.
        text = out[name]
        out[name] = json.loads(text) if text and text != "{}" else {}
    out["deprecated"] = bool(out["deprecated"])
    return out


# What fusion reads of every candidate (`IndexStore.fetch_light`): the fields of its boosts
# and demotion (query.retrieval.boosts.adjust), the text_key it deduplicates by
# (core/store/text_key.py) and the doc_id fusion ranks documents by
# (query.retrieval.fusion.document_standing), without the text. A query fetches the whole
# rows (`fetch`) only of the candidates it shows or reads the text of.
FUSION_COLUMNS = (
    "chunk_id",
    "symbol",
    "framework_tags",
    "deprecated",
    "deprecated_in_int",
    "metadata",
    "text_key",
    "doc_id",
)


def decode_fusion_row(row: tuple[Any, ...]) -> dict[str, Any]:
    """A stored FUSION_COLUMNS row as the dict `fetch_light` returns (JSON decoded as `fetch`
    decodes it; text_key None for a row stored without one)."""
    chunk_id, symbol, tags, deprecated, deprecated_in_int, metadata, key, doc_id = row
    if isinstance(metadata, str):
        metadata = json.loads(metadata) if metadata and metadata != "{}" else {}
    return {
        "chunk_id": chunk_id,
        "symbol": symbol,
        "framework_tags": tags if isinstance(tags, list) else _json_list(tags),
        "deprecated": bool(deprecated),
        "deprecated_in_int": deprecated_in_int,
        "metadata": metadata or {},
        "text_key": key,
        "doc_id": doc_id,
    }


DOCUMENT_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("source_path", pa.string()),
        ("content_hash", pa.string()),
        ("mtime", pa.float64()),
        ("last_verified", pa.string()),
        ("metadata", pa.string()),  # JSON
    ]
)


class ModelMismatch(StoreError):
    """Vectors from a different model than the index was built with."""


def precisions_of(recorded: str | None) -> tuple[str, ...]:
    """The precisions an index's record names; none recorded means fp32 (every index from
    before precisions were recorded was embedded in fp32)."""
    return tuple(sorted(set((recorded or "fp32").split("+"))))


class UnknownIndex(StoreError):
    """No index of that name in the store."""


@dataclass(frozen=True)
class DocState:
    content_hash: str
    mtime: float | None
    source_path: str | None
    last_verified: str | None


@dataclass
class LoadBatch:
    """One atomic change: every document in `documents` has its chunks replaced by the rows
    of `chunks` with that doc_id; every id in `delete_doc_ids` disappears with its chunks."""

    documents: pa.Table  # DOCUMENT_SCHEMA
    chunks: pa.Table  # CHUNK_SCHEMA
    # float32, shape (len(chunks), dim), L2-normalised, row-aligned. None: the chunks are
    # loaded without vectors (an ingest's lexical phase); they stay pending until
    # `put_vectors` gives them theirs.
    vectors: np.ndarray | None
    delete_doc_ids: list[str] = field(default_factory=list)
    # doc_id -> mtime of its source file, set in the same transaction. A loader stamps the
    # documents of a file only with the batch that completes the file: documents are written
    # with no mtime, so a run killed half-way through a file leaves it looking unread, and
    # the mtime fast path cannot skip the records that never reached the index.
    stamp_mtimes: dict[str, float] = field(default_factory=dict)
    # REFERENCE_SCHEMA rows of the chunks in `chunks` (none for a batch of prose).
    references: pa.Table = field(default_factory=REFERENCE_SCHEMA.empty_table)


@dataclass(frozen=True)
class PendingChunk:
    """A chunk the index holds without a vector: what an ingest's vector phase embeds."""

    chunk_id: str
    doc_id: str
    # sha256 of context and content (chunkers/pipeline.py): `put_vectors` writes a vector
    # only to a chunk that still holds the text it was computed from.
    content_hash: str
    context: str | None
    content: str
    language: str | None


@dataclass(frozen=True)
class ShardMark:
    """A shard of a sharded vector phase (loaders/shards.py) as its ledger row names it: its
    id (a hash of the model identity and its content keys) and the attempts it took."""

    shard_id: str
    attempts: int = 1


@dataclass(frozen=True)
class LoadResult:
    documents_written: int
    chunks_written: int
    chunks_deleted: int
    documents_deleted: int


class PageLinkRow(NamedTuple):
    """A published page's link whose target is in the index (IndexStore.document_links)."""

    chunk_id: str  # the chunk that names the target
    doc_id: str  # its page
    relation: str  # parent, topic, see_also, relationship, mention
    title: str
    target: str  # the first chunk of the target page


@dataclass(frozen=True)
class Declaration:
    """A code chunk's declaration: a link target for the chunks that use its name."""

    symbol: str
    kind: str  # class, struct, extension, function, method, ... ("" when unknown)
    doc_id: str
    chunk_id: str


class Hit(NamedTuple):
    """One search result. A named tuple, not a frozen dataclass: a query makes ~100 of them,
    and a frozen dataclass costs ~1.3 µs each to build (object.__setattr__ per field), a
    named tuple ~0.3 µs."""

    chunk_id: str
    score: float  # cosine similarity (vector) or BM25 score (higher is better)
    # The chunk's text_key (core/store/text_key.py) where the search had it at hand (the
    # embedded store's in-memory searches and FTS5 do): fusion then deduplicates without
    # reading the row. None: unknown, and fusion reads it with `fetch_light`.
    text_key: int | None = None
    # The chunk's doc_id where the search had it at hand: fusion ranks documents by their
    # best chunk in each leg (query.retrieval.fusion.document_standing). None: unknown.
    doc_id: str | None = None


class IndexStore(Protocol):
    """One named index."""

    name: str
    # The last migration applied to it when the handle was opened (core/store/migrations.py).
    schema_version: int
    # Whether chunks may be loaded before a model is bound (`--vectors later` then loads no
    # model): SQLite keeps vectors in a table of their own; TiDB's chunk rows carry a vector
    # column whose type is the model's dimension.
    loads_before_binding: bool

    @property
    def model_id(self) -> str | None: ...

    @property
    def dim(self) -> int | None: ...

    def bind_model(
        self,
        model_id: str,
        dim: int,
        precision: str = "fp32",
        shares_with: Collection[str] = (),
    ) -> None:
        """Record the index's model and vector precision on first load; raise ModelMismatch
        on any other model, or on a precision outside `shares_with` (the precisions the
        caller's may share an index with: core/embedding/precision.py) while the index
        holds another."""

    def document_states(self) -> dict[str, DocState]: ...

    def apply(self, batch: LoadBatch) -> LoadResult: ...

    def mark_verified(self, doc_ids: list[str], when: str) -> int: ...

    def pending_vectors(self, after: str, limit: int) -> list[PendingChunk]:
        """Up to `limit` chunks that have no vector, in chunk_id order, each id after `after`
        ("" from the first): the pages an ingest's vector phase embeds."""

    def put_vectors(
        self,
        chunk_ids: list[str],
        content_hashes: list[str],
        vectors: np.ndarray,
        *,
        shard: ShardMark | None = None,
    ) -> int:
        """Give chunks their vectors (row-aligned, float32 (n, dim)) in one transaction:
        only those still in the index with that content hash and no vector yet, so that a
        page embedded while its document changed, or embedded twice, writes nothing wrong.
        With `shard`, the shard's done-record (the ledger of a sharded vector phase,
        loaders/shards.py) is written in the same transaction. Returns how many were
        written. Needs the model bound (`bind_model`)."""

    def record_shard_failure(self, shard: ShardMark, error: str) -> None:
        """Record a shard given up on, with its error; a shard recorded done stays done."""

    def shard_states(self, shard_ids: list[str]) -> dict[str, str]:
        """The ledger's state ("done" or "failed") of these shards; unrecorded ones are left
        out."""

    def without_vectors(self, chunk_ids: list[str]) -> set[str]:
        """Those of `chunk_ids` that the index holds without a vector (its vector phase has
        not reached them); unknown ids are left out."""

    def vector_search(self, query: np.ndarray, filt: SearchFilter, k: int) -> list[Hit]: ...

    def bm25_search(self, text: str, filt: SearchFilter, k: int) -> list[Hit]: ...

    def fetch(self, chunk_ids: list[str]) -> dict[str, dict[str, Any]]: ...

    def fetch_light(self, chunk_ids: list[str]) -> dict[str, dict[str, Any]]:
        """The FUSION_COLUMNS of chunks by id, decoded as `fetch` decodes them; unknown ids are
        left out. No text is read: what fusion needs of ~100 candidates to show ten."""

    def document_titles(self) -> list[tuple[str, str]]:
        """(title, chunk id of the document's first chunk) of every titled document."""

    def chunk_symbols(self) -> list[Declaration]:
        """Every chunk that declares a symbol."""

    def document_links(self) -> list[PageLinkRow]:
        """Every link a published page states (references of role `link`, named by the
        target's URL) whose target is in the index."""

    def references_named(self, names: list[str]) -> list[dict[str, Any]]:
        """Every definition and use of these names (REFERENCE_COLUMNS), in path and line
        order."""

    def references_in(self, path: str) -> list[dict[str, Any]]:
        """Every definition and use in the chunks of the file at `path` (REFERENCE_COLUMNS)."""

    def imports_of(self, doc_ids: list[str]) -> dict[str, list[str]]:
        """What each document imports (the names of its `import` rows, in line order), by
        doc_id; a document that imports nothing is left out."""

    def calls_in(self, scopes: list[tuple[str, str]]) -> list[dict[str, Any]]:
        """The `call` and `send` rows made inside declarations, each given as (doc_id, its
        qualified name, the `scope` of what is inside it) (REFERENCE_COLUMNS), in path and
        line order."""

    def definitions_named(self, names: list[str]) -> list[dict[str, Any]]:
        """The `definition` rows of these names, not their uses (REFERENCE_COLUMNS), in path
        and line order."""

    def sample_chunk_ids(self, limit: int) -> list[str]:
        """Up to `limit` chunk ids spread over the index by content hash: the same ids while
        the chunks stay the same, whatever order they were loaded in."""

    def bm25_idf(self, chunks: int, containing: int) -> float:
        """The inverse document frequency this index's BM25 gives a term found in
        `containing` of its `chunks` chunks (core/store/bm25.py)."""

    def fusion_calibration(self) -> str | None:
        """The index's fusion calibration (JSON written by query/calibration), or None."""

    def record_fusion_calibration(self, record: str | None) -> None:
        """Store the index's fusion calibration (None clears it)."""

    def search_paths(self) -> dict[str, str]:
        """The paths this handle's last searches took, `keyword_path` and `vector_path`, each
        once that search has run (core/store/modes.py; the stats name the same two)."""

    def stats(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class Store(Protocol):
    """A collection of named indexes: a directory of SQLite files or a TiDB database."""

    location: str

    def list_indexes(self) -> list[str]: ...

    def open_index(self, name: str, *, create: bool = False, write: bool = False) -> IndexStore:
        """A handle on index `name`. Only a handle opened to write (`write`, or `create`,
        which also makes a missing index) may change the index, and it brings the index's
        schema up to date first; any other handle only reads, and raises SchemaOutdated on
        an index older than the code."""
        ...

    def drop_index(self, name: str) -> None: ...

    def check_index(self, name: str) -> list[str]:
        """What is wrong with the index's storage, [] when nothing is found."""


@dataclass(frozen=True)
class HybridHits:
    """Both signals of one query variant from one round trip: what `vector_search` and
    `bm25_search` would return. Fusing them is the query side's job (query.retrieval.fusion), the
    same for every store."""

    vector: list[Hit]
    bm25: list[Hit]


class HybridSearch(Protocol):
    """Optional: a store that can run both signals of a variant in one request. The query
    side uses it when an index has it (duck typing) and falls back to the two searches."""

    def hybrid_search(
        self, query: np.ndarray, text: str, filt: SearchFilter, k: int
    ) -> HybridHits: ...
