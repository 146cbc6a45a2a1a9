"""bench/registry.py: a fetched package is unpacked only when its tarball is the pinned one."""

from __future__ import annotations

import base64
import hashlib
import tarfile
from pathlib import Path

import pytest

from bench.registry import unpack_checked


def npm_tarball(tmp_path: Path) -> Path:
    """A tarball laid out as npm's are: one top folder, `package`."""
    source = tmp_path / "src" / "package" / "docs"
    source.mkdir(parents=True)
    (source / "Guide.md").write_text("# Guide\n", encoding="utf-8")
    tarball = tmp_path / "pkg-1.0.0.tgz"
    with tarfile.open(tarball, "w:gz") as archive:
        archive.add(tmp_path / "src" / "package", arcname="package")
    return tarball


def integrity_of(tarball: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()


def test_the_pinned_tarball_is_unpacked_into_package(tmp_path):
    tarball = npm_tarball(tmp_path)
    work = tmp_path / "work"
    work.mkdir()

    root = unpack_checked(tarball, integrity_of(tarball), work)

    assert root == work / "package"
    assert (root / "docs" / "Guide.md").read_text(encoding="utf-8") == "# Guide\n"


def test_a_tarball_that_is_not_the_pinned_one_stops_the_run_and_unpacks_nothing(tmp_path):
    tarball = npm_tarball(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    other = "sha512-" + base64.b64encode(hashlib.sha512(b"another release").digest()).decode()

    with pytest.raises(SystemExit, match="is not the pinned"):
        unpack_checked(tarball, other, work)

    assert list(work.iterdir()) == []
