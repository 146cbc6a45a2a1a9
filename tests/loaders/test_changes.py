"""Change detection: mtime fast path, content hash, pruning only what a run is responsible for."""

from __future__ import annotations

import os
from pathlib import Path

from chunkers.sources.discovery import discover
from chunkers.sources.reading import Defaults, read_all
from core.store.contract import DocState
from loaders.changes import Scope, detect_changes, plan_reads


def write(path: Path, text: str, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def states_after_reading(paths: list[Path]) -> dict[str, DocState]:
    docs = read_all(discover(paths), Defaults()).documents
    return {d.doc_id: DocState(d.content_hash, d.mtime, d.source_file, None) for d in docs}


def test_files_with_unchanged_mtime_are_not_read(tmp_path: Path):
    code = write(tmp_path / "src" / "a.py", "x = 1\n", mtime=1000)
    states = states_after_reading([tmp_path / "src"])
    plan = plan_reads(discover([tmp_path / "src"]), states, Defaults())
    assert plan.to_read == []
    assert plan.unchanged_ids == {"user_codebase:a.py"}
    assert code.exists()


def test_touched_file_is_read_but_unchanged_content_is_not_reprocessed(tmp_path: Path):
    code = write(tmp_path / "src" / "a.py", "x = 1\n", mtime=1000)
    states = states_after_reading([tmp_path / "src"])
    os.utime(code, (2000, 2000))
    plan = plan_reads(discover([tmp_path / "src"]), states, Defaults())
    docs = read_all(plan.to_read, Defaults()).documents
    changes = detect_changes(docs, states, Scope([tmp_path / "src"]))
    assert [s.path.name for s in plan.to_read] == ["a.py"]
    assert (changes.new, changes.changed, changes.unchanged_ids) == ([], [], ["user_codebase:a.py"])


def test_edited_file_is_changed(tmp_path: Path):
    code = write(tmp_path / "src" / "a.py", "x = 1\n", mtime=1000)
    states = states_after_reading([tmp_path / "src"])
    write(code, "x = 2\n", mtime=3000)
    docs = read_all(discover([tmp_path / "src"]), Defaults()).documents
    changes = detect_changes(docs, states, Scope([tmp_path / "src"]))
    assert [d.doc_id for d in changes.changed] == ["user_codebase:a.py"]


def test_deleted_file_is_pruned(tmp_path: Path):
    write(tmp_path / "src" / "a.py", "x = 1\n")
    gone = write(tmp_path / "src" / "b.py", "y = 1\n")
    states = states_after_reading([tmp_path / "src"])
    gone.unlink()
    docs = read_all(discover([tmp_path / "src"]), Defaults()).documents
    changes = detect_changes(docs, states, Scope([tmp_path / "src"]))
    assert changes.deleted_ids == ["user_codebase:b.py"]


def test_documents_outside_the_runs_paths_are_never_pruned(tmp_path: Path):
    write(tmp_path / "one" / "a.py", "x = 1\n")
    write(tmp_path / "two" / "b.py", "y = 1\n")
    states = states_after_reading([tmp_path / "one"]) | {
        "other:b.py": DocState("h", 1.0, str((tmp_path / "two" / "b.py").resolve()), None)
    }
    docs = read_all(discover([tmp_path / "one"]), Defaults()).documents
    changes = detect_changes(docs, states, Scope([tmp_path / "one"]))
    assert changes.deleted_ids == []


def test_record_removed_from_a_jsonl_file_is_pruned(tmp_path: Path):
    corpus = write(tmp_path / "c.jsonl", '{"id": "a", "text": "A"}\n{"id": "b", "text": "B"}\n')
    states = states_after_reading([corpus])
    write(corpus, '{"id": "a", "text": "A"}\n')
    docs = read_all(discover([corpus]), Defaults()).documents
    changes = detect_changes(docs, states, Scope([corpus]))
    assert changes.deleted_ids == ["b"]


def test_record_that_became_unreadable_keeps_its_last_good_version(tmp_path: Path):
    corpus = write(tmp_path / "c.jsonl", '{"id": "a", "text": "A"}\n{"id": "b", "text": "B"}\n')
    states = states_after_reading([corpus])
    write(corpus, '{"id": "a", "text": "A"}\n{"id": "b", "text": \n')
    read = read_all(discover([corpus]), Defaults())
    changes = detect_changes(
        read.documents, states, Scope([corpus]), files_with_rejects={str(corpus.resolve())}
    )
    assert changes.deleted_ids == []


def test_force_treats_every_known_document_as_changed(tmp_path: Path):
    write(tmp_path / "src" / "a.py", "x = 1\n")
    states = states_after_reading([tmp_path / "src"])
    plan = plan_reads(discover([tmp_path / "src"]), states, Defaults(), force=True)
    docs = read_all(plan.to_read, Defaults()).documents
    changes = detect_changes(docs, states, Scope([tmp_path / "src"]), force=True)
    assert [d.doc_id for d in changes.changed] == ["user_codebase:a.py"]


def test_glob_scope_covers_files_the_pattern_matches(tmp_path: Path):
    scope = Scope([str(tmp_path / "corpus" / "**" / "*.jsonl")])
    assert scope.covers(str(tmp_path / "corpus" / "x" / "y.jsonl"))
    assert not scope.covers(str(tmp_path / "elsewhere" / "y.jsonl"))
