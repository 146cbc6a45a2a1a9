"""bench/check_set.py, the validator the hand-written code question sets share: a set passes
when every judged file is read by a directory ingest and holds its quoted evidence."""

from __future__ import annotations

import json
from pathlib import Path

from bench.check_set import main


def write_set(root: Path, queries: list[dict], qrels: list[tuple[str, str]]) -> Path:
    folder = root / "set"
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    lines = ["query-id\tcorpus-id\tscore", *(f"{q}\t{d}\t1" for q, d in qrels)]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")
    return folder


def question(qid: str, evidence: dict[str, str]) -> dict:
    meta = {"style": "natural", "kind": "usage", "evidence": evidence}
    return {"_id": qid, "text": "Who calls parse_header?", "metadata": meta}


def corpus(root: Path) -> Path:
    tree = root / "corpus" / "src" / "pkg"
    tree.mkdir(parents=True)
    (tree / "http.py").write_text("def parse_header(value):\n    return value.split(';')\n")
    (tree / "client.py").write_text(
        "from .http import parse_header\n\n\ndef send(h):\n    return parse_header(h)\n"
    )
    (tree / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    return root / "corpus"


def test_a_set_whose_quotes_occur_in_files_the_ingest_reads_passes(tmp_path, capsys):
    root = corpus(tmp_path)
    folder = write_set(
        tmp_path,
        [question("pk-q001", {"src/pkg/client.py": "return   parse_header(h)"})],
        [("pk-q001", "src/pkg/client.py")],
    )

    assert main(["check_set.py", str(folder), str(root)]) == 0
    assert capsys.readouterr().out.rstrip().endswith("OK")


def test_a_quote_missing_from_its_file_fails(tmp_path, capsys):
    root = corpus(tmp_path)
    folder = write_set(
        tmp_path,
        [question("pk-q001", {"src/pkg/client.py": "return parse_header(h, strict=True)"})],
        [("pk-q001", "src/pkg/client.py")],
    )

    assert main(["check_set.py", str(folder), str(root)]) == 1
    assert "evidence not found in src/pkg/client.py" in capsys.readouterr().out


def test_a_judged_file_the_ingest_does_not_read_fails(tmp_path, capsys):
    root = corpus(tmp_path)
    folder = write_set(
        tmp_path,
        [question("pk-q001", {"src/pkg/logo.png": "PNG"})],
        [("pk-q001", "src/pkg/logo.png")],
    )

    assert main(["check_set.py", str(folder), str(root)]) == 1
    assert "src/pkg/logo.png is not read by a directory ingest" in capsys.readouterr().out


def test_query_ids_with_two_prefixes_fail(tmp_path, capsys):
    root = corpus(tmp_path)
    evidence = {"src/pkg/client.py": "from .http import parse_header"}
    folder = write_set(
        tmp_path,
        [question("pk-q001", evidence), question("rn-q002", evidence)],
        [("pk-q001", "src/pkg/client.py"), ("rn-q002", "src/pkg/client.py")],
    )

    assert main(["check_set.py", str(folder), str(root)]) == 1
    assert "query ids mix prefixes: pk, rn" in capsys.readouterr().out


def test_a_missing_directory_is_bad_usage(tmp_path):
    assert main(["check_set.py", str(tmp_path / "nope"), str(tmp_path)]) == 2
