"""`python -m chunkers` previews exactly what an ingest writes: the same chunk count on a
corpus with a transcript, whose topic segmentation needs the embedding model."""

from __future__ import annotations

from pathlib import Path

import pytest

from chunkers.__main__ import main as preview
from tests.support.ingest import ingest
from tests.support.paths import FIXTURES

pytestmark = pytest.mark.slow

TRANSCRIPTS = FIXTURES / "ingest" / "transcript"


def test_the_preview_counts_the_chunks_an_ingest_writes(tmp_path: Path, capsys, monkeypatch):
    written = ingest(tmp_path, TRANSCRIPTS).chunks_written
    # The sizes of tests.support.ingest.settings_for, as the preview reads them.
    for name, value in (("TARGET", "40"), ("MAX", "60"), ("OVERLAP", "0")):
        monkeypatch.setenv(f"RAG_CHUNK_{name}_TOKENS", value)
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    capsys.readouterr()

    assert preview([str(TRANSCRIPTS), "--summary"]) == 0

    assert f"chunks: {written} " in capsys.readouterr().out
