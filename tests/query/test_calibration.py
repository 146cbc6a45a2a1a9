"""Per-index fusion calibration (query/calibration): how it scores, decides and records, on
a real SQLite index."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from chunkers.embedding_text import embedding_text
from core.settings import Settings
from core.store.filters import SearchFilter
from core.store.modes import LONG_LIVED
from core.store.open import open_store
from query.calibration.after_ingest import calibrate_if_changed
from query.calibration.calibrate import (
    VERSION,
    Calibration,
    CalibrationError,
    calibrate_index,
    needs_calibration,
    reciprocal_rank,
)
from query.calibration.decision import (
    MIN_PAIRS,
    Shape,
    choose,
    choose_floor,
    choose_usage_floor,
    lower_bound,
)
from query.calibration.pairs import Pair
from query.calibration.shadow import SampleStatistics
from query.cli.calibrate import calibrate_main
from query.retrieval.rules import auto_rule, calibrated_rule
from query.retrieval.status import status_of
from tests.support.fake_runtime import FakeEmbedder
from tests.support.store_contract import batch_of, make_chunk

WORDS = [
    "amber",
    "basalt",
    "cedar",
    "delta",
    "ember",
    "fjord",
    "garnet",
    "harbor",
    "indigo",
    "jasper",
    "kelp",
    "lumen",
]


def guide_chunks(documents: int) -> list:
    """Two sections per document, each under a heading no other document has."""
    chunks = []
    for d in range(documents):
        first, second = WORDS[d % 12], WORDS[(d // 12) % 12]
        for s in range(2):
            heading = f"{first} {second} section{d}x{s}"
            body = " ".join(
                f"{WORDS[(d + s + i) % 12]} note{d} paragraph{s} walks through part {i}"
                for i in range(4)
            )
            chunks.append(
                make_chunk(
                    f"g{d}-{s}",
                    f"doc{d}",
                    chunk_index=s,
                    context=f"Guide {d} › {heading}",
                    content=body,
                    path=f"guide-{d}.md",
                    content_hash=f"h{d}-{s}",
                )
            )
    return chunks


@pytest.fixture
def built(tmp_path: Path):
    """A real SQLite index of 260 chunks embedded by a deterministic fake model."""
    embedder = FakeEmbedder(dim=8, batch_size=64)
    store = open_store(str(tmp_path / "store"), Settings(), modes=LONG_LIVED)
    index = store.open_index("guides", create=True)
    index.bind_model(embedder.model_id, embedder.dim)
    chunks = guide_chunks(130)
    vectors = embedder.embed_documents([embedding_text(c.context, c.content) for c in chunks])
    index.apply(batch_of(chunks, vectors=np.asarray(vectors)))
    yield store, index, embedder
    index.close()


def test_a_text_is_scored_as_the_store_scores_it_when_the_sample_is_the_whole_index(built):
    _, index, _ = built
    rows = index.fetch(index.sample_chunk_ids(10_000))
    bodies = [f"{r['context']} {r['content']}" for r in rows.values()]
    stats = SampleStatistics(bodies, len(rows), index.bm25_idf)
    hits = index.bm25_search("amber note7 paragraph1", SearchFilter(), 5)
    for hit in hits:
        row = rows[hit.chunk_id]
        assert stats.bm25("amber note7 paragraph1", f"{row['context']} {row['content']}") == (
            pytest.approx(hit.score, rel=1e-9)
        )


def test_calibration_records_its_rule_and_evidence_in_the_index(built):
    store, index, embedder = built
    found = calibrate_index(index, embedder, depth=50, rrf_k=60, log=lambda line: None)
    assert found.pairs >= MIN_PAIRS and found.sources == {"heading": found.pairs}
    assert set(found.mrr) == {"adaptive", "rrf"}
    assert Calibration.from_json(index.fusion_calibration()) == found
    shown = status_of(store)["indexes"]["guides"]["fusion"]
    assert shown["rule"] == found.rule and shown["calibrated"] is True


def test_calibrating_again_embeds_no_pair_text_the_cache_holds(built, tmp_path):
    _, index, embedder = built
    cache_file = tmp_path / "cache" / "embeddings.sqlite"
    first = calibrate_index(
        index, embedder, depth=50, rrf_k=60, log=lambda line: None, cache_file=cache_file
    )
    embedded = sum(map(len, embedder.batches))
    again = calibrate_index(
        index, embedder, depth=50, rrf_k=60, log=lambda line: None, cache_file=cache_file
    )
    # Only the pairs' questions are embedded again (queries are not cached), not their texts.
    assert sum(map(len, embedder.batches)) - embedded == first.pairs
    assert again.rule == first.rule


def test_calibration_reads_nothing_but_the_store(built, tmp_path):
    """No queries, judgements or other files: only the index (and what Python itself loads)."""
    store, index, embedder = built
    opened: list[str] = []
    watching = [True]

    def hook(event: str, args: tuple) -> None:
        if watching[0] and event == "open" and isinstance(args[0], (str, bytes, Path)):
            opened.append(str(args[0]))

    sys.addaudithook(hook)
    try:
        calibrate_index(index, embedder, depth=50, rrf_k=60, log=lambda line: None)
    finally:
        watching[0] = False
    outside = [
        p for p in opened if not p.startswith(str(tmp_path)) and not p.startswith(sys.prefix)
    ]
    assert outside == []


def test_an_index_embedded_with_another_model_is_refused(built):
    _, index, _ = built
    other = FakeEmbedder(dim=8)
    other.model_id = "someone/else"
    with pytest.raises(CalibrationError, match="someone/else"):
        calibrate_index(index, other, depth=50, rrf_k=60, log=lambda line: None)


def test_rrf_is_chosen_only_when_its_gain_is_surely_large_enough_to_count():
    better = {"adaptive": [0.5] * 150, "rrf": [0.5] * 100 + [1.0] * 50}
    noisy = {"adaptive": [0.0, 1.0] * 75, "rrf": [1.0, 0.0] * 75}
    worse = {"adaptive": better["rrf"], "rrf": better["adaptive"]}
    assert choose(better)[0] == "rrf"
    assert choose(noisy)[0] == "adaptive"
    assert choose(worse)[0] == "adaptive"
    sliver = {"adaptive": [0.5] * 200, "rrf": [0.505] * 200}  # sure, but below 0.01
    assert choose(sliver)[0] == "adaptive"


DOCUMENTATION = Shape(chunks_per_document=21.0, prose_share=1.0)
CODE = Shape(chunks_per_document=8.0, prose_share=0.1)
ABSTRACTS = Shape(chunks_per_document=1.2, prose_share=1.0)


def test_where_the_pairs_cannot_decide_the_default_rule_stays_whatever_the_index_shape():
    close = {"adaptive": [0.5] * 200, "rrf": [0.5] * 190 + [0.55] * 10}  # +0.0025
    for shape in (DOCUMENTATION, CODE, ABSTRACTS):
        assert choose(close, shape)[0::2] == ("adaptive", "default")


def test_pairs_that_are_sure_decide_whatever_the_index_shape():
    better = {"adaptive": [0.5] * 150, "rrf": [0.5] * 100 + [1.0] * 50}
    worse = {"adaptive": better["rrf"], "rrf": better["adaptive"]}
    assert choose(better, CODE)[0::2] == ("rrf", "pairs")
    assert choose(worse, DOCUMENTATION)[0::2] == ("adaptive", "pairs")


def test_the_identifier_floor_goes_only_when_enough_pairs_say_surely_that_it_costs():
    assert choose_floor([0.5] * 40, [1.0] * 40)[0] is False
    assert choose_floor([0.5] * 20, [1.0] * 20)[0] is True  # too few pairs name one
    assert choose_floor([0.5, 1.0] * 20, [1.0, 0.5] * 20)[0] is True  # no sure cost


def test_the_usage_floor_applies_to_an_index_that_is_mostly_code():
    assert choose_usage_floor(CODE)[0] is True
    assert choose_usage_floor(DOCUMENTATION)[0] is False
    assert choose_usage_floor(Shape(chunks_per_document=3.0, prose_share=0.6))[0] is False


def test_calibration_records_that_an_index_of_markdown_takes_no_usage_floor(built):
    store, index, embedder = built
    found = calibrate_index(index, embedder, depth=50, rrf_k=60, log=lambda line: None)
    assert found.usage_floor is False and "no usage floor" in found.reason
    assert status_of(store)["indexes"]["guides"]["fusion"]["usage_floor"] is False


def test_a_record_of_an_earlier_version_is_calibrated_again():
    old = json.loads(Calibration("rrf", chunks=1000, pairs=300).to_json())
    old["version"] = VERSION - 1
    assert needs_calibration(json.dumps(old), 1000)


def test_too_few_pairs_keep_the_default_rule():
    assert choose({"adaptive": [0.0] * 20, "rrf": [1.0] * 20})[0] == "adaptive"


def test_the_lower_bound_lies_below_the_mean_gain():
    gains = [0.0, 0.1, 0.2, 0.3] * 50
    assert 0 < lower_bound(gains) < sum(gains) / len(gains)


def test_reciprocal_rank_counts_each_document_once():
    pair = Pair("q", "s", "b.md", "text", None, "heading")
    documents = {"a1": "a.md", "a2": "a.md", "c1": "c.md"}
    assert reciprocal_rank(["a1", "a2", "\x00source"], pair, documents) == 0.5
    assert reciprocal_rank(["a1", "c1"], pair, documents) == 0.0


def test_an_index_is_calibrated_again_only_after_a_material_change():
    record = Calibration("rrf", chunks=1000, pairs=300).to_json()
    assert needs_calibration(None, 1000)
    assert not needs_calibration(None, 50)  # too small to tell the rules apart
    assert not needs_calibration(record, 1200)
    assert needs_calibration(record, 1300) and needs_calibration(record, 700)


def test_a_record_this_version_cannot_read_means_the_default_rule():
    assert calibrated_rule(None) is None
    assert calibrated_rule("not json") is None
    assert calibrated_rule(json.dumps({"rule": "learned-by-a-later-version"})) is None
    assert calibrated_rule(Calibration("rrf", 1000, 300).to_json()) == "rrf"


def test_auto_fusion_takes_the_rule_every_searched_index_chose():
    assert auto_rule(["rrf", "rrf"]) == ("rrf", True)
    assert auto_rule(["rrf", "adaptive"]) == ("adaptive", False)
    assert auto_rule(["rrf", None]) == ("adaptive", False)
    assert auto_rule([]) == ("adaptive", False)


def test_after_an_ingest_a_new_index_is_calibrated_and_an_unchanged_one_is_not(built, tmp_path):
    store, index, embedder = built
    settings = Settings()
    where = str(tmp_path / "store")
    first = calibrate_if_changed(settings, where, "guides", log=print, embedder=embedder)
    assert first is not None and first["rule"] in ("adaptive", "rrf")
    assert calibrate_if_changed(settings, where, "guides", log=print, embedder=embedder) is None


def test_calibration_after_ingest_can_be_switched_off(built, tmp_path):
    _, index, embedder = built
    off = Settings(fusion_calibration=False)
    where = str(tmp_path / "store")
    assert calibrate_if_changed(off, where, "guides", log=print, embedder=embedder) is None
    assert index.fusion_calibration() is None


def test_the_command_refuses_an_unknown_index_as_bad_usage(built, tmp_path, capsys):
    assert calibrate_main(["--store", str(tmp_path / "store"), "--index", "nope"]) == 2
    assert "no index nope" in capsys.readouterr().err


def test_the_command_resets_an_index_to_the_default_rule(built, tmp_path, capsys):
    _, index, _ = built
    index.record_fusion_calibration(Calibration("rrf", 260, 200).to_json())
    assert calibrate_main(["--store", str(tmp_path / "store"), "--reset", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["indexes"]["guides"]["rule"] == "adaptive"
    assert index.fusion_calibration() is None
