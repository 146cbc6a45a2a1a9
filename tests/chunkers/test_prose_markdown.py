"""Markdown and DocC articles → section pieces with a heading context."""

from __future__ import annotations

from dataclasses import replace

from chunkers.prose.markdown import chunk_markdown
from chunkers.prose.sentences import split_sentences
from tests.support import paths

FIXTURES = paths.FIXTURES / "prose"
GUIDE = (FIXTURES / "guide.md").read_text()
DOCC = (FIXTURES / "docc_page.md").read_text()
SWIFT_BLOCK = GUIDE[GUIDE.index("```swift") : GUIDE.index("```\n\n## Querying") + 3]


def piece_with(pieces, needle):
    return next(p for p in pieces if needle in p.content)


def test_context_is_title_and_heading_path(cfg):
    piece = piece_with(chunk_markdown(GUIDE, cfg), "brew install")
    assert piece.context == (
        "Persisting Data with SwiftData › Setting Up the Container › Configuring the Schema"
    )


def test_headings_are_in_context_and_metadata_not_in_content(cfg):
    piece = piece_with(chunk_markdown(GUIDE, cfg), "one model container at launch")
    assert piece.metadata["headings"] == [
        "Persisting Data with SwiftData",
        "Setting Up the Container",
    ]
    assert "Setting Up the Container" not in piece.content
    assert not piece.content.startswith("#")


def test_title_argument_is_used_when_there_is_no_h1(cfg):
    pieces = chunk_markdown("## Usage\n\nCall it twice.\n", cfg, title="Widget Guide")
    assert pieces[0].context == "Widget Guide › Usage"


def test_setext_heading_starts_a_section(cfg):
    piece = piece_with(chunk_markdown(GUIDE, cfg), "Versioned schemas")
    assert piece.context.endswith("› Migrating Between Versions")


def test_hash_lines_inside_code_fences_are_not_headings(cfg):
    pieces = chunk_markdown(GUIDE, cfg)
    assert not any("Install the tools" in p.context for p in pieces)
    assert "# Install the tools" in piece_with(pieces, "brew install").content


def test_sections_are_not_merged_across_headings(cfg):
    pieces = chunk_markdown(GUIDE, cfg)
    intro = piece_with(pieces, "SwiftData turns plain Swift classes")
    assert "one model container" not in intro.content


def test_small_blocks_of_one_section_merge_into_one_piece(cfg):
    piece = piece_with(chunk_markdown(GUIDE, cfg), "brew install")
    assert "Then describe each model" in piece.content
    assert SWIFT_BLOCK in piece.content


def test_code_fence_is_kept_whole_when_it_fits_the_hard_limit(cfg):
    tight = replace(cfg, target_tokens=40, max_tokens=120, overlap_tokens=0)
    pieces = chunk_markdown(GUIDE, tight)
    assert any(p.content == SWIFT_BLOCK for p in pieces)


def test_oversize_code_fence_is_cut_into_fenced_line_windows(small_cfg):
    pieces = [
        p
        for p in chunk_markdown(GUIDE, small_cfg)
        if "var destination" in p.content or "self.endDate" in p.content
    ]
    assert len(pieces) >= 2
    assert all(p.content.startswith("```swift\n") and p.content.endswith("\n```") for p in pieces)
    assert all(small_cfg.count(p.content) <= small_cfg.max_tokens for p in pieces)


def test_long_section_splits_at_sentence_boundaries(small_cfg):
    pieces = [p for p in chunk_markdown(GUIDE, small_cfg) if p.context.endswith("› Querying Data")]
    assert len(pieces) > 2
    for piece in pieces:
        assert piece.content[-1] in ".:", piece.content
        assert small_cfg.count(piece.content) <= small_cfg.max_tokens


def test_split_pieces_repeat_trailing_sentences_as_overlap(cfg):
    overlapping = replace(cfg, target_tokens=80, max_tokens=120, overlap_tokens=30)
    pieces = [
        p for p in chunk_markdown(GUIDE, overlapping) if p.context.endswith("› Querying Data")
    ]
    assert len(pieces) > 2
    for before, after in zip(pieces, pieces[1:], strict=False):
        starts = [a for a, _ in split_sentences(before.content)]
        repeated = [
            before.content[a:] for a in starts if after.content.startswith(before.content[a:])
        ]
        assert repeated, "the next piece opens with the previous piece's last sentences"
        assert overlapping.count(repeated[0]) <= overlapping.overlap_tokens


