"""An ingest of a project directory leaves its credentials out of the index and says so in
its summary; RAG_INGEST_SECRETS=true lets them in."""

from __future__ import annotations

import shutil
from pathlib import Path

from core.settings import Settings
from core.store.sqlite.store import SQLiteStore
from loaders.ingest import ingest
from loaders.target import IngestTarget
from tests.support.fake_runtime import FakeEmbedder
from tests.support.paths import FIXTURES


def ingested(tmp_path: Path, **settings: object):
    project = Path(shutil.copytree(FIXTURES / "sources" / "credentials", tmp_path / "project"))
    config = Settings(
        data_dir=tmp_path / "data",
        index_dir=tmp_path / "indexes",
        staging_dir=tmp_path / "staging",
        **settings,
    )
    target = IngestTarget("app", str(tmp_path / "store"))
    summary = ingest([str(project)], config, target, embedder=FakeEmbedder())
    with SQLiteStore(tmp_path / "store").open_index("app") as index:
        ids = sorted(index.document_states())
    return summary, [doc_id.split(":", 1)[1] for doc_id in ids]


def test_credentials_are_left_out_of_the_index_and_counted(tmp_path: Path):
    summary, paths = ingested(tmp_path)
    assert paths == ["Sources/AppConfig.swift", "deploy/README.md"]
    assert summary.skipped_by_type["credentials: .ssh/"] == 1
    assert summary.skipped_by_type["credentials: .env"] == 1


def test_opting_in_indexes_them(tmp_path: Path):
    summary, paths = ingested(tmp_path, ingest_secrets=True)
    assert ".docker/config.json" in paths and "secrets.yaml" in paths
    assert not any(k.startswith("credentials") for k in summary.skipped_by_type)
