"""The torch runtime: sentence-transformers on CUDA when present, else the CPU."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.embedding.base import (
    DEFAULT_BATCH_SIZES,
    DEFAULT_BATCH_TOKENS,
    BatchedEmbedder,
    BatchResult,
    EmbeddingError,
    RuntimeUnavailable,
    TokenLengths,
)
from core.embedding.library_output import library_output
from core.embedding.models import ModelSpec
from core.progress import ProgressSnapshot

_LOG = logging.getLogger("rag.embedding")


class TorchEmbedder(BatchedEmbedder):
    """sentence-transformers on CUDA when present, else CPU; loads only local files."""

    runtime = "torch"

    def __init__(
        self,
        model_dir: str | Path,
        spec: ModelSpec,
        *,
        device: str | None = None,
        batch_size: int = 0,
        batch_tokens: int | None = None,
        on_progress: Callable[[ProgressSnapshot], None] | None = None,
        library_logs: bool = False,
        precision: str = "fp32",
    ) -> None:
        if precision not in ("fp32", "bf16"):
            raise EmbeddingError(f"the torch runtime runs fp32 or bf16, not {precision}")
        try:
            import torch
        except ImportError as exc:
            raise RuntimeUnavailable(
                "the torch runtime needs torch and sentence-transformers: pip install -e '.[torch]'"
            ) from exc
        self._torch = torch
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model_dir = Path(model_dir)
        with library_output(library_logs):
            self._model = _load_sentence_transformer(self.model_dir, spec, self.device)
        self._model.max_seq_length = spec.max_length
        dim = _st_dimension(self._model)
        if spec.dim is not None and dim != spec.dim:
            raise EmbeddingError(
                f"{self.model_dir} produces {dim}-d vectors but {spec.model_id} is {spec.dim}-d; "
                "is the directory named after the wrong model?"
            )
        kind = "torch-cuda" if self.device.startswith("cuda") else "torch-cpu"
        super().__init__(
            spec,
            dim=dim,
            batch_size=batch_size or DEFAULT_BATCH_SIZES[kind],
            batch_tokens=DEFAULT_BATCH_TOKENS[kind] if batch_tokens is None else batch_tokens,
            on_progress=on_progress,
        )
        self._token_lengths = TokenLengths(self.model_dir)
        self._lengths_are_tokens = self._token_lengths.available
        self._specials = _special_token_count(self._model)
        self.precision = precision

    def _lengths(self, texts: list[str]) -> list[int]:
        if self._token_lengths.available:
            return self._token_lengths(texts, self._specials)
        return super()._lengths(texts)

    def _embed_batch(self, texts: list[str]) -> BatchResult:
        from sentence_transformers.util import batch_to_device

        preprocess = getattr(self._model, "preprocess", None) or self._model.tokenize
        features = preprocess(texts)
        mask = features["attention_mask"]
        features = batch_to_device(features, self._model.device)
        # bf16 by autocast: the matrix multiplies run in bf16 (oneDNN's AVX512_BF16/AMX
        # kernels on CPU) while layer norms, softmax and the pooled sums stay fp32.
        with (
            self._torch.inference_mode(),
            self._torch.autocast(
                self._torch.device(self.device).type,
                dtype=self._torch.bfloat16,
                enabled=self.precision == "bf16",
            ),
        ):
            out = self._model(features)["sentence_embedding"]
        return BatchResult(
            vectors=out.float().cpu().numpy(),
            tokens=int(mask.sum()),
            padded_tokens=int(mask.numel()),
        )


def _load_sentence_transformer(model_dir: Path, spec: ModelSpec, device: str) -> Any:
    from sentence_transformers import SentenceTransformer

    kwargs: dict[str, Any] = {"device": device, "trust_remote_code": spec.trust_remote_code}
    if (model_dir / "modules.json").is_file():
        return SentenceTransformer(str(model_dir), local_files_only=True, **kwargs)
    # A bare Hugging Face directory: sentence-transformers would guess mean pooling,
    # which is wrong for CLS models (bge, arctic, mxbai). Build the pipeline from the spec.
    try:
        from sentence_transformers.sentence_transformer.modules import (
            Normalize,
            Pooling,
            Transformer,
        )
    except ImportError:  # sentence-transformers 5
        from sentence_transformers.models import (  # type: ignore[no-redef]
            Normalize,
            Pooling,
            Transformer,
        )

    transformer = Transformer(
        str(model_dir),
        max_seq_length=spec.max_length,
        model_kwargs={"local_files_only": True, "trust_remote_code": spec.trust_remote_code},
    )
    # Renamed in sentence-transformers 6; the old name still works in 5.
    get_dim = getattr(transformer, "get_embedding_dimension", None)
    dim = get_dim() if get_dim else transformer.get_word_embedding_dimension()
    return SentenceTransformer(
        modules=[transformer, Pooling(dim, spec.pooling), Normalize()], **kwargs
    )


def _st_dimension(model: Any) -> int:
    for name in ("get_embedding_dimension", "get_sentence_embedding_dimension"):
        method = getattr(model, name, None)
        if method is not None and (dim := method()):
            return int(dim)
    raise EmbeddingError("cannot tell the embedding dimension of the loaded model")


def _special_token_count(model: Any) -> int:
    try:
        return len(model.tokenizer("")["input_ids"])
    except Exception:  # a tokenizer without a plain call still embeds; 2 fits BERT/XLM-R
        return 2