def test_no_piece_exceeds_the_hard_limit(small_cfg):
    for text in (GUIDE, DOCC):
        for piece in chunk_markdown(text, small_cfg):
            assert small_cfg.count(piece.content) <= small_cfg.max_tokens


def test_line_numbers_refer_to_the_original_text_with_front_matter(cfg):
    piece = piece_with(chunk_markdown(GUIDE, cfg), "SwiftData turns plain Swift classes")
    lines = GUIDE.splitlines()
    assert lines[piece.start_line - 1].startswith("SwiftData turns plain Swift classes")
    assert lines[piece.end_line - 1].endswith("how a view observes stored data.")


def test_pieces_are_sections(cfg):
    assert {p.kind for p in chunk_markdown(GUIDE, cfg)} == {"section"}


def test_empty_document_gives_no_pieces(cfg):
    assert chunk_markdown("", cfg) == []
    assert chunk_markdown("---\ntitle: x\n---\n", cfg) == []


# --- DocC -------------------------------------------------------------------------------


def docc_text(cfg) -> str:
    return "\n".join(p.content for p in chunk_markdown(DOCC, cfg))


def test_metadata_and_options_directives_are_dropped(cfg):
    text = docc_text(cfg)
    for marker in (
        "@Metadata",
        "@TechnologyRoot",
        "@Available",
        "@PageKind",
        "@Options",
        "@AutomaticSeeAlso",
    ):
        assert marker not in text


def test_comment_directive_is_dropped_with_its_text(cfg):
    text = docc_text(cfg)
    assert "@Comment" not in text
    assert "dependency graph" not in text


def test_redirected_directive_is_dropped(cfg):
    assert "@Redirected" not in docc_text(cfg)


def test_container_directives_keep_their_text_unindented(cfg):
    piece = piece_with(chunk_markdown(DOCC, cfg), "to own an observable model")
    assert "@Row" not in piece.content and "@Column" not in piece.content
    assert "\nUse `@State` to own an observable model in a view." in piece.content


def test_doc_links_become_readable_text(cfg):
    text = docc_text(cfg)
    assert "Start with Migrating from Observable Object, then read" in text
    assert "Sharing Data Between Views in Managing Model Data" in text
    assert "<doc:" not in text


def test_double_backtick_symbol_links_become_inline_code(cfg):
    text = docc_text(cfg)
    assert "with the `Observable()` macro instead of `ObservableObject`." in text
    assert "``" not in text.replace("```", "")


def test_attributes_in_code_and_prose_are_not_directives(cfg):
    text = docc_text(cfg)
    assert "@Observable\nfinal class Library" in text
    assert "@MainActor isolates the library" in text


def test_html_comments_are_dropped(cfg):
    assert "zebra" not in docc_text(cfg)


def test_docc_context_uses_the_page_title(cfg):
    piece = piece_with(chunk_markdown(DOCC, cfg), "- `Observable()`")
    assert piece.context == "Adopting Observation › Topics › Essentials"


def test_attribute_with_a_trailing_closure_is_code_not_a_directive(cfg):
    text = "# Macros\n\nExample:\n\n    @Traced(z) { (x, y) in\n        x + y\n    }\n"
    (piece,) = chunk_markdown(text, cfg)
    assert "@Traced(z) { (x, y) in" in piece.content
    assert piece.content.rstrip().endswith("}")


def test_single_line_container_keeps_its_text(cfg):
    (piece,) = chunk_markdown('# Page\n\n@Tab("Swift") { Use the Swift API. }\n', cfg)
    assert piece.content == "Use the Swift API."


def test_a_page_of_many_one_line_sections_joins_them_into_few_pieces(cfg):
    text = "".join(f"## Heading {i}\nline {i}\n" for i in range(20_000))

    pieces = chunk_markdown(text, cfg)

    assert len(pieces) < 20_000 / 25
    assert all(cfg.count(p.content) <= cfg.target_tokens for p in pieces)
    joined = "\n".join(p.content for p in pieces)
    assert all(f"## Heading {i}\n\nline {i}" in joined for i in range(0, 20_000, 997))


def test_a_tiny_section_between_real_ones_keeps_its_own_piece_and_context(cfg):
    text = (
        "# Guide\n\n## Long\n\n" + "A real paragraph about persistence and sync. " * 8 + "\n\n"
        "## Tiny\n\nSee also.\n\n## Long again\n\n" + "More real prose about views. " * 8 + "\n"
    )
    tiny = piece_with(chunk_markdown(text, cfg), "See also.")
    assert tiny.content == "See also." and tiny.context == "Guide › Tiny"
