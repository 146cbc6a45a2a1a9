"""The ONNX graph of a BERT encoder, built from model.safetensors and config.json without
torch: valid by onnx's checker, embedding as sentence-transformers does (dev tier, where torch
is installed), its dense layers named as int8 quantization expects, and any model it cannot
cover refused before a weight is read."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.embedding.models import model_spec
from core.embedding.onnx_graph import GraphUnavailable, built_model, check_covered
from core.embedding.onnx_quantize import INT8_POLICY, quantizable_nodes
from core.settings import Settings
from tests.support.models import default_model_dir
from tests.support.paths import ROOT, SHARED_DATA

MINILM = Path(default_model_dir())

BUILD_AND_EMBED = """
import json, sys
from pathlib import Path
import onnx
from core.embedding.models import model_spec
from core.embedding.onnx_graph import build_graph
from core.embedding.onnx_runtime import OnnxEmbedder
model_dir, target = Path(sys.argv[1]), Path(sys.argv[2])
build_graph(model_dir, target)
onnx.checker.check_model(str(target), full_check=True)
vectors = OnnxEmbedder(target, model_dir, model_spec(model_dir)).embed_documents(
    ["How do I persist a SwiftData model?", "def area(r):\\n    return 3.14159 * r * r"]
)
print(json.dumps({
    "shape": list(vectors.shape),
    "norms": [float(n) for n in (vectors ** 2).sum(axis=1) ** 0.5],
    "cosine": float(vectors[0] @ vectors[1]),
    "imported": sorted(m for m in ("torch", "transformers", "sentence_transformers")
                       if m in sys.modules),
}))
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, dict]:
    """MiniLM's graph built and run in a fresh process, with what that process imported."""
    target = tmp_path_factory.mktemp("graph") / "minilm.onnx"
    out = subprocess.run(
        [sys.executable, "-c", BUILD_AND_EMBED, str(MINILM), str(target)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return target, json.loads(out.stdout.strip().splitlines()[-1])


def test_the_graph_is_built_from_the_weights_alone_and_embeds_to_unit_vectors(built):
    _, report = built
    assert report["imported"] == []
    assert report["shape"] == [2, 384]
    np.testing.assert_allclose(report["norms"], [1.0, 1.0], atol=1e-5)
    assert report["cosine"] < 0.9  # two unrelated texts: the vectors carry the text


def test_the_graph_keeps_the_runtime_contract(built):
    onnx = pytest.importorskip("onnx")
    graph = onnx.load(str(built[0]), load_external_data=False).graph
    assert [i.name for i in graph.input] == ["input_ids", "attention_mask", "token_type_ids"]
    assert [o.name for o in graph.output] == ["last_hidden_state"]
    dims = [[d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in graph.input]
    assert dims == [["batch", "sequence"]] * 3


def test_int8_quantizes_the_dense_layers_its_policy_names(built):
    onnx = pytest.importorskip("onnx")
    nodes = quantizable_nodes(onnx.load(str(built[0])), INT8_POLICY)
    # The policy: Q, K, V and the FFN's up projection of every layer but the last (of 6).
    kinds = (
        "attention/self/query",
        "attention/self/key",
        "attention/self/value",
        "intermediate/dense",
    )
    assert sorted(nodes) == sorted(
        f"/encoder/layer.{i}/{kind}/MatMul" for i in range(5) for kind in kinds
    )


def bare_model(tmp_path: Path, config: dict, modules: list[dict] | None = None) -> Path:
    """A model directory of config (and modules) only: refusals must come before weights."""
    model = tmp_path / "model-dir"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(config))
    if modules is not None:
        (model / "modules.json").write_text(json.dumps(modules))
    return model


def test_a_projection_after_pooling_is_refused_before_any_work(tmp_path):
    config = json.loads((MINILM / "config.json").read_text())
    modules = json.loads((MINILM / "modules.json").read_text())
    modules.append(
        {"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"}
    )
    model = bare_model(tmp_path, config, modules)
    with pytest.raises(GraphUnavailable, match="Dense"):
        built_model(model, model_spec(model), tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"model_type": "xlm-roberta"}, "xlm-roberta"),
        ({"position_embedding_type": "relative_key"}, "relative_key"),
        ({"hidden_act": "silu"}, "silu"),
    ],
)
def test_what_the_graph_does_not_cover_is_named(tmp_path, change, named):
    config = {**json.loads((MINILM / "config.json").read_text()), **change}
    with pytest.raises(GraphUnavailable, match=named) as refused:
        check_covered(bare_model(tmp_path, config))
    assert "model.safetensors" in str(refused.value)


