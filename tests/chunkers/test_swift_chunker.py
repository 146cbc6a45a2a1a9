"""The Swift chunker: one piece per top-level declaration, nothing lost, nothing too big."""

from __future__ import annotations

import pytest
import tree_sitter_swift
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tree_sitter import Language, Parser

from chunkers.code.swift import DECLARATION_KINDS, chunk_swift
from chunkers.config import ChunkConfig
from chunkers.model import Piece
from tests.support import paths
from tests.support.pieces import assert_every_line_kept, assert_within_limit

FIXTURES = paths.FIXTURES / "swift"
ALL_FIXTURES = sorted(p.name for p in FIXTURES.glob("*.swift"))


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def declarations(pieces: list[Piece]) -> list[Piece]:
    return [p for p in pieces if p.kind != "other"]


def by_symbol(pieces: list[Piece], symbol: str, kind: str | None = None) -> Piece:
    (piece,) = [p for p in pieces if p.symbol == symbol and kind in (None, p.kind)]
    return piece


def source_lines(text: str, piece: Piece) -> str:
    """The source text of the piece's lines, as it should appear in its content."""
    assert piece.start_line is not None and piece.end_line is not None
    return "\n".join(text.split("\n")[piece.start_line - 1 : piece.end_line])


# --- the grammar ------------------------------------------------------------------------------

GRAMMAR_SAMPLES = [
    ("class C {}", "class_declaration", "class"),
    ("struct S {}", "class_declaration", "struct"),
    ("enum E { case a }", "class_declaration", "enum"),
    ("indirect enum T { case leaf }", "class_declaration", "enum"),
    ("extension S {}", "class_declaration", "extension"),
    ("actor A {}", "class_declaration", "actor"),
    ("distributed actor D {}", "class_declaration", "actor"),
    ("protocol P {}", "protocol_declaration", None),
    ("func f() {}", "function_declaration", None),
    ("func + (a: V, b: V) -> V { a }", "function_declaration", None),
    ("typealias H = () -> Void", "typealias_declaration", None),
    ("let x = 1", "property_declaration", None),
    ("var y: Int { 2 }", "property_declaration", None),
    ('macro m() = #externalMacro(module: "M", type: "T")', "macro_declaration", None),
    ("infix operator **: MultiplicationPrecedence", "operator_declaration", None),
    ("postfix operator ++", "operator_declaration", None),
    ("precedencegroup G { associativity: left }", "precedence_group_declaration", None),
]


@pytest.mark.parametrize(("source", "node_type", "keyword"), GRAMMAR_SAMPLES)
def test_the_node_type_table_matches_what_tree_sitter_swift_produces(source, node_type, keyword):
    root = Parser(Language(tree_sitter_swift.language())).parse(source.encode()).root_node
    (node,) = root.children
    assert node.type == node_type
    assert node_type in DECLARATION_KINDS
    if keyword:
        assert node.child_by_field_name("declaration_kind").type == keyword


# --- one piece per declaration -----------------------------------------------------------------

ALL_KINDS = [
    # kind, symbol, first line (its doc comment or attribute), last line
    ("class", "Trip", 11, 22),
    ("struct", "Coordinate", 24, 30),
    ("enum", "TravelMode", 32, 36),
    ("extension", "Trip", 40, 43),
    ("actor", "TripCache", 45, 50),
    ("protocol", "MapAnnotatable", 52, 56),
    ("function", "daysBetween", 58, 61),
    ("typealias", "TripHandler", 63, 64),
    ("constant", "maxStops", 66, 67),
    ("variable", "openedTrips", 69, 70),
    ("macro", "stringify", 72, 74),
    ("operator", "**", 76, 77),
    ("precedencegroup", "ExponentPrecedence", 79, 83),
]


@pytest.mark.parametrize(("kind", "symbol", "start", "end"), ALL_KINDS)
def test_each_declaration_kind_is_one_piece_with_its_symbol_and_lines(
    cfg, kind, symbol, start, end
):
    pieces = chunk_swift(fixture("all_kinds.swift"), cfg)
    (piece,) = [p for p in pieces if p.kind == kind]
    assert (piece.symbol, piece.start_line, piece.end_line) == (symbol, start, end)


