"""`python -m query doctor`: one screen that says what works, and the fix for what does not.

Checks, in order: the query model is on disk (and which runtime embeds with it) and every
index was built with it; each index passes the store's consistency check and holds as many
full-text rows as chunks (chunks still waiting for their vectors are a normal state, OK with
the command that embeds them);
a worker or MCP server answers; the configured LLM, reranker and embedding endpoints and the
Prefect API accept connections. A check that does not apply (no endpoint configured, no
worker running) is reported as skipped, not failed: only failures make the exit status 1.
"""

from __future__ import annotations

import socket
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from core.embedding.model_files import model_dir
from core.embedding.models import ModelNotFound, canonical_model_id, find_spec
from core.settings import ENV_VARS, Settings
from core.store.contract import StoreError
from core.store.coverage import percent
from query.retrieval.status import OUTDATED, store_status
from query.serve.client import find_worker, health, local_store, unproven
from query.serve.worker_file import WorkerFileRefused

OK, FAILED, SKIPPED = "ok", "failed", "skipped"
CONNECT_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class Check:
    name: str
    state: str  # ok | failed | skipped
    detail: str
    fix: str = ""  # what to run: for a failure the repair, for an OK check the next step


def diagnose(settings: Settings, store: str | None) -> list[Check]:
    checks = [_model(settings), _runtime(settings), _precision(settings)]
    checks += _indexes(settings, store, canonical_model_id(settings.embedding_model))
    checks.append(_worker(settings, store))
    endpoints = (
        ("LLM endpoint", settings.llm_endpoint, "OPENCLAW_LLM_ENDPOINT"),
        ("reranker endpoint", settings.reranker_endpoint, "RERANKER_ENDPOINT"),
        ("embedding endpoint", settings.embedding_endpoint, "EMBEDDING_ENDPOINT"),
        ("Prefect API", settings.prefect_api_url, "PREFECT_API_URL"),
    )
    checks += [_endpoint(name, url, var) for name, url, var in endpoints]
    return checks


def _model(settings: Settings) -> Check:
    model = settings.embedding_model
    identity = canonical_model_id(model)
    try:
        path: Path | None = model_dir(settings, fetch=False)  # doctor downloads nothing
    except ModelNotFound:
        path = None
    if path is not None and (path / "config.json").is_file():
        return Check("query model", OK, f"{identity} at {path}")
    if settings.embedding_endpoint:
        return Check("query model", OK, f"{identity} behind {settings.embedding_endpoint}")
    spec = find_spec(model)
    if path is None and spec is not None and spec.download is not None:
        if settings.model_fetch == "on":
            return Check(
                "query model",
                SKIPPED,
                f"{identity} is not fetched yet: the first ingest or question fetches it",
                "`rag-retrieve model install` fetches it now",
            )
        return Check(
            "query model",
            FAILED,
            f"{identity} is not in the cache and RAG_MODEL_FETCH=off",
            "set RAG_EMBEDDING_MODEL to a directory holding its files, or "
            "RAG_MODEL_FETCH=on and run `rag-retrieve model install`",
        )
    return Check(
        "query model",
        FAILED,
        f"{model} is not a model directory (no config.json)",
        "set RAG_EMBEDDING_MODEL to a local model directory",
    )


def _runtime(settings: Settings) -> Check:
    if settings.embedding_endpoint and settings.embedding_runtime in ("auto", "http"):
        return Check("embedding runtime", SKIPPED, "the embedding endpoint embeds")
    from core.embedding.runtimes import ModelNotFound, planned_runtime

    try:
        runtime, detail = planned_runtime(settings)
    except ModelNotFound as exc:
        return Check("embedding runtime", SKIPPED, f"no model to run: {exc}")
    return Check("embedding runtime", OK, f"{runtime}: {detail}")


def _precision(settings: Settings) -> Check:
    if settings.embedding_endpoint and settings.embedding_runtime in ("auto", "http"):
        return Check("embedding precision", SKIPPED, "the embedding endpoint embeds")
    from core.embedding.runtimes import (
        EmbeddingConfigError,
        ModelNotFound,
        planned_precision,
        planned_runtime,
    )

    try:
        choice = planned_precision(settings, planned_runtime(settings)[0])
    except ModelNotFound as exc:
        return Check("embedding precision", SKIPPED, f"no model to run: {exc}")
    except EmbeddingConfigError as exc:
        return Check("embedding precision", FAILED, str(exc), "set RAG_EMBEDDING_PRECISION=auto")
    return Check("embedding precision", OK, f"{choice.precision}: {choice.reason}")


def _indexes(settings: Settings, store: str | None, model_id: str) -> list[Check]:
    try:
        status = store_status(settings, store)
    except StoreError as exc:
        return [Check("store", FAILED, str(exc), "check --store / RAG_INDEX_DIR / TIDB_HOST")]
    if not status["indexes"]:
        return [
            Check(
                "store",
                FAILED,
                f"{status['store']} holds no index",
                "ingest one: python -m flows.ingest PATH --index NAME",
            )
        ]
    return [_index(name, entry, model_id) for name, entry in status["indexes"].items()]


