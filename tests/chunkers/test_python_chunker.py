"""Behaviour of the Python-source chunker, on a realistic service module."""

from __future__ import annotations

import re
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkers.code.python import chunk_python
from chunkers.config import ChunkConfig
from chunkers.model import Piece
from tests.support import paths

FIXTURES = paths.FIXTURES / "python"
SERVICE = (FIXTURES / "service.py").read_text()
BROKEN = (FIXTURES / "syntax_error.py.txt").read_text()


def py_lines(text: str) -> list[str]:
    """Lines as Python numbers them (only \\r\\n, \\r and \\n end a line)."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(py_lines(text), 1) if needle in line)


def by_symbol(pieces: list[Piece], symbol: str) -> list[Piece]:
    return [p for p in pieces if p.symbol == symbol]


def assert_every_line_covered(text: str, pieces: list[Piece]) -> None:
    lines = py_lines(text)
    for p in pieces:
        assert p.content in "".join(lines[p.start_line - 1 : p.end_line]), p
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        whole = any(p.start_line <= n <= p.end_line and line in p.content for p in pieces)
        # A single line over the hard limit is cut into consecutive parts on that line.
        cut = "".join(p.content for p in pieces if p.start_line == p.end_line == n)
        assert whole or line.strip() in cut, f"line {n} lost: {line!r}"


@pytest.fixture
def service(cfg: ChunkConfig) -> list[Piece]:
    pieces, warnings = chunk_python(SERVICE, cfg, origin="service.py")
    assert warnings == []
    return pieces


@pytest.fixture
def service_small(small_cfg: ChunkConfig) -> list[Piece]:
    pieces, warnings = chunk_python(SERVICE, small_cfg, origin="service.py")
    assert warnings == []
    return pieces


# --- piece kinds -------------------------------------------------------------------------


def test_empty_source_gives_nothing(cfg):
    assert chunk_python("", cfg) == ([], [])
    assert chunk_python("\n   \n", cfg) == ([], [])


def test_module_docstring_is_the_first_piece(service):
    first = service[0]
    assert first.kind == "module_docstring"
    assert first.content.startswith('"""Order service')
    assert (first.start_line, first.end_line) == (1, 4)


def test_top_level_functions_are_pieces_of_kind_function(service):
    functions = [p.symbol for p in service if p.kind == "function"]
    assert functions == ["price_lookup", "fetch_catalogue", "create_order"]


def test_async_function_is_a_function_marked_async(service):
    (piece,) = by_symbol(service, "fetch_catalogue")
    assert piece.kind == "function"
    assert piece.content.lstrip().startswith("async def fetch_catalogue")
    assert piece.metadata["async"] is True


def test_classes_are_pieces_of_kind_class(service):
    classes = [p.symbol for p in service if p.kind == "class" and "part" not in p.metadata]
    assert classes == ["OrderLine", "Order", "OrderError"]


def test_imports_and_constants_are_module_code(service):
    code = "".join(p.content for p in service if p.kind == "module_code")
    assert "from dataclasses import dataclass, field" in code
    assert 'CURRENCY = "EUR"' in code
    assert "app = Router(" in code


def test_main_block_is_module_code(service):
    last = service[-1]
    assert last.kind == "module_code"
    assert last.content.startswith('if __name__ == "__main__":')
    assert last.end_line == len(py_lines(SERVICE))


# --- decorators, comments, line ranges ---------------------------------------------------


def test_decorators_open_the_content_and_fill_attributes(service):
    (piece,) = by_symbol(service, "create_order")
    assert piece.start_line == line_of(SERVICE, "@app.route")
    assert piece.content.startswith('@app.route("/orders", methods=["POST"])\n@app.require_auth\n')
    assert piece.attributes == ['@app.route("/orders", methods=["POST"])', "@app.require_auth"]


def test_class_decorator_with_arguments_is_an_attribute(service):
    (piece,) = by_symbol(service, "OrderLine")
    assert piece.attributes == ["@dataclass(frozen=True)"]
    assert piece.content.startswith("@dataclass(frozen=True)\nclass OrderLine:")


def test_comment_directly_above_a_definition_stays_with_it(service):
    (piece,) = by_symbol(service, "price_lookup")
    assert piece.content.startswith("# Prices come from the catalogue service")
    assert piece.start_line == line_of(SERVICE, "# Prices come from")


def test_trailing_body_comment_stays_with_its_function(cfg):
    source = "def f():\n    return 1\n    # unreachable, kept for the reader\n\n\nX = 2\n"
    pieces, _ = chunk_python(source, cfg)
    assert pieces[0].symbol == "f"
    assert pieces[0].end_line == 3
    assert pieces[1].content == "X = 2\n"


def test_line_ranges_match_content_exactly(service):
    lines = py_lines(SERVICE)
    for piece in service:
        assert piece.content == "".join(lines[piece.start_line - 1 : piece.end_line])