def real_chunks(count: int = 512, seed: int = 39) -> list[str]:
    """`count` chunks as an ingest embeds them: SciFact abstracts and Swift book chapters
    (prose), CoSQA functions and this repository's own modules (code)."""
    from chunkers.embedding_text import embedding_text
    from chunkers.parallel import ChunkSizes, chunk_documents
    from chunkers.sources.discovery import discover
    from chunkers.sources.reading import Defaults, read_all
    from query.eval.beir import load_beir
    from query.eval.index import to_document

    for name in ("scifact", "cosqa", "swift-docs"):
        if not (SHARED_DATA / name).is_dir():
            pytest.skip(f"no ../shared/data/{name}")
    docs = []
    for name, split, take in (("scifact", "train", 250), ("cosqa", "dev", 300)):
        corpus = list(load_beir(SHARED_DATA / name, split).corpus.items())[:take]
        docs += [to_document(doc_id, title, text) for doc_id, (title, text) in corpus]
    chapters = sorted((SHARED_DATA / "swift-docs" / "swift-book").rglob("*.md"))[:10]
    modules = [ROOT / "core" / "embedding" / n for n in ("onnx_graph.py", "base.py", "runtimes.py")]
    docs += read_all(discover([*chapters, *modules]), Defaults()).documents
    sizes = ChunkSizes.from_settings(Settings())
    chunks = [c for r in chunk_documents(docs, sizes) for c in r.chunks]
    texts = [embedding_text(c.context, c.content, c.language) for c in chunks]
    return random.Random(seed).sample(texts, count)


@pytest.mark.slow
def test_the_graph_embeds_512_real_chunks_as_sentence_transformers_does(built):
    from core.embedding.onnx_runtime import OnnxEmbedder
    from core.embedding.torch_runtime import TorchEmbedder

    texts = real_chunks()
    spec = model_spec(MINILM)
    want = TorchEmbedder(MINILM, spec, device="cpu").embed_documents(texts)
    got = OnnxEmbedder(built[0], MINILM, spec).embed_documents(texts)
    cosines = np.einsum("ij,ij->i", want, got)
    assert len(texts) == 512
    assert cosines.min() >= 0.99999, f"lowest cosine {cosines.min():.7f}"


def test_a_task_models_checkpoint_gives_the_encoders_float32_tensors():
    from core.embedding.onnx_graph import encoder_weights

    half = np.ones((2, 3), dtype=np.float16)
    tensors = encoder_weights(
        {
            "bert.embeddings.word_embeddings.weight": half,
            "bert.encoder.layer.0.output.dense.bias": half[0],
            "bert.embeddings.position_ids": np.arange(3, dtype=np.int64),
            "bert.pooler.dense.weight": half,
            "cls.predictions.bias": half[0],
        }
    )
    assert sorted(tensors) == [
        "embeddings.word_embeddings.weight",
        "encoder.layer.0.output.dense.bias",
    ]
    assert {t.dtype for t in tensors.values()} == {np.dtype(np.float32)}


@pytest.mark.slow
@pytest.mark.parametrize("activation", ["gelu", "gelu_new", "relu"])
def test_other_bert_shapes_embed_as_transformers_does(tmp_path, activation):
    """Sizes and activations MiniLM does not have (bge, e5 and arctic-embed are BERTs of
    other sizes), checked against transformers' BertModel with random weights."""
    import torch
    from transformers import BertConfig, BertModel

    from core.embedding.onnx_graph import build_graph

    torch.manual_seed(39)
    config = BertConfig(
        vocab_size=120,
        hidden_size=64,
        num_hidden_layers=3,
        num_attention_heads=8,
        intermediate_size=96,
        max_position_embeddings=40,
        hidden_act=activation,
        layer_norm_eps=1e-7,
    )
    reference = BertModel(config, add_pooling_layer=False).eval()
    reference.save_pretrained(tmp_path, safe_serialization=True)
    build_graph(tmp_path, tmp_path / "graph.onnx")

    import onnxruntime

    ids = torch.randint(1, 120, (3, 17))
    mask = torch.ones_like(ids)
    mask[1, 9:] = 0  # a padded row: masked positions must not reach the others
    types = torch.zeros_like(ids)
    types[2, 5:] = 1
    with torch.no_grad():
        want = reference(input_ids=ids, attention_mask=mask, token_type_ids=types)
    session = onnxruntime.InferenceSession(str(tmp_path / "graph.onnx"))
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    [got] = session.run(None, {k: v.numpy() for k, v in feeds.items()})
    kept = mask.numpy().astype(bool)  # padded positions' states are never pooled
    np.testing.assert_allclose(got[kept], want.last_hidden_state.numpy()[kept], atol=2e-5)