def _index(name: str, entry: dict[str, Any], model_id: str) -> Check:
    label = f"index {name}"
    if entry.get("health") == OUTDATED:
        return Check(label, FAILED, "; ".join(entry["problems"]), "run: rag-retrieve migrate")
    if entry.get("health") != "ok":
        return Check(
            label,
            FAILED,
            "; ".join(entry.get("problems") or [str(entry.get("health"))]),
            "move the file aside and ingest again to rebuild it",
        )
    chunks, vectors = entry.get("chunks"), entry.get("vectors")
    fts = entry.get("fts_rows", chunks)
    problems, fixes = [], []
    if fts != chunks or (vectors or 0) > (chunks or 0):
        problems.append(f"{chunks} chunks but {vectors} vectors and {fts} full-text rows")
        fixes.append("ingest again with --force")
    built_with = entry.get("model_id")
    if chunks and built_with and built_with != model_id:
        problems.append(f"built with {built_with}, the query model is {model_id}")
        fixes.append(f"set RAG_EMBEDDING_MODEL to {built_with}, or rebuild the index")
    if problems:
        return Check(label, FAILED, "; ".join(problems), "; ".join(fixes))
    detail = f"{chunks} chunks, {vectors} vectors, model {built_with}"
    pending = entry.get("chunks_pending") or 0
    if not pending:
        return Check(label, OK, detail)
    # Chunks are loaded first and embedded after: keyword search already covers them.
    share = percent(pending, chunks or 0)
    return Check(
        label,
        OK,
        f"{detail}; vectors cover {share}, {pending} chunks wait (keyword search covers all)",
        f"rag-retrieve embed --index {name}",
    )


def _worker(settings: Settings, store: str | None) -> Check:
    name = "worker / MCP server"
    directory = local_store(store, settings)
    url = settings.query_worker_url
    try:
        if url and directory and (refusal := unproven(url, directory)):
            raise WorkerFileRefused(refusal)
        if not url:
            found = find_worker(directory) if directory else None
            url = found.url if found else None
    except WorkerFileRefused as exc:
        return Check(name, FAILED, str(exc), "stop that process, or remove the worker file")
    answered = health(url, token=settings.bearer_token) if url else None
    if answered is None:
        return Check(
            name,
            SKIPPED,
            f"nothing answers at {url}" if url else f"no worker serves {directory or 'TiDB'}",
            "for fast answers run `python -m query serve` or `python -m query mcp --http`",
        )
    return Check(name, OK, f"{url} serves {answered.get('store')}")


def _endpoint(name: str, url: str | None, variable: str) -> Check:
    if not url:
        return Check(name, SKIPPED, f"not configured ({variable} unset)")
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if not parts.hostname:
        return Check(name, FAILED, f"{variable}={url} is not a URL", f"set {variable} to a URL")
    # A TCP connect says reachable without assuming which routes the service answers.
    try:
        with socket.create_connection((parts.hostname, port), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        return Check(name, FAILED, f"{url}: {exc}", f"start the service or fix {variable}")
    return Check(name, OK, f"{url} accepts connections")


# Shown as set, never printed: a doctor screen gets pasted into issues.
SECRET_SETTINGS = frozenset({"tidb_password", "auth_token", "embedding_endpoint_token"})


def configured(settings: Settings) -> list[dict[str, str]]:
    """Each setting not at its default: its variable, value and the flag, environment
    variable or config file that set it."""
    rows = []
    for name, origin in sorted(settings.origins().items(), key=lambda item: ENV_VARS[item[0]]):
        value = getattr(settings, name)
        shown = "(set)" if name in SECRET_SETTINGS else str(value)
        rows.append({"variable": ENV_VARS[name], "key": name, "value": shown, "source": origin})
    return rows


def failed(checks: list[Check]) -> bool:
    return any(c.state == FAILED for c in checks)


def as_json(checks: list[Check], settings: list[dict[str, str]]) -> dict[str, Any]:
    return {"ok": not failed(checks), "checks": [asdict(c) for c in checks], "settings": settings}


def render(checks: list[Check], settings: list[dict[str, str]]) -> str:
    marks = {OK: "OK  ", FAILED: "FAIL", SKIPPED: "--  "}
    lines = []
    if settings:
        lines.append("settings (the rest are defaults):")
        lines += [
            f"     {row['variable']}={row['value']}  from {row['source']}" for row in settings
        ]
    for check in checks:
        lines.append(f"{marks[check.state]} {check.name}: {check.detail}")
        if check.fix:  # an OK check's is the next step (embed what waits), not a repair
            lines.append(f"     {'next' if check.state == OK else 'fix'}: {check.fix}")
    return "\n".join(lines)