def test_declarations_come_in_source_order(cfg):
    pieces = declarations(chunk_swift(fixture("all_kinds.swift"), cfg))
    assert [p.kind for p in pieces] == [kind for kind, *_ in ALL_KINDS]


def test_content_is_the_exact_source_of_its_lines(cfg):
    text = fixture("all_kinds.swift")
    for piece in chunk_swift(text, cfg):
        assert piece.content == source_lines(text, piece)


def test_an_extension_is_named_after_the_extended_type_without_generic_arguments(cfg):
    text = "extension Foo.Bar<Int> where Element: Equatable {\n    func f() {}\n}\n"
    (piece,) = chunk_swift(text, cfg)
    assert (piece.kind, piece.symbol) == ("extension", "Foo.Bar")


def test_an_operator_function_is_named_by_its_operator(cfg):
    (piece,) = chunk_swift("func <=> (lhs: V, rhs: V) -> Bool { true }\n", cfg)
    assert (piece.kind, piece.symbol) == ("function", "<=>")


def test_a_binding_of_several_names_is_named_by_the_first_and_lists_all(cfg):
    (piece,) = chunk_swift("let width = 3, height = 4\n", cfg)
    assert piece.symbol == "width"
    assert piece.metadata["names"] == ["width", "height"]


def test_a_declaration_has_its_signature_without_doc_comment_or_body(cfg):
    pieces = chunk_swift(fixture("all_kinds.swift"), cfg)
    assert by_symbol(pieces, "daysBetween").metadata["signature"] == (
        "func daysBetween(_ start: Date, _ end: Date) -> Int"
    )
    assert by_symbol(pieces, "maxStops").metadata["signature"] == "let maxStops"


# --- doc comments and attributes ----------------------------------------------------------------


def test_triple_slash_doc_comments_are_part_of_the_declaration(cfg):
    piece = by_symbol(chunk_swift(fixture("all_kinds.swift"), cfg), "daysBetween")
    assert piece.content.startswith("/// Days between two dates, rounded down.\nfunc ")


def test_block_doc_comments_are_part_of_the_declaration(cfg):
    piece = by_symbol(chunk_swift(fixture("all_kinds.swift"), cfg), "Coordinate")
    assert piece.content.startswith("/**\n A point on the map, in degrees.\n */\nstruct ")


def test_a_doc_comment_one_blank_line_above_still_documents_the_declaration(cfg):
    (piece,) = chunk_swift("/// Documented.\n\nstruct S {}\n", cfg)
    assert (piece.symbol, piece.start_line) == ("S", 1)


def test_a_plain_comment_separated_by_a_blank_line_is_not_attached(cfg):
    pieces = chunk_swift("// MARK: - Models\n\nstruct S {}\n", cfg)
    assert [(p.kind, p.content) for p in pieces] == [
        ("other", "// MARK: - Models"),
        ("struct", "struct S {}"),
    ]


def test_a_comment_trailing_the_declarations_last_line_is_kept_with_it(cfg):
    (piece,) = chunk_swift("let limit = 10 // per page\n", cfg)
    assert piece.content == "let limit = 10 // per page"


def test_attributes_are_listed_and_kept_in_the_content(cfg):
    piece = by_symbol(chunk_swift(fixture("all_kinds.swift"), cfg), "Trip", "class")
    assert piece.attributes == ["@available(iOS 17.0, macOS 14.0, *)", "@Model"]
    assert "@available(iOS 17.0, macOS 14.0, *)\n@Model\nfinal class Trip {" in piece.content


def test_attributes_of_global_variables_and_macros_are_listed(cfg):
    pieces = chunk_swift(fixture("all_kinds.swift"), cfg)
    assert by_symbol(pieces, "openedTrips").attributes == ["@MainActor"]
    assert by_symbol(pieces, "stringify").attributes == ["@freestanding(expression)"]


def test_an_attribute_spread_over_lines_is_listed_on_one_line(cfg):
    text = "@available(\n    iOS, introduced: 15.0,\n    deprecated: 17.0\n)\nfunc old() {}\n"
    (piece,) = chunk_swift(text, cfg)
    assert piece.attributes == ["@available( iOS, introduced: 15.0, deprecated: 17.0 )"]


