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


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture(scope="module")
def fp32_vectors(model_cache: Path) -> np.ndarray:
    settings = Settings(model_cache_dir=model_cache, embedding_precision="fp32")
    fp32 = load_local_embedder(settings, "onnx")
    assert fp32.precision == "fp32"
    return fp32.embed_documents(real_texts())


def assert_within_cosine_guard(vectors: np.ndarray, reference: np.ndarray) -> None:
    cosines = np.sum(vectors * reference, axis=1)
    assert cosines.mean() >= GUARD_COSINE_MEAN
    assert np.percentile(cosines, 1) >= GUARD_COSINE_P1


@pytest.mark.slow
def test_int8_agrees_with_fp32_on_real_texts_and_is_derived_once(model_cache, fp32_vectors):
    settings = Settings(model_cache_dir=model_cache, embedding_precision="int8")
    int8 = load_local_embedder(settings, "onnx")
    assert (int8.runtime, int8.precision) == ("onnx", "int8")
    assert_within_cosine_guard(int8.embed_documents(real_texts()), fp32_vectors)
    load_local_embedder(settings, "onnx")  # a second load reuses the file
    assert len(list(model_cache.rglob("*-int8-*.onnx"))) == 1
    assert not list(model_cache.rglob("*.partial"))


@pytest.mark.slow
def test_every_precision_auto_picks_here_agrees_with_fp32_on_real_texts(model_cache, fp32_vectors):
    auto = load_local_embedder(Settings(model_cache_dir=model_cache), "onnx")
    if auto.precision == "fp32":
        pytest.skip("auto picks fp32 on this machine: no lower precision held the guard")
    assert_within_cosine_guard(auto.embed_documents(real_texts()), fp32_vectors)
