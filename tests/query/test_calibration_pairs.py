"""Pairs mined from an index's own chunks (query/calibration/pairs.py)."""

from __future__ import annotations

from query.calibration.pairs import distinctive_headings, doc_comment, mine, mine_pairs, reveals

BODY = " ".join(["words of a section long enough to be found by what it says"] * 3)


def prose(chunk_id: str, doc_id: str, context: str, content: str = BODY) -> dict:
    return {
        "chunk_id": chunk_id,
        "doc_id": doc_id,
        "context": context,
        "content": content,
        "language": "markdown",
    }


def test_a_section_is_asked_by_its_distinctive_headings_below_the_title():
    row = prose("c1", "a.md", "Result Builders › Detailed design › Buildable expressions")
    pair = mine(row, {"detailed design", "buildable expressions"})
    assert pair is not None
    assert (pair.query, pair.source, pair.text) == (
        "Detailed design Buildable expressions",
        "heading",
        BODY,
    )


def test_headings_many_documents_share_are_not_asked():
    rows = [
        prose("c1", "a.md", "Async let › Motivation › Child tasks in scope"),
        prose("c2", "b.md", "Typed throws › Motivation"),
    ]
    assert distinctive_headings(rows) == {"child tasks in scope"}
    assert mine(rows[0], distinctive_headings(rows)).query == "Child tasks in scope"
    assert mine(rows[1], distinctive_headings(rows)) is None


def test_a_document_whose_context_is_its_title_is_asked_by_its_title():
    pair = mine(prose("c1", "7", "Poverty and survival in HIV"), set())
    assert (pair.query, pair.source) == ("Poverty and survival in HIV", "title")


def test_a_python_function_is_asked_by_its_docstrings_first_sentence_and_found_without_it():
    code = (
        "def non_increasing(values):\n"
        '    """True if values are not increasing. Equal neighbours count as such."""\n'
        "    return all(x >= y for x, y in zip(values, values[1:]))  # pairwise check over\n"
        "    # every neighbouring pair of the values list given by the caller today\n"
    )
    row = {"chunk_id": "f", "doc_id": "p.py", "content": code, "language": "python"}
    pair = mine(row, set())
    assert pair.query == "True if values are not increasing."
    assert "not increasing" not in pair.text and pair.text.startswith("def non_increasing")
    assert pair.source == "doc comment"


def test_a_swift_doc_comment_is_taken_out_of_the_declaration_it_documents():
    code = "/// Loads the trips of a user from disk.\n/// Slow.\nfunc loadTrips() {}\n"
    assert doc_comment(code, "swift") == (
        "Loads the trips of a user from disk.",
        "func loadTrips() {}\n",
    )


def test_a_block_doc_comment_is_taken_out_too():
    code = "/**\n * Parses a token.\n */\nint parse(void);\n"
    assert doc_comment(code, "c") == ("Parses a token.", "int parse(void);\n")


def test_code_without_a_doc_comment_yields_no_pair():
    row = {
        "chunk_id": "f",
        "doc_id": "p.py",
        "content": "def f():\n    return 1\n",
        "language": "python",
    }
    assert mine(row, set()) is None


def test_a_chunk_that_is_mostly_its_heading_yields_no_pair():
    assert (
        mine(
            prose("c1", "a.md", "Guide › Unique heading here", "Too short."),
            {"unique heading here"},
        )
        is None
    )


def test_pairs_are_mined_in_chunk_id_order_up_to_the_limit():
    rows = {f"c{i}": prose(f"c{i}", f"{i}.md", f"Title number {i}") for i in range(5)}
    assert [p.chunk_id for p in mine_pairs(rows, 3)] == ["c0", "c1", "c2"]


def test_chunks_of_the_same_document_that_still_hold_the_question_are_left_out():
    pair = mine(prose("c1", "a.md", "Macros › Freestanding expansion"), {"freestanding expansion"})
    under_heading = prose("c2", "a.md", "Macros › Freestanding expansion › Examples")
    quoting = prose("c3", "a.md", "Macros › Other", "see freestanding   Expansion above")
    elsewhere_in_document = prose("c4", "a.md", "Macros › Attached macros")
    other_document = prose("c5", "b.md", "Macros › Freestanding expansion")
    assert reveals(pair, under_heading) and reveals(pair, quoting)
    assert not reveals(pair, elsewhere_in_document)
    assert not reveals(pair, other_document)
