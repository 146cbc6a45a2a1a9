"""`python -m query symbol` on the navigation fixtures (a small multi-file project per
language), ingested into a temporary store: definitions, references resolved as far as the
index allows, call edges, impact; and the references kept exact as files change."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from query.cli.main import main
from tests.support.navigation import NAVIGATION, ingest_into


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return ingest_into(tmp_path_factory.mktemp("navigation"), NAVIGATION)


def symbol(store: Path, capsys, *args: str) -> dict:
    code = main(["symbol", *args, "--store", str(store), "--json"])
    out = json.loads(capsys.readouterr().out)
    out["exit"] = code
    return out


def refs(result: dict) -> list[tuple[str, int, str, str]]:
    return [
        (r["path"], r["line"], r["use"], r.get("resolved") or _unresolved(r))
        for r in result["references"]
    ]


def _unresolved(reference: dict) -> str:
    if "names" in reference:
        return f"names: {reference['names']}"
    return f"candidates: {reference['candidates']}"


def test_a_swift_method_defined_in_an_extension_is_found_with_its_container(store, capsys):
    result = symbol(store, capsys, "area")
    (area,) = result["definitions"]
    assert (area["path"], area["lines"], area["kind"], area["container"]) == (
        "swift/Shape+Area.swift",
        [2, 4],
        "function",
        "Shape",
    )
    assert area["signature"] == "func area() -> Int {"
    assert refs(result) == [("swift/Canvas.swift", 7, "call", "swift/Shape+Area.swift:2")]


def test_a_definition_carries_the_availability_its_chunk_was_tagged_with(store, capsys):
    definitions = symbol(store, capsys, "Shape")["definitions"]
    (shape,) = [d for d in definitions if d["path"] == "swift/Shape.swift"]
    assert shape["availability"]["platforms"]["ios"]["min"] == "16.0"


def test_a_protocol_conformance_is_a_reference_to_the_protocol(store, capsys):
    result = symbol(store, capsys, "Drawable")
    assert refs(result) == [("swift/Shape.swift", 8, "inherit", "swift/Shape.swift:3")]


def test_an_unqualified_call_inside_a_type_resolves_to_that_types_member(store, capsys):
    result = symbol(store, capsys, "reset")
    assert ("swift/Shape.swift", 16, "call", "swift/Shape.swift:19") in refs(result)


def test_a_call_on_a_receiver_of_unknown_type_is_reported_ambiguous(store, capsys):
    result = symbol(store, capsys, "reset", "--kind", "function")
    assert ("swift/Canvas.swift", 15, "call", "candidates: 2") in refs(result)
    assert ("swift/Canvas.swift", 16, "call", "candidates: 2") in refs(result)


def test_an_objc_message_send_reaches_the_method_declared_in_the_header(store, capsys):
    result = symbol(store, capsys, "greet:times:")
    assert {d["path"] for d in result["definitions"]} == {"objc/Greeter.h", "objc/Greeter.m"}
    (call,) = result["references"]
    assert (call["path"], call["line"], call["use"], call["receiver"]) == (
        "objc/main.m",
        5,
        "send",
        "greeter",
    )


def test_a_method_of_an_objc_category_is_called_through_self(store, capsys):
    result = symbol(store, capsys, "shout:")
    (definition,) = [
        d
        for d in result["definitions"]
        if d["path"] == "objc/Greeter+Loud.m" and d["lines"][0] == 8
    ]
    assert definition["container"] == "Greeter"
    assert [c["caller"] for c in result["callers"]] == ["Greeter.greet:times:"]


def test_an_objc_parameter_and_its_reads_name_the_parameter_not_a_declaration(store, capsys):
    result = symbol(store, capsys, "tag")
    assert refs(result) == [
        ("objc/GreeterModule.mm", 10, "param", "names: parameter"),
        ("objc/GreeterModule.mm", 15, "param", "names: parameter"),
        ("objc/GreeterModule.mm", 17, "value", "names: parameter"),
    ]


def test_the_readable_listing_says_what_a_naming_record_names(store, capsys):
    assert main(["symbol", "tag", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "objc/GreeterModule.mm:15 param in GreeterModule.wave:count: -> names a parameter" in out


def test_an_objc_categorys_own_name_names_the_category(store, capsys):
    result = symbol(store, capsys, "GreeterModule")
    assert ("objc/GreeterModule.mm", 9, "category", "names: category") in refs(result)


def test_a_python_call_through_self_resolves_to_the_classs_method(store, capsys):
    result = symbol(store, capsys, "render", "--kind", "method")
    assert ("python/shapes.py", 3, "call", "python/shapes.py:5") in refs(result)


def test_callees_of_a_python_function_are_its_calls_resolved(store, capsys):
    result = symbol(store, capsys, "main")
    callees = {(c["callee"], c.get("resolved")) for c in result["callees"] if c["caller"] == "main"}
    assert ("make", "python/shapes.py:9") in callees


def test_a_typescript_import_alias_is_a_reference_to_the_original(store, capsys):
    result = symbol(store, capsys, "register")
    assert ("typescript/loader.ts", 6, "call", "typescript/registry.ts:5") in refs(result)


def test_impact_lists_the_declarations_in_the_lines_and_their_uses(store, capsys):
    code = main(
        ["symbol", "--impact", "swift/Shape+Area.swift:2-4", "--store", str(store), "--json"]
    )
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    (area,) = result["declarations"]
    assert area["name"] == "area"
    assert [(u["path"], u["line"]) for u in area["references"]] == [("swift/Canvas.swift", 7)]


def test_impact_names_the_type_around_the_lines_apart_from_what_they_change(store, capsys):
    main(["symbol", "--impact", "swift/Shape+Area.swift:3", "--store", str(store), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in result["declarations"]] == ["area"]
    assert [(d["kind"], d["name"]) for d in result["containing"]] == [("extension", "Shape")]
    assert "references" not in result["containing"][0]


def test_impact_of_a_whole_file_lists_its_types_too(store, capsys):
    main(["symbol", "--impact", "swift/Shape+Area.swift", "--store", str(store), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in result["declarations"]] == ["Shape", "area"]
    assert result["containing"] == []


def test_an_unknown_symbol_exits_1(store, capsys):
    assert symbol(store, capsys, "noSuchThing")["exit"] == 1


def test_references_stay_exact_across_an_edit_and_a_deletion(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    shutil.copytree(NAVIGATION / "swift", corpus)
    store = ingest_into(tmp_path, corpus)
    assert len(symbol(store, capsys, "area")["references"]) == 1
    canvas = corpus / "Canvas.swift"
    canvas.write_text(canvas.read_text().replace("_ = shape.area()\n", ""))
    ingest_into(tmp_path, corpus)
    assert symbol(store, capsys, "area")["references"] == []
    (corpus / "Shape+Area.swift").unlink()
    ingest_into(tmp_path, corpus)
    assert symbol(store, capsys, "area")["exit"] == 1


def test_an_index_made_before_references_gets_them_from_the_next_incremental_run(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    shutil.copytree(NAVIGATION / "swift", corpus)
    (corpus / "NOTES.md").write_text("# Notes\n\nShapes are drawn on a canvas.\n")
    store = ingest_into(tmp_path, corpus)
    # The file as the code before the references migration left it.
    with sqlite3.connect(store / "app.sqlite") as conn:
        conn.execute("DROP TABLE refs")
        conn.execute("DELETE FROM schema_migrations WHERE name LIKE '%_references'")
        prose_hash = conn.execute(
            "SELECT content_hash FROM documents WHERE source_path LIKE '%NOTES.md'"
        ).fetchone()
    conn.close()
    ingest_into(tmp_path, corpus)
    assert refs(symbol(store, capsys, "area")) == [
        ("Canvas.swift", 7, "call", "Shape+Area.swift:2")
    ]
    with sqlite3.connect(store / "app.sqlite") as conn:
        assert (
            prose_hash
            == conn.execute(
                "SELECT content_hash FROM documents WHERE source_path LIKE '%NOTES.md'"
            ).fetchone()
        )
    conn.close()


def test_impact_leaves_out_uses_that_resolution_rejected(tmp_path, capsys):
    # polish() in tool.py cannot mean the Swift declaration (another language family): it
    # resolves to nothing, and changing the Swift method does not touch it.
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "Lens.swift").write_text("class Lens {\n    func polish() {}\n}\n")
    (corpus / "Shop.swift").write_text("func sell(lens: Lens) {\n    lens.polish()\n}\n")
    (corpus / "tool.py").write_text("def clean(lens):\n    lens.polish()\n")
    built = ingest_into(tmp_path, corpus)
    code = main(["symbol", "--impact", "Lens.swift:2", "--store", str(built), "--json"])
    (declaration,) = json.loads(capsys.readouterr().out)["declarations"]
    assert code == 0
    assert [(r["path"], r["line"]) for r in declaration["references"]] == [("Shop.swift", 2)]
