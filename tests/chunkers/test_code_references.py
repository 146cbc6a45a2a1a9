"""What each code piece declares and uses, read from the tree the chunker parsed
(chunkers.code.references, chunkers.code.python_references): the navigation fixtures."""

from __future__ import annotations

import pytest

from chunkers.code.grammar_syntax import syntax_for
from chunkers.code.grammar_table import LANGUAGE_SPECS
from chunkers.code.references import DEFINITION, Reference
from chunkers.config import ChunkConfig
from chunkers.pipeline import chunk_document
from tests.support import paths
from tests.support.code_documents import fixture_document

NAVIGATION = paths.FIXTURES / "navigation"


@pytest.fixture(scope="module")
def references(counter):
    def read(relative: str, language: str) -> list[Reference]:
        doc = fixture_document(NAVIGATION, relative, language)
        chunks = chunk_document(doc, ChunkConfig(counter)).chunks
        return [ref for chunk in chunks for ref in chunk.references]

    return read


def uses(refs: list[Reference], name: str) -> list[tuple[str, int, str, str]]:
    return [
        (r.role, r.line, r.scope, r.qualifier)
        for r in refs
        if r.name == name and r.role != DEFINITION
    ]


def definitions(refs: list[Reference]) -> list[tuple[str, str, str, int]]:
    return [(r.name, r.kind, r.scope, r.line) for r in refs if r.role == DEFINITION]


@pytest.mark.parametrize("language", sorted(LANGUAGE_SPECS))
def test_every_languages_query_file_compiles_against_its_grammar(language):
    syntax = syntax_for(language)
    assert syntax.references(syntax.parse(b"x")) is not None


def test_a_swift_extension_declares_members_of_the_type_it_extends_and_its_conformance(references):
    refs = references("swift/Shape+Area.swift", "swift")
    assert ("Shape", "extension", "", 1) in definitions(refs)
    assert ("area", "function", "Shape", 2) in definitions(refs)
    assert ("inherit", 1, "Shape", "") in uses(refs, "Equatable")


def test_a_swift_class_conforming_to_a_protocol_inherits_from_it(references):
    refs = references("swift/Shape.swift", "swift")
    assert uses(refs, "Drawable") == [("inherit", 8, "Shape", "")]


def test_swift_calls_name_the_enclosing_method_and_the_receiver(references):
    refs = references("swift/Canvas.swift", "swift")
    assert ("call", 6, "Canvas.paint", "shape") in uses(refs, "draw")
    assert ("call", 16, "clearAll", "shape") in uses(refs, "reset")


def test_an_objc_category_is_a_category_of_its_class_and_declares_its_methods(references):
    refs = references("objc/Greeter+Loud.m", "objc")
    assert ("Greeter", "category", "", 3) in definitions(refs)
    assert ("shout:", "method", "Greeter", 8) in definitions(refs)


def test_an_objc_message_send_is_a_use_of_the_whole_selector(references):
    refs = references("objc/main.m", "objc")
    assert uses(refs, "greet:times:") == [("send", 5, "main", "greeter")]
    assert ("send", 4, "main", "Greeter") in uses(refs, "new")


def test_a_python_method_call_through_self_has_self_as_its_receiver(references):
    refs = references("python/shapes.py", "python")
    assert uses(refs, "render") == [("call", 3, "Shape.draw", "self")]
    assert ("render", "method", "Shape", 5) in definitions(refs)


def test_a_typescript_import_alias_counts_as_a_use_of_the_original_name(references):
    refs = references("typescript/loader.ts", "typescript")
    assert ("call", 6, "loadAll", "") in uses(refs, "register")
    assert uses(refs, "reg") == []


def test_every_record_lies_within_the_lines_of_its_chunk(cfg):
    doc = fixture_document(NAVIGATION, "swift/Canvas.swift", "swift")
    for chunk in chunk_document(doc, cfg).chunks:
        assert chunk.references
        assert all(chunk.start_line <= r.line <= chunk.end_line for r in chunk.references)


def test_a_parameter_name_is_no_use_but_reading_it_is(references):
    refs = references("swift/Canvas.swift", "swift")
    assert uses(refs, "canvas") == [("value", 15, "clearAll", "")]


def test_a_local_variable_is_no_definition(references):
    refs = references("swift/Shape+Area.swift", "swift") + references("swift/Canvas.swift", "swift")
    assert ("shape", "property") not in {(name, kind) for name, kind, _, _ in definitions(refs)}
    assert ("shapes", "property", "Canvas", 2) in definitions(refs)


def test_a_python_assignment_binds_a_name_and_reading_it_is_a_use(references):
    refs = references("python/app.py", "python")
    assert uses(refs, "shape") == [("value", 6, "main", "")]  # not line 5's `shape = make()`


def test_objc_forward_declarations_are_uses_of_the_class_and_protocol(references):
    refs = references("objc/Registry.h", "objc")
    assert ("type", 3, "", "") in uses(refs, "Greeter")
    assert ("type", 4, "", "") in uses(refs, "Loud")


def test_an_objc_attribute_macro_after_a_declaration_is_not_part_of_its_name(references):
    names = {
        (name, kind) for name, kind, _, _ in definitions(references("objc/Registry.h", "objc"))
    }
    assert {("label", "property"), ("clear", "method"), ("add:", "method")} <= names


def test_objc_linkage_and_region_macros_leave_the_declarations_after_them_readable(references):
    names = {name for name, _, _, _ in definitions(references("objc/Registry.h", "objc"))}
    assert {"RegistryName", "Registry"} <= names


def test_a_macro_that_defines_an_objc_method_declares_that_method(references):
    refs = references("objc/GreeterModule.mm", "objc")
    assert ("wave:count:", "method", "GreeterModule", 15) in definitions(refs)
    assert ("send", 25, "GreeterModule.flush", "self") in uses(refs, "wave:count:")


def test_an_objc_categorys_own_name_is_recorded_as_naming_a_category(references):
    refs = references("objc/GreeterModule.mm", "objc")
    assert ("Greeter", "category", "", 9) in definitions(refs)
    assert uses(refs, "GreeterModule") == [("category", 9, "Greeter", "")]


def test_an_objc_parameter_is_recorded_where_declared_and_where_read(references):
    refs = references("objc/GreeterModule.mm", "objc")
    assert uses(refs, "tag") == [
        ("param", 10, "Greeter.greetTag:", ""),
        ("param", 15, "GreeterModule.wave:count:", ""),
        ("value", 17, "GreeterModule.wave:count:", ""),
    ]


def test_a_name_left_under_a_parse_error_is_an_unparsed_use(references):
    refs = references("objc/GreeterModule.mm", "objc")  # `std::vector<Greeter *>`: C++
    assert ("unparsed", 21, "GreeterModule", "") in uses(refs, "Greeter")