# --- imports -------------------------------------------------------------------------------------


def test_every_piece_carries_the_module_names_of_all_imports(cfg):
    pieces = chunk_swift(fixture("all_kinds.swift"), cfg)
    expected = ["SwiftUI", "SwiftData", "Combine", "Foundation"]
    assert all(p.imports == expected for p in pieces)


def test_a_submodule_import_keeps_its_full_name(cfg):
    (piece,) = chunk_swift("import os.log\n", cfg)
    assert piece.imports == ["os.log"]


# --- code that is not a declaration ------------------------------------------------------------


def test_imports_and_header_comments_form_the_preamble(cfg):
    preamble = chunk_swift(fixture("all_kinds.swift"), cfg)[0]
    assert (preamble.kind, preamble.start_line, preamble.end_line) == ("other", 1, 9)
    assert preamble.metadata == {"section": "preamble"}


def test_top_level_statements_between_declarations_are_other_pieces(cfg):
    text = fixture("main.swift")
    pieces = chunk_swift(text, cfg)
    other = [p.content for p in pieces if p.kind == "other"]
    assert any(c.startswith("guard arguments.count > 1 else {") for c in other)
    assert any(c.startswith("// Print every trip") and "for (index, trip)" in c for c in other)


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_every_non_blank_line_is_in_some_piece(cfg, name):
    text = fixture(name)
    assert_every_line_kept(text, chunk_swift(text, cfg))


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_every_non_blank_line_is_in_some_piece_when_split_small(small_cfg, name):
    text = fixture(name)
    assert_every_line_kept(text, chunk_swift(text, small_cfg))


# --- types over the limit --------------------------------------------------------------------


def store_parts(cfg: ChunkConfig) -> list[Piece]:
    return [p for p in chunk_swift(fixture("large_store.swift"), cfg) if p.symbol == "TripStore"]


def test_a_type_over_the_target_that_fits_the_hard_limit_stays_one_piece(counter):
    # TripStore is about 560 tokens: above this target, within this hard limit.
    cfg = ChunkConfig(counter=counter, target_tokens=400, max_tokens=600)
    (piece,) = store_parts(cfg)
    assert (piece.start_line, piece.end_line, piece.context) == (4, 70, "")
    assert "part" not in piece.metadata


def test_a_type_over_the_hard_limit_is_split_into_numbered_parts(small_cfg):
    parts = store_parts(small_cfg)
    assert len(parts) > 2
    assert [p.metadata["part"] for p in parts] == list(range(1, len(parts) + 1))
    assert {p.metadata["parts"] for p in parts} == {len(parts)}
    assert {(p.kind, p.symbol) for p in parts} == {("class", "TripStore")}


def test_every_part_carries_the_type_header_as_context(small_cfg):
    parts = store_parts(small_cfg)
    assert {p.context for p in parts} == {"@MainActor\nfinal class TripStore: ObservableObject"}
    assert {tuple(p.attributes) for p in parts} == {("@MainActor",)}


def test_parts_start_at_member_boundaries(small_cfg):
    text = fixture("large_store.swift")
    member_starts = {4, 9, 11, 12, 13, 14, 15, 17, 21, 32, 38, 44, 45, 55, 62, 69, 70}
    windows_of_load = range(21, 31)  # load() alone is over the limit: cut into line windows
    for part in store_parts(small_cfg):
        assert part.start_line in member_starts or part.start_line in windows_of_load
        assert part.content.rstrip() == source_lines(text, part).rstrip() or (
            part.start_line in windows_of_load
        )


def test_each_part_lists_the_members_it_holds_or_is_a_window_of(small_cfg):
    parts = {p.start_line: p.metadata.get("members") for p in store_parts(small_cfg)}
    assert parts[9] == ["trips", "selection", "isLoading", "client"]
    assert parts[21] == parts[27] == ["load"]  # two windows of load()


def test_the_first_part_opens_with_the_doc_comment_and_the_last_closes_the_type(small_cfg):
    parts = store_parts(small_cfg)
    assert parts[0].content.startswith("/// Keeps the list of trips")
    assert parts[-1].content.endswith("    #endif\n}")