def test_line_ranges_follow_python_line_breaks(cfg):
    # Form feeds are whitespace to Python, not line breaks; CRLF is one break.
    source = "import os\r\n\r\n\x0c\r\ndef f():\r\n    return os.sep\r\n"
    pieces, _ = chunk_python(source, cfg)
    assert [(p.symbol, p.start_line, p.end_line) for p in pieces] == [
        (None, 1, 1),
        ("f", 4, 5),
    ]


# --- metadata ----------------------------------------------------------------------------


def test_imports_of_the_file_are_on_every_piece(service):
    expected = ["__future__", "asyncio", "logging", "os.path", "dataclasses", "decimal"]
    expected += ["..", "..web.router", ".storage"]
    assert all(p.imports == expected for p in service)


def test_imports_inside_functions_are_listed(cfg):
    source = "def f():\n    import json\n    from .a.b import c\n    return json\n"
    pieces, _ = chunk_python(source, cfg)
    assert pieces[0].imports == ["json", ".a.b"]


def test_docstring_first_line_is_in_metadata(service):
    (piece,) = by_symbol(service, "price_lookup")
    assert piece.metadata["docstring"] == "Price of one SKU, or raise KeyError."


# --- splitting big classes ---------------------------------------------------------------


def test_big_class_splits_into_header_and_method_parts(service_small):
    parts = [p for p in service_small if (p.symbol or "").startswith("OrderService")]
    symbols = list(dict.fromkeys(p.symbol for p in parts))
    assert symbols == [
        "OrderService",
        "OrderService.__init__",
        "OrderService.validate",
        "OrderService.submit",
        "OrderService.export_path",
        "OrderService.for_tests",
        "OrderService.submitted",
    ]
    assert parts[0].kind == "class"
    assert {p.kind for p in parts[1:]} == {"method"}


def test_header_part_holds_class_line_docstring_and_attributes(service_small):
    header = by_symbol(service_small, "OrderService")[0]
    assert header.content.startswith("class OrderService:\n")
    assert "retry_limit = 3" in header.content
    assert "def " not in header.content


def test_every_class_part_carries_the_class_header_as_context(service_small):
    parts = [p for p in service_small if (p.symbol or "").startswith("OrderService")]
    expected = 'class OrderService:\n    """Validates, prices and stores orders."""'
    assert {p.context for p in parts} == {expected}


def test_decorated_class_header_context_includes_decorators(service_small):
    parts = [p for p in service_small if (p.symbol or "").startswith("Order")]
    total = by_symbol(parts, "Order.total")[0]
    assert total.context.startswith("@dataclass\nclass Order:")
    assert total.attributes == ["@property"]


def test_class_parts_are_numbered(service_small):
    parts = [p for p in service_small if (p.symbol or "").startswith("OrderService")]
    assert [p.metadata["part"] for p in parts] == list(range(1, len(parts) + 1))
    assert {p.metadata["parts"] for p in parts} == {len(parts)}


def test_each_class_part_lists_the_members_it_holds_as_the_tree_sitter_chunkers_do(
    service_small,
):
    [order] = by_symbol(service_small, "Order")
    [service] = by_symbol(service_small, "OrderService")
    assert order.metadata["members"] == ["order_id", "customer", "lines"]
    assert service.metadata["members"] == ["retry_limit", "backoff_seconds"]
    assert by_symbol(service_small, "OrderService.submit")[0].metadata["members"] == ["submit"]


def test_comment_above_a_method_stays_with_the_method(service_small):
    submit = by_symbol(service_small, "OrderService.submit")[0]
    assert submit.content.lstrip().startswith("# Retries cover")


def test_method_over_the_hard_limit_falls_back_to_line_windows(service_small, small_cfg):
    windows = by_symbol(service_small, "OrderService.validate")
    assert len(windows) > 1
    assert windows[0].start_line == line_of(SERVICE, "def validate")
    assert windows[-1].end_line == line_of(SERVICE, "stale price")


def test_class_within_the_target_is_not_split(cfg):
    pieces, _ = chunk_python("class Small:\n    def a(self):\n        return 1\n", cfg)
    assert [(p.symbol, p.kind) for p in pieces] == [("Small", "class")]


# --- limits and coverage -----------------------------------------------------------------


@pytest.mark.parametrize("config", ["cfg", "small_cfg"])
def test_no_piece_exceeds_the_hard_limit(config, request):
    chosen: ChunkConfig = request.getfixturevalue(config)
    pieces, _ = chunk_python(SERVICE, chosen)
    assert max(chosen.count(p.content) for p in pieces) <= chosen.max_tokens


@pytest.mark.parametrize("config", ["cfg", "small_cfg"])
def test_every_non_blank_line_is_in_a_piece(config, request):
    pieces, _ = chunk_python(SERVICE, request.getfixturevalue(config))
    assert_every_line_covered(SERVICE, pieces)


