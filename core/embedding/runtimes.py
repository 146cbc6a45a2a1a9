"""Embedding for the whole project: `load_embedder(settings)` picks and loads the runtime.

Runtime choice (settings.embedding_runtime):
- "onnx" / "torch" / "mlx": that local runtime; an endpoint setting is ignored. "onnx" is
  the model's graph, built once from its weights (core.embedding.onnx_graph), run by ONNX
  Runtime.
- "http": the endpoint; settings.embedding_endpoint is required.
- "auto": the endpoint when one is set, else MLX on macOS arm64 (if mlx is
  importable), else ONNX Runtime when onnxruntime is installed and the graph covers the
  model (BERT encoders), else torch. MLX is never the default elsewhere:
  on Linux CPU it runs about 50x slower than torch.

A local runtime reads the model's files where core.embedding.model_files finds them: a
directory, the user cache, or fetched there on first use.

When the endpoint is down (refused, timeout, 502-504) the local runtime of the same model
takes over, recorded in `embedder.notes` and logged as a warning. Falling back to a
different model is refused: its vectors would not match the index. The check happens
once, at load; an endpoint that dies mid-run raises `EndpointUnavailable` to the caller.

Measured on the development machine (2 shared CPU cores, torch 2.13 CPU, all-MiniLM-L6-v2,
max_length 512), 256 texts of ~285 tokens, best of 4 runs: batch 16: 26.8 texts/s
(7.7k tokens/s), batch 32: 24.4, batch 64: 22.3; with max_length 256 (truncating) 27.6.
Under load from other processes the same run drops to 5-13 texts/s.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import platform
from collections.abc import Callable, Iterator

from core.embedding import model_files
from core.embedding.base import (
    DEFAULT_BATCH_SIZES,
    BatchedEmbedder,
    Embedder,
    EmbeddingEndpointError,
    EmbeddingError,
    EmbeddingHTTPError,
    EmbeddingResponseError,
    EmbedStats,
    EndpointUnavailable,
    RuntimeUnavailable,
)
from core.embedding.cache import EmbeddingCache, EmbeddingCacheError, embed_with_cache
from core.embedding.http_runtime import HTTPEmbedder
from core.embedding.mlx_runtime import MLXEmbedder
from core.embedding.model_files import resolve_model_dir
from core.embedding.models import (
    ModelNotFound,
    ModelSpec,
    canonical_model_id,
    model_spec,
    states_pooling,
)
from core.embedding.onnx_graph import built_model, graph_path
from core.embedding.onnx_quantize import INT8_POLICY, quantized_model
from core.embedding.onnx_runtime import OnnxEmbedder
from core.embedding.precision import (
    Hardware,
    PrecisionChoice,
    PrecisionError,
    choose_precision,
    detect_hardware,
)
from core.embedding.torch_runtime import TorchEmbedder
from core.progress import Progress, ProgressSnapshot
from core.settings import Settings

__all__ = [
    "DEFAULT_BATCH_SIZES",
    "BatchedEmbedder",
    "EmbedStats",
    "Embedder",
    "EmbeddingCache",
    "EmbeddingCacheError",
    "EmbeddingConfigError",
    "EmbeddingEndpointError",
    "EmbeddingError",
    "EmbeddingHTTPError",
    "EmbeddingResponseError",
    "EndpointUnavailable",
    "FallbackRefused",
    "HTTPEmbedder",
    "KeptEmbedders",
    "MLXEmbedder",
    "OnnxEmbedder",
    "ModelNotFound",
    "ModelSpec",
    "Progress",
    "ProgressSnapshot",
    "RuntimeUnavailable",
    "TorchEmbedder",
    "canonical_model_id",
    "default_local_runtime",
    "embed_with_cache",
    "kept_embedders",
    "load_embedder",
    "model_spec",
    "resolve_model_dir",
]

_LOG = logging.getLogger("rag.embedding")
ProgressCallback = Callable[[ProgressSnapshot], None]


class EmbeddingConfigError(EmbeddingError):
    """The settings ask for something that cannot work (e.g. http without an endpoint)."""


class FallbackRefused(EmbeddingError):
    """The endpoint is down and its model is not the local model: no silent model switch."""


def default_local_runtime(
    system: str | None = None, machine: str | None = None, mlx_importable: bool | None = None
) -> str:
    """ "mlx" on macOS arm64 with mlx installed, else "torch"."""
    system = platform.system() if system is None else system
    machine = platform.machine() if machine is None else machine
    if system != "Darwin" or machine != "arm64":
        return "torch"
    if mlx_importable is None:
        mlx_importable = importlib.util.find_spec("mlx") is not None
    return "mlx" if mlx_importable else "torch"


def load_embedder(
    settings: Settings, *, on_progress: ProgressCallback | None = None
) -> BatchedEmbedder:
    """The embedder the settings ask for, loaded and ready (rules in the module docstring);
    inside `kept_embedders()`, the one loaded there before for the same model setup."""
    if _scope is not None and on_progress is None:
        return _scope.get(settings)
    return _load(settings, on_progress)


# Settings that decide which model `load_embedder` loads, and how.
_MODEL_SETUP_FIELDS = frozenset(
    {
        "embedding_model",
        "embedding_runtime",
        "embedding_precision",
        "embedding_endpoint",
        "embedding_endpoint_model",
        "embedding_batch_size",
        "embedding_batch_tokens",
        "embedding_threads",
        "model_cache_dir",
    }
)


class KeptEmbedders:
    """Embedders loaded once per model setup (`_MODEL_SETUP_FIELDS`) and handed out again to
    whoever asks with the same setup."""

    def __init__(self) -> None:
        self._loaded: dict[str, BatchedEmbedder] = {}

    def get(self, settings: Settings) -> BatchedEmbedder:
        key = settings.model_dump_json(include=set(_MODEL_SETUP_FIELDS))
        if key not in self._loaded:
            self._loaded[key] = _load(settings, None)
        return self._loaded[key]


_scope: KeptEmbedders | None = None


@contextlib.contextmanager
def kept_embedders() -> Iterator[None]:
    """While open, `load_embedder` (without `on_progress`) loads each model setup once in
    this process: a command loads its model while Prefect's server starts, and the flow it
    then runs finds it loaded. A scope, not a cache for the process's life: a process that
    serves flow runs for days must not keep every model it ever loaded, nor an endpoint's
    fallback once the endpoint is back. A nested scope shares the open one."""
    global _scope
    if _scope is not None:
        yield
        return
    _scope = KeptEmbedders()
    try:
        yield
    finally:
        _scope = None


def _load(settings: Settings, on_progress: ProgressCallback | None) -> BatchedEmbedder:
    runtime = settings.embedding_runtime
    if runtime == "http" and not settings.embedding_endpoint:
        raise EmbeddingConfigError(
            "RAG_EMBEDDING_RUNTIME=http needs EMBEDDING_ENDPOINT (an OpenAI-compatible server)"
        )
    if settings.embedding_endpoint and runtime in ("auto", "http"):
        embedder = _load_remote(settings, on_progress)
    else:
        embedder = load_local_embedder(settings, runtime, on_progress=on_progress)
    _LOG.info(
        "embedding with %s on %s (dim %d, batch %d)",
        embedder.model_id,
        embedder.runtime,
        embedder.dim,
        embedder.batch_size,
    )
    return embedder


def load_local_embedder(
    settings: Settings, runtime: str = "auto", *, on_progress: ProgressCallback | None = None
) -> BatchedEmbedder:
    """ONNX Runtime, torch or MLX for settings.embedding_model; "auto" picks per platform."""
    chosen = _local_runtime(runtime, settings.embedding_precision)
    model_dir = model_files.model_dir(settings)  # fetched on first use
    # A registered name wins over the directory's files: the registry fixes max_length.
    spec = model_spec(settings.embedding_model)
    if not spec.known:
        spec = model_spec(model_dir)
        if not spec.known and not states_pooling(model_dir):
            # Mean pooling and no query prefix are then guesses: a bge directory under
            # another name ranked with the wrong pooling, and e5 without its "query: " prefix
            # lost 0.17 nDCG@10 on its vector leg (react-native-vision-camera).
            _LOG.warning(
                "%s is not a model this project knows and its files do not say how it pools: "
                "mean pooling and no query prefix are assumed. A model that pools otherwise "
                "(bge: its [CLS] token) or expects a query prefix (e5: 'query: ') ranks worse "
                "so: give the directory the files sentence-transformers saves "
                "(1_Pooling/config.json, config_sentence_transformers.json) or the model's "
                "own name (bge-small-en-v1.5)",
                model_dir,
            )
    batch_size = settings.embedding_batch_size
    hardware = detect_hardware()
    if chosen == "mlx":
        choice = _precision(settings, "mlx", spec, hardware)
        if platform.system() != "Darwin" or platform.machine() != "arm64":
            _LOG.warning("MLX outside Apple Silicon runs on the CPU, far slower than torch")
        return MLXEmbedder(
            model_dir,
            spec,
            batch_size=batch_size,
            on_progress=on_progress,
            library_logs=settings.library_logs,
            precision=choice.precision,
        )
    # 0 = the runtime's default budget; a batch size given without a budget means exactly
    # that many texts per batch.
    batch_tokens = settings.embedding_batch_tokens or (0 if batch_size else None)
    if chosen == "onnx" or (_onnx_first(runtime, settings) and _onnx_installed()):
        try:
            choice = _precision(settings, "onnx", spec, hardware)
            model_file = built_model(model_dir, spec, settings.model_cache_dir / "onnx")
            if choice.precision == "int8":
                model_file = quantized_model(model_file, INT8_POLICY, logs=settings.library_logs)
            return OnnxEmbedder(
                model_file,
                model_dir,
                spec,
                threads=settings.embedding_threads,
                batch_size=batch_size,
                batch_tokens=batch_tokens,
                on_progress=on_progress,
                precision=choice.precision,
            )
        except RuntimeUnavailable as exc:
            if chosen == "onnx":
                raise
            _LOG.warning("embedding with torch: %s", exc)
    choice = _precision(settings, "torch", spec, hardware)
    return TorchEmbedder(
        model_dir,
        spec,
        batch_size=batch_size,
        batch_tokens=batch_tokens,
        on_progress=on_progress,
        library_logs=settings.library_logs,
        precision=choice.precision,
    )


# A precision only one local runtime has picks that runtime when the runtime is "auto".
_RUNTIME_OF_PRECISION = {"bf16": "torch", "int8": "onnx", "fp16": "mlx"}


def _local_runtime(runtime: str, precision: str) -> str:
    """The runtime asked for, else the one an explicit precision needs, else the platform's
    (`default_local_runtime`; "torch" there means ONNX Runtime first when installed)."""
    if runtime in ("onnx", "torch", "mlx"):
        return runtime
    return _RUNTIME_OF_PRECISION.get(precision) or default_local_runtime()


def _onnx_first(runtime: str, settings: Settings) -> bool:
    """Whether "auto" tries ONNX Runtime before torch: unless the precision is torch's."""
    return runtime == "auto" and _RUNTIME_OF_PRECISION.get(settings.embedding_precision) is None


