"""A BERT encoder's ONNX graph, built from its safetensors and config.json without torch.

`built_model(model_dir, spec, cache_dir)` returns the cached graph of a model directory,
building it on first use with `build_graph`: the weights are read with safetensors' numpy
API and laid out as ONNX nodes with onnx's helper API (input ids, attention mask, token
type ids -> last hidden state, batch and sequence dynamic; pooling and normalisation stay
in the runtime). A model the graph cannot cover (another architecture, custom code, a
projection after pooling, no safetensors) raises `GraphUnavailable`, and the caller stays
on torch where the torch extra is installed.

Why build rather than export: torch's exporter needed torch (about 750 MB) in every
install for a once-per-model step; the graph of a BERT encoder is twenty-odd operators per
layer. No maintained library builds it without torch: optimum's ONNX exporter and
onnxruntime-genai's model builder both import torch and transformers (the latter covers
decoder LLMs and Whisper, no BERT), and onnxscript, torch-free, ships graph rewriters but
no builder from weights. The graph is proved equal to sentence-transformers' vectors by
tests/core/test_onnx_graph.py (dev tier, where torch is installed).

Node names follow torch's export of a Hugging Face BertModel ("/encoder/layer.3/attention/
output/dense/MatMul"): core.embedding.onnx_quantize picks the int8 MatMuls by them.

The cache file's name carries a fingerprint of the model's files (config, weights and
tokenizer: names, sizes, mtimes) and of GRAPH_VERSION, so a replaced model is built again;
writes are atomic (a temporary file, renamed), so concurrent first uses each produce a
whole file.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from core.embedding.base import RuntimeUnavailable
from core.embedding.models import ModelSpec, read_json

GRAPH_VERSION = 1  # bumped when the built graph changes (names the cached file)
OPSET = 17  # LayerNormalization is in the standard domain from 17
# sentence-transformers modules the graph reproduces: the transformer, then pooling and
# normalisation, which the runtime does itself.
COVERED_MODULES = {"Transformer", "Pooling", "Normalize"}
MODEL_TYPES = {"bert"}
FINGERPRINT_FILES = ("model.safetensors", "config.json", "tokenizer.json")
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT_NAME = "last_hidden_state"
# The activations transformers' BERT accepts (ACT2FN), as ONNX arithmetic.
ACTIVATIONS = {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu"}
# A checkpoint saved from a task model (BertForMaskedLM, ...) prefixes the encoder's names.
_PREFIXES = ("bert.", "model.")


class GraphUnavailable(RuntimeUnavailable):
    """This model cannot be run through ONNX Runtime here; torch it is, where installed."""


def built_model(model_dir: Path, spec: ModelSpec, cache_dir: Path) -> Path:
    """The model's ONNX file in `cache_dir`, built on first use."""
    target = graph_path(model_dir, spec, cache_dir)
    if target.is_file():
        return target
    if spec.trust_remote_code:
        raise GraphUnavailable(f"{spec.model_id} runs its own code; it stays on torch")
    check_covered(model_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        build_graph(model_dir, partial)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def graph_path(model_dir: Path, spec: ModelSpec, cache_dir: Path) -> Path:
    """Where the model's graph is (or will be) kept."""
    return cache_dir / f"{_slug(spec.model_id)}-{fingerprint(model_dir)}.onnx"


def fingerprint(model_dir: Path) -> str:
    digest = hashlib.sha256(f"graph {GRAPH_VERSION} opset {OPSET}".encode())
    for name in FINGERPRINT_FILES:
        path = model_dir / name
        if path.is_file():
            stat = path.stat()
            digest.update(f"{name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def check_covered(model_dir: Path) -> dict[str, Any]:
    """The model's config, if the graph covers the model; else `GraphUnavailable`, before
    any weight is read."""
    modules_file = model_dir / "modules.json"
    if modules_file.is_file():  # else a bare Hugging Face directory: transformer + pooling
        try:
            modules = json.loads(modules_file.read_text(encoding="utf-8"))
            kinds = {str(m["type"]).rsplit(".", 1)[-1] for m in modules}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise GraphUnavailable(f"{modules_file}: unreadable ({exc})") from None
        if not kinds <= COVERED_MODULES:
            raise GraphUnavailable(
                f"{model_dir} has modules the ONNX graph does not cover: "
                f"{sorted(kinds - COVERED_MODULES)}"
            )
    config = read_json(model_dir / "config.json")
    problems = []
    if config.get("model_type") not in MODEL_TYPES:
        problems.append(f"model_type {config.get('model_type')!r} (covered: bert)")
    if config.get("position_embedding_type", "absolute") != "absolute":
        problems.append(f"position_embedding_type {config['position_embedding_type']!r}")
    if config.get("hidden_act", "gelu") not in ACTIVATIONS:
        problems.append(f"hidden_act {config['hidden_act']!r}")
    if not (model_dir / "model.safetensors").is_file():
        problems.append("no model.safetensors")
    if problems:
        raise GraphUnavailable(
            f"{model_dir}: the ONNX graph covers BERT encoders in safetensors, not "
            + "; ".join(problems)
        )
    return config


def build_graph(model_dir: Path, target: Path) -> None:
    """Write the ONNX graph of the BERT encoder in `model_dir` (config.json and
    model.safetensors) to `target`, checked by onnx's checker."""
    try:
        import onnx
        from safetensors.numpy import load_file
    except ImportError as exc:
        raise GraphUnavailable(
            f"building the ONNX graph needs onnx and safetensors: {exc}"
        ) from None
    config = check_covered(model_dir)
    weights = encoder_weights(load_file(str(model_dir / "model.safetensors")))
    try:
        model = _Bert(config, weights).model()
    except KeyError as exc:
        raise GraphUnavailable(f"{model_dir}/model.safetensors has no tensor {exc}") from None
    onnx.checker.check_model(model, full_check=True)
    onnx.save_model(model, str(target))


def encoder_weights(tensors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The encoder's tensors by BertModel's names, in float32 (a checkpoint may be fp16)."""
    out = {}
    for name, value in tensors.items():
        for prefix in _PREFIXES:
            if name.startswith(prefix):
                name = name.removeprefix(prefix)
                break
        if name.startswith(("embeddings.", "encoder.")) and value.dtype.kind == "f":
            out[name] = value.astype(np.float32)
    return out


class _Bert:
    """BertModel's forward pass (transformers' modeling_bert, eager attention) as nodes."""

    def __init__(self, config: dict[str, Any], weights: dict[str, np.ndarray]) -> None:
        from onnx import TensorProto, helper, numpy_helper

        self._helper, self._numpy_helper, self._tensor = helper, numpy_helper, TensorProto
        self.config = config
        self.weights = weights
        self.hidden = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.act = str(config.get("hidden_act", "gelu"))
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []

    def model(self) -> Any:
        helper, tensor = self._helper, self._tensor
        hidden = self._embeddings()
        mask = self._mask_bias()
        for i in range(self.layers):
            hidden = self._layer(i, hidden, mask)
        self.nodes.append(helper.make_node("Identity", [hidden], [OUTPUT_NAME], name="/output"))
        dims = ["batch", "sequence"]
        graph = helper.make_graph(
            self.nodes,
            "bert_encoder",
            [helper.make_tensor_value_info(n, tensor.INT64, dims) for n in INPUT_NAMES],
            [helper.make_tensor_value_info(OUTPUT_NAME, tensor.FLOAT, [*dims, self.hidden])],
            self.initializers,
        )
        return helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", OPSET)],
            producer_name="rag-retrieve core.embedding.onnx_graph",
            producer_version=str(GRAPH_VERSION),
        )

    # -- building blocks ------------------------------------------------------------------

    def _node(self, op: str, name: str, inputs: list[str], **attrs: Any) -> str:
        output = f"{name}_output_0"
        self.nodes.append(self._helper.make_node(op, inputs, [output], name=name, **attrs))
        return output

    def _const(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(self._numpy_helper.from_array(value, name))
        return name

    def _weight(self, name: str, transpose: bool = False) -> str:
        # MatMul takes x @ W, so a Linear's (out, in) weight is stored as (in, out).
        value = self.weights[name]
        return self._const(name, np.ascontiguousarray(value.T) if transpose else value)

    def _linear(self, scope: str, x: str, module: str) -> str:
        product = self._node(
            "MatMul", f"{scope}/MatMul", [x, self._weight(f"{module}.weight", True)]
        )
        return self._node("Add", f"{scope}/Add", [product, self._weight(f"{module}.bias")])

    def _layer_norm(self, scope: str, x: str, module: str) -> str:
        inputs = [x, self._weight(f"{module}.weight"), self._weight(f"{module}.bias")]
        return self._node(
            "LayerNormalization", f"{scope}/LayerNormalization", inputs, axis=-1, epsilon=self.eps
        )

    def _scalar(self, name: str, value: float) -> str:
        return self._const(name, np.array(value, dtype=np.float32))

    # -- the model ------------------------------------------------------------------------

    def _embeddings(self) -> str:
        scope = "/embeddings"
        words = self._node(
            "Gather",
            f"{scope}/word_embeddings/Gather",
            [self._weight("embeddings.word_embeddings.weight"), "input_ids"],
        )
        types = self._node(
            "Gather",
            f"{scope}/token_type_embeddings/Gather",
            [self._weight("embeddings.token_type_embeddings.weight"), "token_type_ids"],
        )
        # Absolute positions 0..sequence-1: the first rows of the position table.
        length = self._node("Shape", f"{scope}/Shape", ["input_ids"], start=1, end=2)
        zero = self._const(f"{scope}/zero", np.array([0], dtype=np.int64))
        table = self._weight("embeddings.position_embeddings.weight")
        positions = self._node("Slice", f"{scope}/position_embeddings/Slice", [table, zero, length])
        summed = self._node("Add", f"{scope}/Add", [words, types])
        summed = self._node("Add", f"{scope}/Add_1", [summed, positions])
        return self._layer_norm(f"{scope}/LayerNorm", summed, "embeddings.LayerNorm")

    def _mask_bias(self) -> str:
        """(batch, 1, 1, sequence): 0 where the mask is 1, float32's minimum where it is 0,
        added to every head's scores (as transformers' extended attention mask)."""
        scope = "/mask"
        mask = self._node("Cast", f"{scope}/Cast", ["attention_mask"], to=self._tensor.FLOAT)
        axes = self._const(f"{scope}/axes", np.array([1, 2], dtype=np.int64))
        mask = self._node("Unsqueeze", f"{scope}/Unsqueeze", [mask, axes])
        inverted = self._node("Sub", f"{scope}/Sub", [self._scalar(f"{scope}/one", 1.0), mask])
        lowest = self._scalar(f"{scope}/lowest", float(np.finfo(np.float32).min))
        return self._node("Mul", f"{scope}/Mul", [inverted, lowest])

    def _layer(self, i: int, x: str, mask: str) -> str:
        scope, module = f"/encoder/layer.{i}", f"encoder.layer.{i}"
        attended = self._attention(f"{scope}/attention/self", x, mask, f"{module}.attention.self")
        projected = self._linear(
            f"{scope}/attention/output/dense", attended, f"{module}.attention.output.dense"
        )
        residual = self._node("Add", f"{scope}/attention/output/Add", [projected, x])
        x = self._layer_norm(
            f"{scope}/attention/output/LayerNorm", residual, f"{module}.attention.output.LayerNorm"
        )
        up = self._linear(f"{scope}/intermediate/dense", x, f"{module}.intermediate.dense")
        up = self._activation(f"{scope}/intermediate/intermediate_act_fn", up)
        down = self._linear(f"{scope}/output/dense", up, f"{module}.output.dense")
        residual = self._node("Add", f"{scope}/output/Add", [down, x])
        return self._layer_norm(f"{scope}/output/LayerNorm", residual, f"{module}.output.LayerNorm")

    def _attention(self, scope: str, x: str, mask: str, module: str) -> str:
        head_dim = self.hidden // self.heads
        # Reshape's 0 copies the input's dimension: batch and sequence stay dynamic.
        split = self._const(
            f"{scope}/split_heads", np.array([0, 0, self.heads, head_dim], np.int64)
        )
        merged = self._const(f"{scope}/merge_heads", np.array([0, 0, self.hidden], np.int64))

        def heads(kind: str, perm: list[int]) -> str:
            projected = self._linear(f"{scope}/{kind}", x, f"{module}.{kind}")
            shaped = self._node("Reshape", f"{scope}/{kind}/Reshape", [projected, split])
            return self._node("Transpose", f"{scope}/{kind}/Transpose", [shaped], perm=perm)

        query = heads("query", [0, 2, 1, 3])  # (batch, heads, sequence, head_dim)
        key = heads("key", [0, 2, 3, 1])  # (batch, heads, head_dim, sequence)
        value = heads("value", [0, 2, 1, 3])
        scores = self._node("MatMul", f"{scope}/MatMul", [query, key])
        scale = self._scalar(f"{scope}/scale", 1.0 / math.sqrt(head_dim))
        scores = self._node("Mul", f"{scope}/Mul", [scores, scale])
        scores = self._node("Add", f"{scope}/Add", [scores, mask])
        probs = self._node("Softmax", f"{scope}/Softmax", [scores], axis=-1)
        context = self._node("MatMul", f"{scope}/MatMul_1", [probs, value])
        context = self._node("Transpose", f"{scope}/Transpose", [context], perm=[0, 2, 1, 3])
        return self._node("Reshape", f"{scope}/Reshape", [context, merged])

    def _activation(self, scope: str, x: str) -> str:
        if self.act == "relu":
            return self._node("Relu", f"{scope}/Relu", [x])
        half = self._scalar(f"{scope}/half", 0.5)
        one = self._scalar(f"{scope}/one", 1.0)
        if self.act == "gelu":  # exact: x * 0.5 * (1 + erf(x / sqrt(2)))
            scaled = self._node(
                "Div", f"{scope}/Div", [x, self._scalar(f"{scope}/sqrt2", math.sqrt(2.0))]
            )
            inner = self._node("Erf", f"{scope}/Erf", [scaled])
        else:  # tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
            cube = self._node("Pow", f"{scope}/Pow", [x, self._scalar(f"{scope}/three", 3.0)])
            cube = self._node(
                "Mul", f"{scope}/Mul_cube", [cube, self._scalar(f"{scope}/c", 0.044715)]
            )
            inner = self._node("Add", f"{scope}/Add_cube", [x, cube])
            root = self._scalar(f"{scope}/root", math.sqrt(2.0 / math.pi))
            inner = self._node("Mul", f"{scope}/Mul_root", [inner, root])
            inner = self._node("Tanh", f"{scope}/Tanh", [inner])
        shifted = self._node("Add", f"{scope}/Add", [inner, one])
        gated = self._node("Mul", f"{scope}/Mul", [x, shifted])
        return self._node("Mul", f"{scope}/Mul_1", [gated, half])


def _slug(model_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model_id).strip("-")
