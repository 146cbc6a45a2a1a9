"""Everything a query needs that is expensive to set up, loaded once and shared.

A CLI run builds one Engine per process; the worker keeps one warm for its lifetime, so the
embedding model, the reranker and the stores' in-memory vector matrices are loaded once.

Thread safety: index handles (SQLite connections, TiDB sessions) are pooled and lent to one
thread at a time through `checkout`; embedding and reranking each run under their own lock,
because torch models and HTTP clients with connection state are not safe to share mid-call
(and on two cores one inference at a time is as fast anyway). Every optional
part (embedder, reranker, LLM) is loaded lazily on first use; a part that fails to load is
remembered as None with a note, and queries go on without it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from core.embedding.model_files import tokenizer_source
from core.embedding.models import canonical_model_id
from core.settings import Settings
from core.store.contract import (
    IndexStore,
    InvalidLocation,
    SchemaOutdated,
    Store,
    StoreError,
    UnknownIndex,
)
from core.store.location import StoreLocation
from core.store.modes import StoreModes
from core.tokens import TokenCounter, counter_for_model

_UNSET: Any = object()
# Titles and symbols change only when an ingest writes the index; a warm worker re-reads them at most
# this often (one small query per index) instead of tracking generations.
TITLES_TTL_S = 60.0


class Engine:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        *,
        embedder: Any = _UNSET,
        reranker: Any = _UNSET,
        llm: Any = _UNSET,
        counter: TokenCounter | None = None,
        expander: Callable[..., Any] | None = None,
        corag_runner: Callable[..., Any] | None = None,
    ) -> None:
        """Parts given here (including None = "not available") are used as they are; parts
        left out are loaded from `settings` on first use."""
        self.settings = settings
        self.store = store
        self._embedder = embedder
        self._embedder_note: str | None = None
        self._reranker = reranker
        self._reranker_notes: list[str] = []
        self._llm = llm
        self._counter = counter
        # The model whose tokenizer the counter is, when loaded from settings; a given
        # counter's is unknown, so stored counts are not trusted for it.
        self._counter_model_id: str | None = None
        self._expander = expander
        self._corag_runner = corag_runner
        self._load_lock = threading.Lock()
        self._embed_lock = threading.Lock()
        self._rerank_lock = threading.Lock()
        self._pool_lock = threading.Lock()
        self._idle: dict[str, list[IndexStore]] = {}
        self._opened: list[IndexStore] = []
        # Parts given to __init__ belong to the caller (eval shares one embedder between
        # engines); the ones loaded here are this engine's to close.
        self._loaded: list[Any] = []
        self._titles: dict[tuple[str, str], tuple[float, Any]] = {}
        self._titles_lock = threading.Lock()

    @classmethod
    def open(cls, settings: Settings, location: str | None, *, modes: StoreModes) -> Engine:
        """The store at `location` (a directory or tidb:// URL; None = the configured one),
        searched as `modes` say (core/store/modes.py): ONE_SHOT for a process that answers
        one question, LONG_LIVED for one that answers many and warms the engine."""
        from core.store.open import open_store

        return cls(settings, open_store(location, settings, modes=modes))

    @property
    def location_with_credentials(self) -> str:
        """The store's location as opened, a TiDB URL's password included: for the child
        processes that must open the same store (query/mcp/ingest.py passes the password in
        their environment, not their argv), never to show. Shown: `shown_location`."""
        return str(getattr(self.store, "location", ""))

    @property
    def shown_location(self) -> str:
        """The store's location as answers, logs and messages show it: never a password."""
        try:
            return StoreLocation.parse(self.location_with_credentials).display
        except InvalidLocation:
            return self.location_with_credentials

    def serves(self, location: str) -> bool:
        """Whether `location` names this engine's store (directories compared resolved)."""
        try:
            theirs = StoreLocation.parse(location)
        except InvalidLocation:
            return False  # not a store at all, so not this one
        return theirs.same_as(StoreLocation.parse(self.location_with_credentials))

    # Indexes

    def index_names(self) -> list[str]:
        # Listed on every call, so a worker sees indexes built after it started.
        return sorted(self.store.list_indexes())

    def resolve_indexes(self, requested: tuple[str, ...] | None) -> list[str]:
        available = self.index_names()
        if requested is None:
            return available
        unknown = [name for name in requested if name not in available]
        if unknown:
            listed = ", ".join(available) if available else "none"
            raise UnknownIndex(
                f"unknown index {', '.join(map(repr, unknown))} (available: {listed})"
            )
        return list(dict.fromkeys(requested))

    @contextmanager
    def checkout(self, name: str) -> Iterator[IndexStore]:
        """A handle on index `name` for this thread alone; it returns to the pool after."""
        with self._pool_lock:
            idle = self._idle.setdefault(name, [])
            handle = idle.pop() if idle else None
        if handle is None:
            handle = self.store.open_index(name)
            with self._pool_lock:
                self._opened.append(handle)
        try:
            yield handle
        finally:
            with self._pool_lock:
                self._idle[name].append(handle)

    def open_indexes(self, names: list[str]) -> None:
        """A handle on each index now (pooled for the queries after), so that an index older
        than the code raises SchemaOutdated before any search: the user has a step to take
        (migrate). An index that fails otherwise is left to the searches, which skip it with
        a note."""
        for name in names:
            try:
                with self.checkout(name):
                    pass
            except SchemaOutdated:
                raise
            except StoreError:
                continue

    # Models

    def embedder(self) -> tuple[Any | None, str | None]:
        """(the query embedder or None, why it is None)."""
        with self._load_lock:
            if self._embedder is _UNSET:
                try:
                    from core.embedding.runtimes import load_embedder

                    self._embedder = load_embedder(self.settings)
                    self._loaded.append(self._embedder)
                except Exception as exc:  # any failure degrades to BM25, never a crash
                    self._embedder = None
                    self._embedder_note = f"query embedder failed to load: {_describe(exc)}"
            elif self._embedder is None and self._embedder_note is None:
                self._embedder_note = "no query embedder configured"
            return self._embedder, self._embedder_note

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        embedder, note = self.embedder()
        if embedder is None:
            raise RuntimeError(note or "no query embedder")
        with self._embed_lock:
            return np.asarray(embedder.embed_queries(texts), dtype=np.float32)

    def reranker(self) -> tuple[Any | None, list[str]]:
        with self._load_lock:
            if self._reranker is _UNSET:
                try:
                    from query.retrieval.rerank import load_reranker

                    self._reranker, notes = load_reranker(self.settings)
                    self._loaded.append(self._reranker)
                    self._reranker_notes = list(notes)
                except Exception as exc:
                    self._reranker = None
                    self._reranker_notes = [f"reranker failed to load: {_describe(exc)}"]
            return self._reranker, list(self._reranker_notes)

    def rerank_scores(self, query: str, passages: list[str], budget_ms: int) -> list[float | None]:
        reranker, _ = self.reranker()
        if reranker is None:
            return [None] * len(passages)
        with self._rerank_lock:
            return list(reranker.score(query, passages, budget_ms=budget_ms))

    def llm(self) -> Any | None:
        """The chat client; None when no endpoint is set. An endpoint that is set but whose
        client fails to load gives a stand-in whose every call fails with that error, so
        that the stages asking it say what went wrong instead of "no endpoint set"."""
        with self._load_lock:
            if self._llm is _UNSET:
                try:
                    from query.retrieval.llm import make_chat_client

                    self._llm = make_chat_client(self.settings)
                    self._loaded.append(self._llm)
                except Exception as exc:  # the LLM is optional: the stages go on without it
                    self._llm = _FailedLLM(str(self.settings.llm_endpoint), _describe(exc))
            return self._llm

    def counter(self) -> TokenCounter:
        with self._load_lock:
            if self._counter is None:
                # The same tokenizer as ingestion's chunk sizes (loaders/run.py).
                source = tokenizer_source(self.settings)
                self._counter = counter_for_model(str(source.directory))
                self._counter_model_id = canonical_model_id(source.model)
            return self._counter

    def stored_counts_usable(self, name: str) -> bool:
        """Whether the token counts stored with the chunks of index `name` are the counter's
        own: the chunker counted with the tokenizer of the index's model (the same fallback
        as `counter`), so they are when that model is the counter's and its counts add up
        across whitespace."""
        counter = self.counter()
        if self._counter_model_id is None or not getattr(counter, "additive", False):
            return False
        try:
            with self.checkout(name) as index:
                return index.model_id == self._counter_model_id
        except Exception:  # an index that cannot say: count afresh
            return False

    def expander(self) -> Callable[..., Any]:
        if self._expander is None:
            from query.retrieval.expansion import expand_query

            self._expander = expand_query
        return self._expander

    def corag_runner(self) -> Callable[..., Any]:
        if self._corag_runner is None:
            from query.retrieval.corag import run_corag

            self._corag_runner = run_corag
        return self._corag_runner

    def _briefly(self, kind: str, name: str, read: Callable[[IndexStore], Any]) -> Any:
        """`read(index)` of index `name`, cached for TITLES_TTL_S per (kind, name): what only
        an ingest changes, re-read at most that often instead of tracking generations."""
        key = (kind, name)
        with self._titles_lock:
            cached = self._titles.get(key)
            if cached is not None and time.monotonic() - cached[0] < TITLES_TTL_S:
                return cached[1]
        with self.checkout(name) as index:
            value = read(index)
        with self._titles_lock:
            self._titles[key] = (time.monotonic(), value)
        return value

    def links(self, name: str) -> Any:
        """The names of index `name` (titles and declared symbols, query.retrieval.links.Links),
        cached briefly; an empty one for a store that cannot list them."""
        from query.retrieval.links import Links

        def read(index: IndexStore) -> Links:
            titles = getattr(index, "document_titles", None)
            symbols = getattr(index, "chunk_symbols", None)
            pages = getattr(index, "document_links", None)
            return Links(
                titles() if titles is not None else (),
                symbols() if symbols is not None else (),
                pages() if pages is not None else (),
            )

        return self._briefly("links", name, read)

    def fusion_rule(self, name: str) -> str | None:
        """The fusion rule index `name`'s calibration chose (None: never calibrated, or a
        store that keeps none), cached as briefly as its names."""
        from query.retrieval.rules import calibrated_rule

        def read(index: IndexStore) -> str | None:
            record = getattr(index, "fusion_calibration", None)
            return calibrated_rule(record()) if record is not None else None

        rule: str | None = self._briefly("fusion", name, read)
        return rule

    def fusion_floor(self, name: str, key: str = "floor") -> bool | None:
        """Whether index `name`'s calibration keeps the identifier floor (`key` "floor") or
        applies the usage floor ("usage_floor"); None: it says nothing. Cached as briefly as
        its names."""
        from query.retrieval.rules import calibrated_floor

        def read(index: IndexStore) -> bool | None:
            record = getattr(index, "fusion_calibration", None)
            return calibrated_floor(record(), key) if record is not None else None

        floor: bool | None = self._briefly(key, name, read)
        return floor

    def model_id(self) -> str | None:
        embedder, _ = self.embedder()
        return getattr(embedder, "model_id", None)

    def warm(self) -> None:
        """Load every part now, so that the first request pays nothing (worker start)."""
        self.embedder()
        self.reranker()
        self.llm()
        self.counter()
        self.warm_indexes()

    def warm_indexes(self) -> None:
        """Load every index's in-memory search structures now (SQLite: the vectors, and the
        keyword postings of a store opened with that keyword path, kept current from then
        on): for a process that answers many queries."""
        for name in self.store.list_indexes():
            with self.checkout(name) as index:
                warm = getattr(index, "warm", None)
                if warm is not None:
                    warm()

    def close(self) -> None:
        with self._pool_lock:
            handles, self._opened, self._idle = self._opened, [], {}
        with self._load_lock:
            parts, self._loaded = self._loaded, []
        for part in [*handles, *parts]:
            close = getattr(part, "close", None)  # HTTP clients have one, local models not
            # Best effort: the process is usually ending.
            with contextlib.suppress(Exception):
                if close is not None:
                    close()


class _FailedLLM:
    """The configured LLM endpoint whose client could not be made: answers nothing, and says
    why (the stages that ask an LLM note a failed call and go on without it)."""

    def __init__(self, url: str, error: str) -> None:
        self.url = url
        self.error = error

    def complete(self, messages: list[dict[str, Any]]) -> str:
        from query.retrieval.llm import LLMUnavailable

        raise LLMUnavailable(f"the client failed to load: {self.error}")


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
