"""An int8 version of a model's ONNX graph, derived from the fp32 file and cached beside it.

`quantized_model(fp32_file)` returns `<graph>-int8-<policy>.onnx`, making it on first use
with ONNX Runtime's dynamic quantization: weights int8 per output channel, activations
quantized per batch at run time. Only the dense layers' weight matrix multiplies are
candidates (`QuantPolicy` says which of them stay fp32); the embeddings (Gather), layer
norms, softmax and the attention products of two activations always stay fp32.

Why not ORT's defaults: quantizing every MatMul with one scale per tensor moved MiniLM's
vectors to a cosine of 0.93 (min 0.89) against fp32 over 256 SciFact abstracts (issue 29).
The policy actually used per model, and what it measured, is in the model registry
(core/embedding/models.py, `PrecisionGuard`).

Writes are atomic (a temporary file, renamed) like the graph's: concurrent first uses each
produce a whole file, and a killed run leaves no half-written model behind.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from core.embedding.base import RuntimeUnavailable
from core.embedding.library_output import library_output

QUANTIZE_VERSION = 1  # bumped when the quantization itself changes (names the cached file)


@dataclass(frozen=True)
class QuantPolicy:
    """Which weight matrix multiplies of a BERT-shaped graph stay fp32.

    `keep_layers`: encoder layers left whole in fp32 (negative counts from the last);
    `keep_kinds`: sub-layers left fp32 in every layer, by their node name (e.g.
    "output/dense", the FFN's down projection, whose inputs after GELU have the widest
    range); `reduce_range`: 7-bit weights, which AVX2 without VNNI needs to keep its
    16-bit accumulation (VPMADDUBSW) from saturating.
    """

    name: str
    keep_layers: tuple[int, ...] = ()
    keep_kinds: tuple[str, ...] = ()
    reduce_range: bool = False


_LAYER = re.compile(r"/layer\.(\d+)/")


def quantized_path(fp32_file: Path, policy: QuantPolicy) -> Path:
    return fp32_file.with_name(f"{fp32_file.stem}-int8-{policy.name}-q{QUANTIZE_VERSION}.onnx")


def quantized_model(fp32_file: Path, policy: QuantPolicy, *, logs: bool = False) -> Path:
    """The int8 file derived from `fp32_file` under `policy`, made on first use."""
    target = quantized_path(fp32_file, policy)
    if target.is_file():
        return target
    try:
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise RuntimeUnavailable(f"int8 needs onnx and onnxruntime's quantization: {exc}") from None
    nodes = quantizable_nodes(onnx.load(str(fp32_file), load_external_data=False), policy)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        with library_output(logs):
            quantize_dynamic(
                str(fp32_file),
                str(partial),
                weight_type=QuantType.QInt8,
                per_channel=True,
                reduce_range=policy.reduce_range,
                op_types_to_quantize=["MatMul"],
                nodes_to_quantize=nodes,
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def quantizable_nodes(model: object, policy: QuantPolicy) -> list[str]:
    """Names of the MatMuls with a weight (initializer) operand that `policy` quantizes."""
    graph = model.graph  # type: ignore[attr-defined]
    weights = {init.name for init in graph.initializer}
    layers = sorted(
        {int(m.group(1)) for node in graph.node if (m := _LAYER.search(node.name)) is not None}
    )
    kept = {layers[i] for i in policy.keep_layers if -len(layers) <= i < len(layers)}
    chosen: list[str] = []
    for node in graph.node:
        if node.op_type != "MatMul" or not any(i in weights for i in node.input):
            continue
        match = _LAYER.search(node.name)
        if match is None or int(match.group(1)) in kept:
            continue
        # Anchored at the layer: "output/dense" is the FFN's, not "attention/output/dense".
        if any(f"{match.group(0)}{kind}/" in node.name for kind in policy.keep_kinds):
            continue
        chosen.append(node.name)
    return chosen


# The policy int8 uses (its guard figures are in the model registry). Measured on MiniLM over
# 200 SciFact and CoSQA texts (cosine to fp32 mean / 1st percentile): every weight MatMul
# 0.993 / 0.989; with 7-bit weights 0.994 / 0.990; also keeping the last layer fp32
# 0.994 / 0.991; keeping the FFN down projection fp32 in every layer 0.996 / 0.994, with 7-bit
# weights 0.997 / 0.995. The down projection's input (after GELU) has the widest range of
# any activation, and one dynamic scale per tensor spends the 8 bits on its outliers. That
# last policy ("ffn-down-fp32-rr") held the cosine half over 2,000 chunks (0.9969 / 0.9947)
# but moved vector nDCG@10 by -0.0105 (HotpotQA), -0.0088 (SciFact), -0.0033 (CoSQA), so this
# one also keeps the attention output projections and the whole last layer in fp32 (int8:
# the Q, K, V and FFN up projections of layers 0-4, about half the linear FLOPs).
INT8_POLICY = QuantPolicy(
    "conservative",
    keep_layers=(-1,),
    keep_kinds=("output/dense", "attention/output/dense"),
    reduce_range=True,
)