def _precision(
    settings: Settings, runtime: str, spec: ModelSpec, hardware: Hardware
) -> PrecisionChoice:
    try:
        choice = choose_precision(settings.embedding_precision, runtime, spec, hardware)
    except PrecisionError as exc:
        raise EmbeddingConfigError(str(exc)) from exc
    _LOG.info("embedding precision %s on %s: %s", choice.precision, runtime, choice.reason)
    return choice


def planned_runtime(settings: Settings) -> tuple[str, str]:
    """The local runtime `load_embedder` would pick, and what it needs, without loading a
    model (for `python -m query doctor`)."""
    runtime = settings.embedding_runtime
    chosen = _local_runtime(runtime, settings.embedding_precision)
    if chosen == "mlx" or (chosen == "torch" and runtime == "torch"):
        return chosen, f"RAG_EMBEDDING_RUNTIME={runtime}"
    if chosen == "torch" and not _onnx_first(runtime, settings):
        return chosen, f"RAG_EMBEDDING_PRECISION={settings.embedding_precision}"
    if not _onnx_installed():
        return "torch", "onnxruntime is not installed"
    model_dir = model_files.model_dir(settings, fetch=False)
    spec = model_spec(settings.embedding_model)
    if not spec.known:
        spec = model_spec(model_dir)
    path = graph_path(model_dir, spec, settings.model_cache_dir / "onnx")
    if path.is_file():
        return "onnx", f"built graph {path}"
    return "onnx", f"graph not built yet: the first embedding builds it in {path.parent}"


