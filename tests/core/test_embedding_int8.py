"""int8 through ONNX Runtime: which matrix multiplies the policy quantizes, the derived file
cached beside the fp32 export, and, for every precision `auto` picks on the machine running
the tests, cosine agreement with fp32 on real texts (the project's own code and docs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.embedding.models import GUARD_COSINE_MEAN, GUARD_COSINE_P1
from core.embedding.onnx_quantize import QuantPolicy, quantizable_nodes, quantized_path
from core.embedding.runtimes import load_local_embedder
from core.settings import Settings
from tests.support.paths import ROOT

onnx = pytest.importorskip("onnx")
helper = onnx.helper

WEIGHT_SUBLAYERS = (
    "attention/self/query",
    "attention/self/key",
    "attention/self/value",
    "attention/output/dense",
    "intermediate/dense",
    "output/dense",
)


def bert_like_graph(layers: int = 3) -> object:
    """The node names and operand kinds of a BERT export, without its arithmetic."""
    nodes, weights = [], []
    for layer in range(layers):
        for sub in WEIGHT_SUBLAYERS:
            weight = f"w_{layer}_{sub.replace('/', '_')}"
            weights.append(helper.make_tensor(weight, onnx.TensorProto.FLOAT, [1], [1.0]))
            name = f"/model/encoder/layer.{layer}/{sub}/MatMul"
            nodes.append(helper.make_node("MatMul", ["x", weight], ["y"], name=name))
        # Attention's own products multiply two activations: no weight to quantize.
        name = f"/model/encoder/layer.{layer}/attention/self/MatMul"
        nodes.append(helper.make_node("MatMul", ["q", "k"], ["s"], name=name))
    nodes.append(helper.make_node("Gather", ["emb", "ids"], ["e"], name="/model/embeddings/Gather"))
    weights.append(helper.make_tensor("emb", onnx.TensorProto.FLOAT, [1], [1.0]))
    return helper.make_model(helper.make_graph(nodes, "g", [], [], initializer=weights))


def test_only_weight_matmuls_are_candidates_never_embeddings_or_attention_products():
    chosen = quantizable_nodes(bert_like_graph(), QuantPolicy("all"))
    assert len(chosen) == 3 * len(WEIGHT_SUBLAYERS)
    assert not any("self/MatMul" in n or "embeddings" in n for n in chosen)


def test_the_policy_keeps_whole_layers_and_sublayers_in_fp32():
    policy = QuantPolicy("p", keep_layers=(-1,), keep_kinds=("output/dense",))
    chosen = quantizable_nodes(bert_like_graph(), policy)
    assert not any("/layer.2/" in n for n in chosen)  # the last layer
    # The FFN's down projection is kept; the attention's output projection is not.
    assert not any(n.endswith("/layer.0/output/dense/MatMul") for n in chosen)
    assert "/model/encoder/layer.0/attention/output/dense/MatMul" in chosen
    assert len(chosen) == 2 * (len(WEIGHT_SUBLAYERS) - 1)


def test_the_quantized_file_sits_beside_the_export_named_by_policy_and_version(tmp_path):
    export = tmp_path / "org-model-0123.onnx"
    path = quantized_path(export, QuantPolicy("ffn-down-fp32"))
    assert path.parent == tmp_path
    assert path.name.startswith("org-model-0123-int8-ffn-down-fp32-q")


def real_texts() -> list[str]:
    """Paragraphs of the docs and top-level blocks of the code: prose and code, fixed."""
    texts: list[str] = []
    for path in sorted((ROOT / "docs").glob("*.md"))[:4]:
        paragraphs = [p.strip() for p in path.read_text(encoding="utf-8").split("\n\n")]
        texts += [p for p in paragraphs if len(p) > 200][:8]
    for path in sorted((ROOT / "core" / "embedding").glob("*.py"))[:8]:
        blocks = path.read_text(encoding="utf-8").split("\n\n\n")
        texts += [b.strip() for b in blocks if len(b) > 200][:4]
    return texts


@pytest.mark.slow
def test_every_precision_auto_picks_here_agrees_with_fp32_on_real_texts(tmp_path: Path):
    texts = real_texts()
    assert len(texts) >= 40
    settings = Settings(model_cache_dir=tmp_path)
    auto = load_local_embedder(settings)
    if auto.precision == "fp32":
        pytest.skip(f"auto picks fp32 on this machine ({auto.runtime})")
    fp32 = load_local_embedder(settings.model_copy(update={"embedding_precision": "fp32"}))
    assert (fp32.runtime, fp32.precision) == (auto.runtime, "fp32")
    cosines = np.sum(auto.embed_documents(texts) * fp32.embed_documents(texts), axis=1)
    assert cosines.mean() >= GUARD_COSINE_MEAN
    assert np.percentile(cosines, 1) >= GUARD_COSINE_P1
    quantized = list(tmp_path.rglob("*-int8-*.onnx"))
    if auto.precision == "int8":  # derived once, beside the export, no partial file left
        assert len(quantized) == 1
        assert not list(tmp_path.rglob("*.partial"))
