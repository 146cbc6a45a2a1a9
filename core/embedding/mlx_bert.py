"""A BERT encoder's forward pass in MLX, from its safetensors and config.json.

The MLX runtime's model (Apple Silicon). mlx-embeddings, which did this before, requires
mlx-vlm, and with it transformers, datasets, mlx-audio and opencv: several hundred MB on
every Mac install for one encoder's forward pass. The forward pass is transformers'
BertModel (eager attention), the same one core/embedding/onnx_graph.py lays out as ONNX,
over the same weights and covered architectures (`check_covered`, `encoder_weights`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from core.embedding.onnx_graph import GraphUnavailable, check_covered, encoder_weights


class MLXBert:
    """`model(input_ids, attention_mask, token_type_ids)` -> the last hidden state, all
    (batch, sequence) mx arrays of integers in, (batch, sequence, hidden) out."""

    def __init__(self, model_dir: Path, dtype: Any = None) -> None:
        import mlx.core as mx
        from safetensors.numpy import load_file

        self._mx = mx
        config = check_covered(model_dir)
        weights = encoder_weights(load_file(str(model_dir / "model.safetensors")))
        self.dtype = dtype or mx.float32
        self.hidden = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.act = str(config.get("hidden_act", "gelu"))
        try:
            self._w = {name: self._array(weights, name) for name in self._names()}
        except KeyError as exc:
            raise GraphUnavailable(f"{model_dir}/model.safetensors has no tensor {exc}") from None

    def _names(self) -> list[str]:
        names = [
            f"embeddings.{part}"
            for part in (
                "word_embeddings.weight",
                "position_embeddings.weight",
                "token_type_embeddings.weight",
                "LayerNorm.weight",
                "LayerNorm.bias",
            )
        ]
        modules = (
            "attention.self.query",
            "attention.self.key",
            "attention.self.value",
            "attention.output.dense",
            "attention.output.LayerNorm",
            "intermediate.dense",
            "output.dense",
            "output.LayerNorm",
        )
        for i in range(self.layers):
            names += [f"encoder.layer.{i}.{m}.{p}" for m in modules for p in ("weight", "bias")]
        return names

    def _array(self, weights: dict[str, np.ndarray], name: str) -> Any:
        value = weights[name]
        # A Linear's (out, in) weight is kept as (in, out): x @ W without a transpose per call.
        if name.endswith(".weight") and value.ndim == 2 and "embeddings" not in name:
            value = np.ascontiguousarray(value.T)
        return self._mx.array(value).astype(self.dtype)

    def __call__(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
        mx, w = self._mx, self._w
        length = input_ids.shape[1]
        x = (
            w["embeddings.word_embeddings.weight"][input_ids]
            + w["embeddings.token_type_embeddings.weight"][token_type_ids]
            + w["embeddings.position_embeddings.weight"][:length]
        )
        x = self._layer_norm(x, "embeddings.LayerNorm")
        # 0 where the mask is 1, the dtype's lowest where it is 0, added to every head's
        # scores (transformers' extended attention mask).
        lowest = float(np.finfo(np.float16 if self.dtype == mx.float16 else np.float32).min)
        bias = (1 - attention_mask[:, None, None, :].astype(self.dtype)) * lowest
        for i in range(self.layers):
            x = self._layer(f"encoder.layer.{i}", x, bias)
        return x

    def _linear(self, x: Any, module: str) -> Any:
        return x @ self._w[f"{module}.weight"] + self._w[f"{module}.bias"]

    def _layer_norm(self, x: Any, module: str) -> Any:
        weight, bias = self._w[f"{module}.weight"], self._w[f"{module}.bias"]
        return self._mx.fast.layer_norm(x, weight, bias, self.eps)

    def _layer(self, module: str, x: Any, bias: Any) -> Any:
        attended = self._attention(x, bias, f"{module}.attention.self")
        x = self._layer_norm(
            self._linear(attended, f"{module}.attention.output.dense") + x,
            f"{module}.attention.output.LayerNorm",
        )
        up = self._activation(self._linear(x, f"{module}.intermediate.dense"))
        return self._layer_norm(
            self._linear(up, f"{module}.output.dense") + x, f"{module}.output.LayerNorm"
        )

    def _attention(self, x: Any, bias: Any, module: str) -> Any:
        mx = self._mx
        batch, length = x.shape[0], x.shape[1]
        head_dim = self.hidden // self.heads

        def heads(kind: str) -> Any:  # (batch, heads, sequence, head_dim)
            projected = self._linear(x, f"{module}.{kind}")
            return projected.reshape(batch, length, self.heads, head_dim).transpose(0, 2, 1, 3)

        # MLX's fused attention (softmax in float32 whatever the weights' dtype), the kernel
        # that runs it on the Apple GPU; `bias` is the additive padding mask.
        context = mx.fast.scaled_dot_product_attention(
            heads("query"), heads("key"), heads("value"), scale=1.0 / math.sqrt(head_dim), mask=bias
        )
        return context.transpose(0, 2, 1, 3).reshape(batch, length, self.hidden)

    def _activation(self, x: Any) -> Any:
        mx = self._mx
        if self.act == "relu":
            return mx.maximum(x, 0)
        if self.act == "gelu":  # exact: x * 0.5 * (1 + erf(x / sqrt(2)))
            return x * 0.5 * (1 + mx.erf(x / math.sqrt(2.0)))
        # tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)
        return 0.5 * x * (1 + mx.tanh(inner))
