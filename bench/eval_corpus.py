"""What the question sets' corpus builders share: a Python package's sdist fetched from PyPI
and checked against its pinned sha256, and a package's source trees copied into a plain
corpus directory. Used by bench/react-native-eval/corpus.py and
bench/werkzeug-eval/corpus.py (bench/ is not a package: they import this file by path)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterable
from pathlib import Path


def fetch_sdist(name: str, version: str, sha256: str, work: Path) -> Path:
    """The sdist of `name`==`version` extracted under `work`/package (its top folder, as the
    archive names it), from the file `pip download` fetches once its sha256 matches the pin.
    A second call reuses the extracted tree."""
    root = work / "package"
    if root.is_dir():
        tops = [p for p in root.iterdir() if p.is_dir()]
        if len(tops) == 1:
            return tops[0]
        shutil.rmtree(root)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
        + ["--quiet", f"{name}=={version}", "-d", str(work)],
        check=True,
    )
    [archive] = [p for p in work.glob("*.tar.gz") if p.name.lower().startswith(name.lower())]
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != sha256:
        raise SystemExit(f"{archive}: sha256 {digest} is not the pinned {sha256}")
    partial = work / ".package.partial"
    if partial.exists():
        shutil.rmtree(partial)
    with tarfile.open(archive) as tar:
        tar.extractall(partial, filter="data")
    partial.rename(root)
    [top] = [p for p in root.iterdir() if p.is_dir()]
    return top


def _manifest(tree: Path) -> set[tuple[str, int]]:
    """(relative path, size) of every file under `tree`: enough to tell a complete copy."""
    return {(str(p.relative_to(tree)), p.stat().st_size) for p in tree.rglob("*") if p.is_file()}


def copy_trees(package: Path, corpus: Path, trees: Iterable[str]) -> Path:
    """`corpus` holding copies (not symlinks) of the package's `trees`; a tree whose files
    (paths and sizes) already match is left alone, any other is copied again."""
    corpus.mkdir(parents=True, exist_ok=True)
    for name in trees:
        source, target = package / name, corpus / name
        if not source.is_dir():
            raise SystemExit(f"{source} not found in the package")
        if target.is_dir() and not target.is_symlink():
            if _manifest(target) == _manifest(source):
                continue  # already assembled
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
        partial = corpus / f".{name}.partial"
        if partial.exists():
            shutil.rmtree(partial)
        shutil.copytree(source, partial, symlinks=False)
        partial.rename(target)
    return corpus