def planned_precision(settings: Settings, runtime: str) -> PrecisionChoice:
    """The precision `load_local_embedder` would run `runtime` in, and why, without loading
    a model (for `python -m query doctor`); EmbeddingConfigError for an impossible choice."""
    spec = model_spec(settings.embedding_model)
    if not spec.known:
        spec = model_spec(model_files.model_dir(settings, fetch=False))
    try:
        return choose_precision(settings.embedding_precision, runtime, spec, detect_hardware())
    except PrecisionError as exc:
        raise EmbeddingConfigError(str(exc)) from exc


def _onnx_installed() -> bool:
    return importlib.util.find_spec("onnxruntime") is not None


def http_embedder(
    settings: Settings, *, on_progress: ProgressCallback | None = None
) -> HTTPEmbedder:
    """The endpoint's embedder, not yet probed. Its model id is canonical like the others."""
    endpoint = settings.embedding_endpoint
    if not endpoint:
        raise EmbeddingConfigError("no EMBEDDING_ENDPOINT set")
    local_id = canonical_model_id(settings.embedding_model)
    request_model = settings.embedding_endpoint_model or local_id
    same_model = canonical_model_id(request_model) == local_id
    # The same model gets the same prefixes whichever runtime embeds, even if unregistered.
    spec = model_spec(settings.embedding_model if same_model else request_model)
    return HTTPEmbedder(
        endpoint,
        spec,
        request_model=request_model,
        token=settings.endpoint_token,
        timeout_s=settings.embedding_timeout_s,
        batch_size=settings.embedding_batch_size,
        on_progress=on_progress,
    )


def _load_remote(settings: Settings, on_progress: ProgressCallback | None) -> BatchedEmbedder:
    remote = http_embedder(settings, on_progress=on_progress)
    try:
        remote.probe()
        return remote
    except EndpointUnavailable as down:
        local_id = canonical_model_id(settings.embedding_model)
        if remote.model_id != local_id:
            raise FallbackRefused(
                f"{down}; the local model {local_id} differs from the endpoint's "
                f"{remote.model_id}, so there is no fallback (vectors would not match the index)"
            ) from down
        local = load_local_embedder(settings, on_progress=on_progress)
        note = (
            f"embedding endpoint {settings.embedding_endpoint} unavailable ({down}); "
            f"using the local {local.runtime} runtime of {local.model_id}"
        )
        local.notes.append(note)
        _LOG.warning("%s", note)
        return local