def test_long_single_line_is_cut_within_the_limit(small_cfg):
    source = "WORDS = " + repr(" ".join(f"word{i}" for i in range(200))) + "\n"
    pieces, _ = chunk_python(source, small_cfg)
    assert len(pieces) > 1
    assert all(small_cfg.count(p.content) <= small_cfg.max_tokens for p in pieces)
    assert "".join(p.content for p in pieces) == source


# --- source that does not parse ----------------------------------------------------------


def test_syntax_error_falls_back_to_line_windows_with_a_warning(cfg):
    pieces, warnings = chunk_python(BROKEN, cfg, origin="src/broken.py")
    assert warnings == ["src/broken.py:11: syntax error ('(' was never closed), chunked by lines"]
    assert {p.kind for p in pieces} == {"window"}
    assert_every_line_covered(BROKEN, pieces)


def test_null_byte_is_reported_at_its_line(cfg):
    pieces, warnings = chunk_python("x = 1\ny = '\0'\n", cfg, origin="bin.py")
    assert warnings[0].startswith("bin.py:2: syntax error")
    assert pieces[0].content == "x = 1\ny = '\0'\n"


def test_too_deeply_nested_source_is_chunked_by_lines(small_cfg):
    source = "x = " + "-" * 200_000 + "1\n"
    pieces, warnings = chunk_python(source, small_cfg, origin="deep.py")
    assert warnings[0].startswith("deep.py:1: syntax error")
    assert all(small_cfg.count(p.content) <= small_cfg.max_tokens for p in pieces)


# --- property: any python-ish source -----------------------------------------------------

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)
WORDS = st.lists(st.sampled_from(["order", "price", "sku", "retry", "cache", "42", "é"]))
STRING = WORDS.map(lambda w: repr(" ".join(w)))
EXPR = st.one_of(st.integers().map(str), STRING, NAMES.map(lambda n: f"{n}(1, key=2)"))
STATEMENT = st.one_of(
    st.tuples(NAMES, EXPR).map(lambda t: f"{t[0]} = {t[1]}"),
    EXPR.map(lambda e: f"return {e}"),
    WORDS.map(lambda w: "# " + " ".join(w)),
    st.just(""),
)
DECORATOR = st.one_of(NAMES.map(lambda n: f"@{n}"), st.just("@app.route('/x')"))


@st.composite
def functions(draw, indent: str = "") -> str:
    head = [indent + d for d in draw(st.lists(DECORATOR, max_size=2))]
    name = draw(NAMES)
    head.append(f"{indent}{draw(st.sampled_from(['def', 'async def']))} {name}(self, a=1):")
    body = draw(st.lists(STATEMENT, min_size=1, max_size=8))
    if not any(s and not s.startswith("#") for s in body):
        body.append("pass")
    return "\n".join(head + [f"{indent}    {s}" if s else "" for s in body])


@st.composite
def classes(draw) -> str:
    head = draw(st.lists(DECORATOR, max_size=1)) + [f"class {draw(NAMES).title()}(Base):"]
    if draw(st.booleans()):
        head.append(f"    {draw(STRING)}")
    members = draw(
        st.lists(
            st.one_of(
                functions(indent="    "), st.tuples(NAMES, EXPR).map("    {0[0]} = {0[1]}".format)
            ),
            min_size=1,
            max_size=6,
        )
    )
    return "\n".join(head + members)


TOP_LEVEL = st.one_of(
    functions(),
    classes(),
    NAMES.map(lambda n: f"import {n}.sub"),
    st.tuples(NAMES, EXPR).map(lambda t: f"{t[0].upper()} = {t[1]}"),
    WORDS.map(lambda w: "# " + " ".join(w)),
    st.just('if __name__ == "__main__":\n    main()'),
)
ITEMS = st.lists(
    st.tuples(TOP_LEVEL, st.sampled_from(["\n", "\n\n", "\n\n\n"])), min_size=1, max_size=12
)
# About one file in five does not parse, to exercise the line-window fallback too.
TAILS = st.sampled_from(["", "", "", "", "def broken(:\n"])
SOURCES = st.tuples(ITEMS, TAILS).map(lambda t: "".join(c + gap for c, gap in t[0]) + t[1])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=SOURCES)
def test_property_any_source_is_covered_within_the_hard_limit(counter, source):
    limits = ChunkConfig(counter=counter, target_tokens=60, max_tokens=80, overlap_tokens=10)
    pieces, _ = chunk_python(source, limits, origin="gen.py")
    assert all(limits.count(p.content) <= limits.max_tokens for p in pieces)
    assert_every_line_covered(source, pieces)


def test_code_the_compiler_warns_about_is_chunked_by_declaration_without_a_warning(cfg):
    source = 'def split(text):\n    return re.split("\\s+", text)\n'
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would surface as an exception
        pieces, problems = chunk_python(source, cfg)
    assert problems == []
    assert [(p.symbol, p.kind) for p in pieces] == [("split", "function")]
