"""The ONNX Runtime runtime: the model's transformer as an ONNX graph, built once from its
weights (core.embedding.onnx_graph), run on the CPU with the model's own tokenizer.json,
pooled like sentence-transformers.

Why a runtime of our own beside torch: on this project's 2-core CPU box, one MiniLM query
embeds in about half torch's time, and the process needs neither torch nor
sentence-transformers (~0.1 s of imports against ~1.5 s), which is most of a cold
`python -m query`. Documents embed faster too (bench/README.md).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from core.embedding.base import (
    DEFAULT_BATCH_SIZES,
    DEFAULT_BATCH_TOKENS,
    BatchedEmbedder,
    BatchResult,
    EmbeddingError,
    RuntimeUnavailable,
    TokenLengths,
    pool_hidden,
)
from core.embedding.models import ModelSpec, read_json
from core.progress import ProgressSnapshot

# The tokenizer's outputs, by the input names Hugging Face models (and so their graphs) use.
INPUTS = {"input_ids": "ids", "attention_mask": "attention_mask", "token_type_ids": "type_ids"}


class OnnxEmbedder(BatchedEmbedder):
    """A model's ONNX graph under ONNX Runtime's CPU provider."""

    runtime = "onnx"

    def __init__(
        self,
        model_file: str | Path,
        model_dir: str | Path,
        spec: ModelSpec,
        *,
        threads: int = 0,
        batch_size: int = 0,
        batch_tokens: int | None = None,
        on_progress: Callable[[ProgressSnapshot], None] | None = None,
        precision: str = "fp32",
    ) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise RuntimeUnavailable(
                "the onnx runtime needs onnxruntime and tokenizers: pip install -e ."
            ) from exc
        self.model_file = Path(model_file)
        self.model_dir = Path(model_dir)
        self._tokenizer = load_tokenizer(Tokenizer, self.model_dir, spec.max_length)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        if threads:
            # N processes of one host each given their share of its cores: no second pool of
            # threads on top (ONNX Runtime oversubscribes the cores otherwise).
            options.inter_op_num_threads = 1
        # Spinning threads wait for work by burning a core: on a busy 2-core machine they
        # steal it from the thread that has the work (a query's latency rose 2x under load).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # its warnings are about graph fusions, not our data
        try:
            self._session = ort.InferenceSession(
                str(self.model_file), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise EmbeddingError(f"{self.model_file}: not a loadable ONNX model: {exc}") from exc
        self._inputs = [i.name for i in self._session.get_inputs()]
        unknown = [name for name in self._inputs if name not in INPUTS]
        if unknown:
            raise EmbeddingError(f"{self.model_file}: unexpected model inputs {unknown}")
        dim = _hidden_size(self.model_dir)
        if spec.dim is not None and dim is not None and dim != spec.dim:
            # A projection after pooling (a Dense module): not part of the graph.
            raise RuntimeUnavailable(
                f"{self.model_dir} has {dim}-d states but {spec.model_id} is {spec.dim}-d"
            )
        super().__init__(
            spec,
            dim=spec.dim or dim or 0,
            # The same CPU, the same shapes: torch's measured CPU batching serves it too.
            batch_size=batch_size or DEFAULT_BATCH_SIZES["torch-cpu"],
            batch_tokens=DEFAULT_BATCH_TOKENS["torch-cpu"]
            if batch_tokens is None
            else batch_tokens,
            on_progress=on_progress,
        )
        if not self.dim:
            self.dim = int(self._forward(["dimension probe"])[0].shape[-1])
        self._token_lengths = TokenLengths(self.model_dir)
        self._lengths_are_tokens = self._token_lengths.available
        self._specials = len(self._tokenizer.encode("").ids)
        # What the file holds (fp32, or int8 from core.embedding.onnx_quantize): the caller
        # that chose the file says; the vectors' cache key and the index record carry it.
        self.precision = precision

    def _lengths(self, texts: list[str]) -> list[int]:
        if self._token_lengths.available:
            return self._token_lengths(texts, self._specials)
        return super()._lengths(texts)

    def _forward(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        encodings = self._tokenizer.encode_batch(texts)
        arrays = {
            name: np.array([getattr(e, INPUTS[name]) for e in encodings], dtype=np.int64)
            for name in INPUTS
        }
        hidden = self._session.run(None, {name: arrays[name] for name in self._inputs})[0]
        return hidden, arrays["attention_mask"]

    def _embed_batch(self, texts: list[str]) -> BatchResult:
        hidden, mask = self._forward(texts)
        pooled = pool_hidden(np, hidden, mask, self.spec.pooling)
        return BatchResult(
            vectors=np.asarray(pooled, dtype=np.float32),
            tokens=int(mask.sum()),
            padded_tokens=int(mask.size),
        )


def load_tokenizer(tokenizer_class: Any, model_dir: Path, max_length: int) -> Any:
    """The model's fast tokenizer, truncating and padding (on the right) as
    sentence-transformers calls it."""
    path = model_dir / "tokenizer.json"
    if not path.is_file():
        raise RuntimeUnavailable(f"the runtime needs {path}")
    tokenizer = tokenizer_class.from_file(str(path))
    tokenizer.enable_truncation(max_length=max_length)
    pad_token = _pad_token(model_dir)
    pad_id = tokenizer.token_to_id(pad_token)
    if pad_id is None:
        raise RuntimeUnavailable(f"{path}: no id for the padding token {pad_token!r}")
    tokenizer.enable_padding(pad_id=pad_id, pad_token=pad_token)
    return tokenizer


def _pad_token(model_dir: Path) -> str:
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        value = read_json(model_dir / name).get("pad_token")
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str):
            return value
    return "[PAD]"


def _hidden_size(model_dir: Path) -> int | None:
    value = read_json(model_dir / "config.json").get("hidden_size")
    return int(value) if isinstance(value, int) else None
