"""The saved keyword postings: exact after a round trip, compact, and never mistaken for
another generation's or another layout's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.store.sqlite import keyword_file
from core.store.sqlite.keyword import Postings

KEY = ("instance", "7")


def zipf_postings(chunks: int = 3000, words: int = 120, seed: int = 5) -> Postings:
    """Postings of chunks of Zipf-distributed words: a few terms in nearly every chunk and
    many in one or two, as in real text."""
    rng = np.random.default_rng(seed)
    vocabulary = np.array([f"w{i}" for i in range(20_000)])
    ranks = np.minimum(rng.zipf(1.3, size=(chunks, words)) - 1, len(vocabulary) - 1)
    return Postings.build([" ".join(vocabulary[row]) for row in ranks])


def arrays_of(postings: Postings) -> dict[str, np.ndarray]:
    return {
        "starts": postings.starts,
        "rows": postings.rows,
        "counts": postings.counts,
        "length_norm": postings.length_norm,
        "peaks": postings.peaks,
    }


def test_postings_read_back_exactly_across_block_boundaries(tmp_path, monkeypatch):
    monkeypatch.setattr(keyword_file, "BLOCK", 1000)  # many blocks, boundaries inside terms
    postings = zipf_postings()
    keyword_file.save_arrays(tmp_path / "k", KEY, arrays_of(postings))
    back = keyword_file.load_arrays(tmp_path / "k", KEY)
    assert back is not None
    for name, values in arrays_of(postings).items():
        assert back[name].dtype == values.dtype, name
        assert np.array_equal(back[name], values), name


def test_saved_postings_take_a_fraction_of_their_memory_size(tmp_path):
    postings = zipf_postings(chunks=20_000)
    keyword_file.save_arrays(tmp_path / "k", KEY, arrays_of(postings))
    in_memory = postings.rows.nbytes + postings.counts.nbytes
    assert (tmp_path / "k").stat().st_size < in_memory / 3


@pytest.mark.parametrize("key", [("instance", "8"), ("other", "7")])
def test_postings_of_another_generation_or_file_are_not_loaded(tmp_path, key):
    keyword_file.save_arrays(tmp_path / "k", KEY, arrays_of(zipf_postings(chunks=50)))
    assert keyword_file.load_arrays(tmp_path / "k", key) is None


def test_a_file_of_the_earlier_plain_layout_is_not_loaded(tmp_path):
    postings = zipf_postings(chunks=50)
    with open(tmp_path / "k", "wb") as out:
        np.savez(out, key=np.array(list(KEY)), **arrays_of(postings))
    assert keyword_file.load_arrays(tmp_path / "k", KEY) is None


def test_a_truncated_file_is_not_loaded(tmp_path):
    keyword_file.save_arrays(tmp_path / "k", KEY, arrays_of(zipf_postings()))
    data = (tmp_path / "k").read_bytes()
    Path(tmp_path / "k").write_bytes(data[: len(data) // 2])
    assert keyword_file.load_arrays(tmp_path / "k", KEY) is None
