"""What makes two embedders interchangeable: the same vectors for the same text.

A vector phase spread over workers (loaders/executors/) checks every worker's model against
the one the index is bound to: a worker whose identity differs is refused, never mixed into
the index, since vectors of two setups ruin search silently. The identity is the model id,
its revision (a fingerprint of the files that decide its vectors: config and tokenizer; the
weights are named by the model id, and an ONNX export's bytes differ from machine to machine
though its vectors do not), the runtime, the precision and the dimension.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.embedding.base import Embedder

# The files a model directory's vectors depend on beyond its weights.
_FINGERPRINTED = ("config.json", "tokenizer.json", "tokenizer_config.json", "modules.json")


@dataclass(frozen=True)
class ModelIdentity:
    model_id: str
    revision: str
    runtime: str
    precision: str
    dim: int

    def differences(self, other: ModelIdentity) -> list[str]:
        """`field: mine != theirs` for each field that differs."""
        theirs = asdict(other)
        return [f"{k}: {v!r} != {theirs[k]!r}" for k, v in asdict(self).items() if v != theirs[k]]


def model_identity(embedder: Embedder) -> ModelIdentity:
    model_dir = getattr(embedder, "model_dir", None)
    return ModelIdentity(
        embedder.model_id,
        revision(Path(model_dir)) if model_dir else "",
        embedder.runtime,
        getattr(embedder, "precision", "fp32"),
        embedder.dim,
    )


def revision(model_dir: Path) -> str:
    """A fingerprint of the model directory's config and tokenizer files."""
    digest = hashlib.sha256()
    for name in _FINGERPRINTED:
        path = model_dir / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]