def test_conditional_compilation_stays_with_the_members_it_guards(small_cfg):
    last = store_parts(small_cfg)[-1]
    assert last.content.lstrip().startswith("#if DEBUG\n    /// Sample data for previews.")


def test_a_comment_after_the_opening_brace_stays_on_the_header_line(small_cfg):
    members = "".join(f"    var setting{i}: Bool = false\n" for i in range(20))
    text = f"final class Settings {{ // persisted in UserDefaults\n{members}}}\n"
    parts = chunk_swift(text, small_cfg)
    assert len(parts) > 1
    assert parts[0].content.startswith("final class Settings { // persisted in UserDefaults\n")
    assert all(p.start_line > 1 for p in parts[1:])


def test_a_member_over_the_hard_limit_falls_back_to_line_windows(small_cfg):
    windows = [p for p in store_parts(small_cfg) if 21 <= p.start_line <= 30]
    assert len(windows) >= 2
    assert windows[0].content.startswith("    /// Loads the trips from the server")
    assert windows[-1].end_line == 30


def test_an_oversized_function_is_cut_into_windows_with_its_signature(small_cfg):
    body = "".join(f"    let value{i} = compute({i}, scale: factor * {i})\n" for i in range(30))
    text = f"/// Computes.\nfunc compute(factor: Double) -> Double {{\n{body}    return 0\n}}\n"
    pieces = chunk_swift(text, small_cfg)
    assert len(pieces) > 1
    assert {(p.kind, p.symbol, p.context) for p in pieces} == {
        ("function", "compute", "func compute(factor: Double) -> Double")
    }
    assert_within_limit(small_cfg, pieces)
    assert_every_line_kept(text, pieces)


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_no_piece_exceeds_the_hard_limit(small_cfg, name):
    assert_within_limit(small_cfg, chunk_swift(fixture(name), small_cfg))


def test_a_single_line_over_the_hard_limit_is_cut_at_token_boundaries(small_cfg):
    words = " ".join(f"word{i}" for i in range(200))
    text = f'let banner = "{words}"\n'
    pieces = chunk_swift(text, small_cfg)
    assert len(pieces) > 1
    assert_within_limit(small_cfg, pieces)
    assert "".join(p.content for p in pieces) == text.rstrip("\n")


# --- robustness --------------------------------------------------------------------------------


def test_empty_and_blank_sources_give_no_pieces(cfg):
    assert chunk_swift("", cfg) == []
    assert chunk_swift("  \n\n\t\n", cfg) == []


def test_broken_swift_keeps_every_line_and_the_declarations_before_the_error(cfg):
    text = fixture("broken.swift")
    pieces = chunk_swift(text, cfg)
    assert (
        by_symbol(pieces, "Fine").content
        == "/// This one is fine.\nstruct Fine {\n    let value: Int\n}"
    )
    assert_every_line_kept(text, pieces)


def test_text_that_is_not_swift_at_all_is_still_chunked(small_cfg):
    text = "}}}} ))) (((\nThis is prose; it is not code at all!\n" * 20
    pieces = chunk_swift(text, small_cfg)
    assert_within_limit(small_cfg, pieces)
    assert_every_line_kept(text, pieces)


def test_lone_surrogates_become_replacement_characters_instead_of_crashing(cfg):
    # Neither UTF-8 nor the tokenizer can take them; everything else is kept as it was.
    (piece,) = chunk_swift('let broken = "\ud800"\n', cfg)
    assert (piece.symbol, piece.content) == ("broken", 'let broken = "\ufffd"')


def test_a_byte_order_mark_does_not_shift_lines_or_make_a_piece(cfg):
    pieces = chunk_swift("\ufeffstruct A {}\n\nstruct B {}\n", cfg)
    assert [(p.symbol, p.start_line) for p in pieces] == [("A", 1), ("B", 3)]


