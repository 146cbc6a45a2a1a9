"""Declaration chunking of the languages read through the node table (grammar_table.py):
the polyglot fixture repository's golden declarations, nothing lost, nothing too big."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkers.code.grammar_syntax import chunk_code, syntax_for
from chunkers.code.grammar_table import LANGUAGE_SPECS
from chunkers.config import ChunkConfig
from chunkers.model import Piece
from chunkers.sources.file_types import file_kind, header_language
from tests.support import paths
from tests.support.pieces import assert_every_line_kept, assert_within_limit

POLYGLOT = paths.FIXTURES / "polyglot"
REPO = POLYGLOT / "repo"
EXPECTED = json.loads((POLYGLOT / "expected.json").read_text(encoding="utf-8"))


def language_of(path: Path, text: str) -> str:
    kind = file_kind(path)
    assert kind is not None
    return header_language(text) if path.suffix == ".h" else kind


def chunked(relative: str, cfg: ChunkConfig) -> tuple[str, list[Piece]]:
    path = REPO / relative
    text = path.read_text(encoding="utf-8")
    return text, chunk_code(text, cfg, language_of(path, text))


def declaration(pieces: list[Piece], symbol: str) -> Piece:
    (piece,) = [p for p in pieces if p.symbol == symbol and p.kind != "other"]
    return piece


def test_every_language_of_the_table_has_a_fixture_file():
    assert {entry["language"] for entry in EXPECTED.values()} == set(LANGUAGE_SPECS)


@pytest.mark.parametrize("language", sorted(LANGUAGE_SPECS))
def test_each_grammar_loads_from_its_wheel_and_parses(language):
    syntax = syntax_for(language)
    assert syntax.parse(b"\n").type != "ERROR"


@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_the_header_sniff_and_extension_pick_the_fixtures_language(relative):
    path = REPO / relative
    assert language_of(path, path.read_text(encoding="utf-8")) == EXPECTED[relative]["language"]


@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_each_top_level_declaration_is_its_own_piece_with_kind_symbol_lines_doc_and_container(
    cfg, relative
):
    _, pieces = chunked(relative, cfg)
    found = [
        [
            p.kind,
            p.symbol,
            p.start_line,
            p.end_line,
            p.metadata.get("docstring"),
            p.metadata.get("container"),
        ]
        for p in pieces
        if p.kind != "other"
    ]
    assert found == EXPECTED[relative]["declarations"]


@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_every_non_blank_line_is_in_some_piece(cfg, relative):
    text, pieces = chunked(relative, cfg)
    assert_every_line_kept(text, pieces)


@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_split_small_no_piece_exceeds_the_limit_and_no_line_is_lost(small_cfg, relative):
    text, pieces = chunked(relative, small_cfg)
    assert_within_limit(small_cfg, pieces)
    assert_every_line_kept(text, pieces)


def test_a_declaration_piece_opens_with_its_doc_comment(cfg):
    _, pieces = chunked("backend/src/auth/refresh.ts", cfg)
    piece = declaration(pieces, "refreshAuthToken")
    assert piece.content.startswith("/**\n * Exchanges a refresh token")
    assert piece.content.rstrip().endswith("return next;\n}")


def test_an_attribute_between_doc_comment_and_item_keeps_both_with_the_item(cfg):
    _, pieces = chunked("tools/cache/src/lib.rs", cfg)
    piece = declaration(pieces, "TileKey")
    assert piece.content.startswith("/// Where a tile lives on disk")
    assert "#[derive(Debug, Clone, PartialEq, Eq, Hash)]\npub struct TileKey {" in piece.content


def test_a_signature_stops_at_the_body(cfg):
    _, pieces = chunked("backend/src/auth/refresh.ts", cfg)
    assert declaration(pieces, "refreshAuthToken").metadata["signature"] == (
        "export async function refreshAuthToken(refreshToken: string): Promise<TokenPair>"
    )


def test_every_piece_carries_the_files_imports(cfg):
    _, pieces = chunked("ios/AuthSession.h", cfg)
    assert {tuple(p.imports) for p in pieces} == {("Foundation", "AuthenticationServices")}
    _, pieces = chunked("server/session/store.go", cfg)
    assert {tuple(p.imports) for p in pieces} == {("context", "errors", "sync", "time")}


def test_imports_inside_an_include_guard_are_the_files_imports(cfg):
    _, pieces = chunked("native/ring_buffer.h", cfg)
    assert {tuple(p.imports) for p in pieces} == {("stddef.h", "stdint.h")}


@pytest.mark.parametrize("language", sorted(LANGUAGE_SPECS))
def test_no_import_node_is_transparent(language):
    # Imports are read from the flat top level, where a transparent node is never listed.
    spec = LANGUAGE_SPECS[language]
    assert not spec.imports & (spec.transparent | {"ERROR"})


def test_objective_c_categories_and_class_extensions_are_extensions(cfg):
    source = (
        "@interface Trip : NSObject\n@end\n\n@interface Trip ()\n@property int days;\n@end\n\n"
        "@interface Trip (Sharing)\n- (void)share;\n@end\n\n"
        "@implementation Trip (Sharing)\n- (void)share {}\n@end\n\n@implementation Trip\n@end\n"
    )
    kinds = [p.kind for p in chunk_code(source, cfg, "objc")]
    assert kinds == ["interface", "extension", "extension", "extension", "implementation"]


def test_objective_c_availability_macros_are_listed_as_attributes(cfg):
    _, pieces = chunked("ios/AuthSession.h", cfg)
    assert declaration(pieces, "AuthSession").attributes == ["API_AVAILABLE(ios(13.0))"]


def test_a_container_over_the_limit_is_split_at_its_members_under_its_header(cfg):
    _, pieces = chunked("ios/AuthSession.m", cfg)
    parts = [p for p in pieces if p.kind == "implementation"]
    assert [(p.start_line, p.end_line) for p in parts] == [(32, 41), (43, 68), (70, 83)]
    assert {p.context for p in parts} == {"@implementation AuthSession"}
    assert [p.metadata["part"] for p in parts] == [1, 2, 3]
    assert "- (void)refreshAuthTokenWithCompletion:" in parts[1].content


def test_each_part_of_a_split_container_lists_its_members_objective_c_by_selector(cfg):
    _, pieces = chunked("ios/AuthSession.m", cfg)
    assert [p.metadata["members"] for p in pieces if p.kind == "implementation"] == [
        ["sharedSession"],
        ["refreshAuthTokenWithCompletion:"],
        ["tokenRequestWithRefreshToken:", "signInWithUser:password:"],
    ]


def test_a_closing_brace_and_its_comment_stay_with_the_last_declaration(cfg):
    text, pieces = chunked("native/lru_cache.hpp", cfg)
    assert declaration(pieces, "LruCache").content.endswith("}  // namespace trips::media")


def test_empty_statements_after_a_declaration_stay_with_it_and_none_is_dropped(cfg):
    # A stray `}` splits `};` in two for the parser; the `;` is still a line's text.
    text = "struct Vertex {\n    float4 position [[position]];\n};\n};\n;\nint count;\n"
    pieces = chunk_code(text, cfg, "metal")
    assert "".join(p.content for p in pieces).count(";") == text.count(";")
    assert [p.content for p in pieces if p.symbol == "count"] == ["int count;"]


def test_a_parse_error_keeps_the_declarations_around_it_and_every_line(cfg):
    text = (
        "/** Fine. */\nexport function fine(): number {\n  return 1;\n}\n\n"
        "export function broken( {\n  return ;;\n\n"
        "export class After {\n  run() {}\n}\n"
    )
    pieces = chunk_code(text, cfg, "typescript")
    assert declaration(pieces, "fine").content.startswith("/** Fine. */\nexport function fine")
    assert_every_line_kept(text, pieces)


def test_text_that_is_no_code_at_all_is_still_chunked(small_cfg):
    text = "}}}} ))) (((\nThis is prose; it is not code at all!\n" * 20
    for language in ("objc", "kotlin", "go", "ruby"):
        pieces = chunk_code(text, small_cfg, language)
        assert_within_limit(small_cfg, pieces)
        assert_every_line_kept(text, pieces)


def test_empty_sources_give_no_pieces(cfg):
    assert chunk_code("  \n\n", cfg, "rust") == []


def test_declarations_in_nested_namespaces_name_the_whole_path_as_container(cfg):
    text = "namespace app {\nnamespace net {\n/// Fetches.\nint fetch(int id);\n}\n}\n"
    piece = declaration(chunk_code(text, cfg, "cpp"), "fetch")
    assert (piece.kind, piece.metadata["container"]) == ("function", "app::net")
    assert piece.metadata["docstring"] == "Fetches."


def test_include_guards_and_extern_c_hold_declarations_without_naming_a_container(cfg):
    text = '#ifndef A_H\n#define A_H\nextern "C" {\nint add(int a, int b);\n}\n#endif\n'
    piece = declaration(chunk_code(text, cfg, "c"), "add")
    assert "container" not in piece.metadata


# --- property: any mix of a language's lines, cut anywhere --------------------------------

FIXTURE_LINES = {
    entry["language"]: (REPO / relative).read_text(encoding="utf-8").split("\n")
    for relative, entry in EXPECTED.items()
}


@st.composite
def reshuffled_source(draw) -> tuple[str, str]:
    """A language and lines of its fixture file, reordered and cut off: unbalanced braces,
    orphan comments and half declarations, as in files being edited."""
    language = draw(st.sampled_from(sorted(FIXTURE_LINES)))
    lines = draw(st.lists(st.sampled_from(FIXTURE_LINES[language]), min_size=1, max_size=40))
    text = "\n".join(lines)
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]
    return language, text


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=reshuffled_source())
def test_any_mangled_source_is_cut_within_the_limit_without_losing_lines(counter, source):
    language, text = source
    cfg = ChunkConfig(counter=counter, target_tokens=60, max_tokens=80, overlap_tokens=10)
    pieces = chunk_code(text, cfg, language)
    assert_within_limit(cfg, pieces)
    assert_every_line_kept(text, pieces)
