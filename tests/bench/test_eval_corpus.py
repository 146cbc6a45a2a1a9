"""bench/eval_corpus.py's copy of a package's source trees into a plain corpus directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.eval_corpus import copy_trees


def package(root: Path) -> Path:
    for name, text in {"src/pkg/a.py": "A = 1\n", "tests/test_a.py": "def test(): ...\n"}.items():
        (root / "package" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "package" / name).write_text(text)
    return root / "package"


def test_the_trees_are_copied_as_real_files(tmp_path):
    corpus = copy_trees(package(tmp_path), tmp_path / "corpus", ("src", "tests"))

    copied = corpus / "src" / "pkg" / "a.py"
    assert copied.read_text() == "A = 1\n" and not copied.is_symlink()
    assert (corpus / "tests" / "test_a.py").is_file()


def test_a_complete_copy_is_left_alone_and_a_changed_tree_is_copied_again(tmp_path):
    source = package(tmp_path)
    corpus = copy_trees(source, tmp_path / "corpus", ("src", "tests"))
    kept = (corpus / "tests" / "test_a.py").stat().st_ino
    (source / "src" / "pkg" / "a.py").write_text("A = 22\n")

    copy_trees(source, corpus, ("src", "tests"))

    assert (corpus / "src" / "pkg" / "a.py").read_text() == "A = 22\n"
    assert (corpus / "tests" / "test_a.py").stat().st_ino == kept


def test_a_tree_the_package_lacks_is_an_error(tmp_path):
    with pytest.raises(SystemExit, match="docs not found in the package"):
        copy_trees(package(tmp_path), tmp_path / "corpus", ("docs",))