def test_windows_line_endings_keep_lines_and_text(cfg):
    text = "import UIKit\r\n\r\n/// Doc.\r\nstruct A {\r\n    let x = 1\r\n}\r\n"
    pieces = chunk_swift(text, cfg)
    assert [(p.kind, p.start_line, p.end_line) for p in pieces] == [
        ("other", 1, 1),
        ("struct", 3, 6),
    ]
    assert pieces[1].content == "/// Doc.\r\nstruct A {\r\n    let x = 1\r\n}"


# --- non-ASCII text -----------------------------------------------------------------------------


def test_non_ascii_identifiers_are_symbols(cfg):
    pieces = declarations(chunk_swift(fixture("unicode.swift"), cfg))
    assert [(p.kind, p.symbol) for p in pieces] == [
        ("constant", "grüße"),
        ("struct", "旅行"),
        ("function", "αθροισμα"),
        ("enum", "Wetter"),
    ]


def test_non_ascii_text_is_kept_exactly(cfg):
    text = fixture("unicode.swift")
    for piece in chunk_swift(text, cfg):
        assert piece.content == source_lines(text, piece)


# --- property: any Swift-ish source ----------------------------------------------------------

NAMES = st.sampled_from(["store", "Trip", "value", "Größe", "名前", "π", "x1", "cache_2"])
DOC = st.sampled_from(["", "/// Does a thing.\n", "/** Block doc. */\n", "// note\n\n"])
ATTRIBUTE = st.sampled_from(["", "@MainActor\n", "@available(iOS 17.0, *)\n", "@objc "])


@st.composite
def body_lines(draw, indent: str = "    ") -> str:
    lines = draw(
        st.lists(
            st.sampled_from(
                [
                    "let a = b + 1",
                    'print("héllo, 世界")',
                    "if flag { return }",
                    "// a comment",
                    "value = compute(value, scale: 2.5)",
                    "for item in items { total += item.price }",
                    "",
                ]
            ),
            max_size=25,
        )
    )
    return "".join(f"{indent}{line}\n" for line in lines)


@st.composite
def declaration(draw) -> str:
    name = draw(NAMES)
    head = draw(DOC) + draw(ATTRIBUTE)
    kind = draw(st.sampled_from(["func", "type", "protocol", "global", "small", "statement"]))
    if kind == "func":
        return f"{head}func {name}(_ x: Int) -> Int {{\n{draw(body_lines())}    return x\n}}\n"
    if kind == "type":
        keyword = draw(st.sampled_from(["class", "struct", "enum", "actor", "extension"]))
        members = []
        for i in range(draw(st.integers(0, 8))):
            members.append(f"    /// Member {i}.\n    var {name}{i}: Int = {i}\n")
            members.append(f"    func run{i}() {{\n{draw(body_lines('        '))}    }}\n")
        return f"{head}{keyword} {name} {{\n{''.join(members)}}}\n"
    if kind == "protocol":
        return (
            f"{head}protocol {name} {{\n    func f() async throws\n    var v: Int {{ get }}\n}}\n"
        )
    if kind == "global":
        return f"{head}{draw(st.sampled_from(['let', 'var']))} {name} = [1, 2, 3]\n"
    if kind == "small":
        return draw(
            st.sampled_from(
                [
                    f"typealias {name} = (Int) -> Void\n",
                    "infix operator ~~: AdditionPrecedence\n",
                    "precedencegroup P { associativity: left }\n",
                    f'macro {name}() = #externalMacro(module: "M", type: "T")\n',
                    'let banner = "' + " ".join(["long"] * 150) + '"\n',
                ]
            )
        )
    return draw(st.sampled_from(["import SwiftUI\n", "#if DEBUG\n", "#endif\n", 'print("hi")\n']))


@st.composite
def swift_source(draw) -> str:
    text = "\n".join(draw(st.lists(declaration(), min_size=1, max_size=8)))
    if draw(st.booleans()):  # sometimes cut off mid-way, as broken files are
        text = text[: draw(st.integers(0, len(text)))]
    return text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=swift_source())
def test_any_source_is_cut_within_the_limit_without_losing_lines(counter, text):
    cfg = ChunkConfig(counter=counter, target_tokens=60, max_tokens=80, overlap_tokens=10)
    pieces = chunk_swift(text, cfg)
    assert_within_limit(cfg, pieces)
    assert_every_line_kept(text, pieces)
