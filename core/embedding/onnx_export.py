"""A local model's transformer exported to ONNX, once per model version, and proved equal.

`exported_model` returns the cached export of a model directory, making it on first use:
torch's exporter traces the Hugging Face model (input ids, attention mask, token type ids
-> last hidden state, batch and sequence dynamic), then the file has to embed a padded batch
of probe texts as the torch runtime does (every vector within MAX_DIFFERENCE) before it is
moved into place. A model the export cannot cover (a projection after pooling, custom
code) raises `ExportUnavailable`, and the caller stays on torch.

The cache file's name carries a fingerprint of the model's files (config, weights and
tokenizer: names, sizes, mtimes), so a replaced model is exported again; writes are atomic
(a temporary file, renamed), so concurrent first uses each produce a whole file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import warnings
from pathlib import Path

import numpy as np

from core.embedding.base import RuntimeUnavailable
from core.embedding.library_output import library_output
from core.embedding.models import ModelSpec

EXPORT_VERSION = 1  # bumped when the export itself changes
OPSET = 17
# Unit vectors: float32 rounding differences between the two runtimes are ~1e-7.
MAX_DIFFERENCE = 1e-4
PROBES = [
    "a",
    "How do I persist a SwiftData model and sync it with CloudKit?",
    "func refreshToken(completion: @escaping (Result<Token, Error>) -> Void) { "
    "session.dataTask(with: request) { data, _, error in completion(.failure(error!)) } }",
    " ".join(["Padding and truncation are checked with one long text as well."] * 80),
]
# sentence-transformers modules the export reproduces: the transformer, then pooling and
# normalisation, which the runtime does itself.
COVERED_MODULES = {"Transformer", "Pooling", "Normalize"}
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "config.json", "tokenizer.json")


class ExportUnavailable(RuntimeUnavailable):
    """This model, or this installation, cannot be run through ONNX; torch it is."""


def exported_model(model_dir: Path, spec: ModelSpec, cache_dir: Path, *, logs: bool) -> Path:
    """The model's ONNX file in `cache_dir`, exported and checked on first use."""
    target = export_path(model_dir, spec, cache_dir)
    if target.is_file():
        return target
    _check_covered(model_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        with library_output(logs), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's warnings are about its own shapes
            _export(model_dir, spec, partial)
            _prove_equal(partial, model_dir, spec, logs=logs)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def export_path(model_dir: Path, spec: ModelSpec, cache_dir: Path) -> Path:
    """Where the model's export is (or will be) kept."""
    return cache_dir / f"{_slug(spec.model_id)}-{fingerprint(model_dir)}.onnx"


def fingerprint(model_dir: Path) -> str:
    digest = hashlib.sha256(f"export {EXPORT_VERSION} opset {OPSET}".encode())
    for name in WEIGHT_FILES:
        path = model_dir / name
        if path.is_file():
            stat = path.stat()
            digest.update(f"{name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def _check_covered(model_dir: Path) -> None:
    modules_file = model_dir / "modules.json"
    if not modules_file.is_file():
        return  # a bare Hugging Face directory: transformer + the spec's pooling
    try:
        modules = json.loads(modules_file.read_text(encoding="utf-8"))
        kinds = {str(m["type"]).rsplit(".", 1)[-1] for m in modules}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ExportUnavailable(f"{modules_file}: unreadable ({exc})") from None
    if not kinds <= COVERED_MODULES:
        raise ExportUnavailable(
            f"{model_dir} has modules the export does not cover: {sorted(kinds - COVERED_MODULES)}"
        )


def _export(model_dir: Path, spec: ModelSpec, target: Path) -> None:
    try:
        import onnx  # noqa: F401  (torch's exporter needs it)
        import torch
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        raise ExportUnavailable(f"exporting to ONNX needs torch and onnx: {exc}") from None
    if spec.trust_remote_code:
        raise ExportUnavailable(f"{spec.model_id} runs its own code; it stays on torch")
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    sample = tokenizer(PROBES[:2], padding=True, return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            hidden: torch.Tensor = self.model(
                **dict(zip(names, inputs, strict=True))
            ).last_hidden_state
            return hidden

    axes = {name: {0: "batch", 1: "sequence"} for name in [*names, "last_hidden_state"]}
    try:
        with torch.no_grad():
            torch.onnx.export(
                LastHiddenState().eval(),
                tuple(sample[n] for n in names),
                str(target),
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=OPSET,
                dynamo=False,
            )
    except Exception as exc:  # the exporter's failures have no common type
        raise ExportUnavailable(f"exporting {spec.model_id} to ONNX failed: {exc}") from None


def _prove_equal(candidate: Path, model_dir: Path, spec: ModelSpec, *, logs: bool) -> None:
    from core.embedding.onnx_runtime import OnnxEmbedder
    from core.embedding.torch_runtime import TorchEmbedder

    reference = TorchEmbedder(model_dir, spec, device="cpu", library_logs=logs)
    exported = OnnxEmbedder(candidate, model_dir, spec)
    # One batch: the probes pad to the longest, so masking is checked too.
    want = reference.embed_documents(PROBES)
    got = exported.embed_documents(PROBES)
    difference = float(np.abs(want - got).max())
    if not difference <= MAX_DIFFERENCE:
        raise ExportUnavailable(
            f"the ONNX export of {spec.model_id} differs from torch by {difference:.2e} "
            f"(allowed {MAX_DIFFERENCE:.0e}); it stays on torch"
        )


def _slug(model_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model_id).strip("-")
