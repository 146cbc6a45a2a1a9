"""Link places that follow a declaration to its callers in other files
(query.navigation.callers, query.retrieval.bridges), on the navigation fixtures ingested into
a temporary store: only calls that resolution vouches for, header and implementation as one
declaration, and nothing for a declaration called from too many files."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.settings import Settings
from core.store.sqlite.store import SQLiteStore
from query.navigation.callers import MAX_CALLER_DOCS, callers_of
from query.retrieval.bridges import follows_callers
from query.retrieval.engine import Engine
from query.retrieval.pipeline import answer, make_request
from tests.support.navigation import NAVIGATION, ingest_into, keyword_engine


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return ingest_into(tmp_path_factory.mktemp("callers"), NAVIGATION)


def declaring_chunk(store: Path, path: str, name: str, container: str | None) -> str:
    index = SQLiteStore(store).open_index("app")
    try:
        rows = index.references_in(path)
    finally:
        index.close()
    (chunk_id,) = {
        r["chunk_id"]
        for r in rows
        if r["role"] == "definition" and r["name"] == name and container in (None, r["scope"])
    }
    return chunk_id


def callers(
    store: Path, path: str, name: str, container: str | None = None
) -> list[tuple[str, str]]:
    """(caller's path, name called) of `name` declared in `path` (in type `container`)."""
    chunk_id = declaring_chunk(store, path, name, container)
    index = SQLiteStore(store).open_index("app")
    try:
        found = callers_of(index, [(chunk_id, path)])
        paths = {cid: row["path"] for cid, row in index.fetch([c.chunk_id for c in found]).items()}
    finally:
        index.close()
    assert all(c.declared_in == chunk_id for c in found)
    return [(paths[c.chunk_id], c.name) for c in found if c.name == name]


def test_a_swift_method_declared_in_an_extension_leads_to_the_file_that_calls_it(store):
    assert callers(store, "swift/Shape+Area.swift", "area") == [("swift/Canvas.swift", "area")]


def test_an_objc_method_leads_to_its_message_sends_with_header_and_implementation_as_one(store):
    assert callers(store, "objc/Greeter.m", "greet:times:") == [("objc/main.m", "greet:times:")]


def test_a_python_function_leads_to_the_module_that_imports_and_calls_it(store):
    assert callers(store, "python/shapes.py", "make") == [("python/app.py", "make")]


def test_a_call_through_a_protocol_the_type_adopts_reaches_its_implementation(store):
    # `shape.draw()` in Canvas.swift may mean Drawable's requirement or Shape's method: both
    # run Shape.draw, since Shape adopts Drawable.
    found = callers(store, "swift/Shape.swift", "draw", "Shape")
    assert found == [("swift/Canvas.swift", "draw")]


def test_a_declaration_in_a_language_the_caller_cannot_call_is_no_candidate(store):
    # app.py's `shape.draw()` cannot mean the Swift declarations of `draw`.
    assert callers(store, "python/shapes.py", "draw") == [("python/app.py", "draw")]


def test_a_call_that_may_mean_a_same_named_method_of_another_type_is_not_followed(store):
    # `shape.reset()` and `canvas.reset()` in Canvas.swift: either of two `reset`s.
    assert callers(store, "swift/Shape.swift", "reset") == []


def test_calls_from_the_declaring_file_itself_lead_nowhere_new(store):
    # Shape.draw calls self.render in the same file only.
    assert callers(store, "python/shapes.py", "render") == []


def test_a_declaration_called_from_too_many_files_leads_nowhere(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "ledger.py").write_text("def settle_account(x):\n    return x\n")
    for i in range(MAX_CALLER_DOCS + 1):
        (corpus / f"user{i}.py").write_text(
            f"from ledger import settle_account\n\n\ndef job{i}():\n    settle_account({i})\n"
        )
    few = ingest_into(tmp_path / "few", _subset(corpus, tmp_path / "few-corpus", MAX_CALLER_DOCS))
    many = ingest_into(tmp_path / "many", corpus)
    assert len(callers(few, "ledger.py", "settle_account")) == MAX_CALLER_DOCS
    assert callers(many, "ledger.py", "settle_account") == []


def _subset(corpus: Path, out: Path, users: int) -> Path:
    out.mkdir()
    for path in corpus.iterdir():
        if path.name == "ledger.py" or int(path.stem.removeprefix("user")) < users:
            (out / path.name).write_text(path.read_text())
    return out


def engine(store: Path, link_callers: str | None) -> Engine:
    return keyword_engine(
        store, None if link_callers is None else Settings(link_callers=link_callers)
    )


def ask(store: Path, link_callers: str | None, query: str) -> list[dict]:
    served = engine(store, link_callers)
    try:
        request = make_request({"query": query, "mode": "bm25", "rerank": False, "top_k": 10})
        return answer(request, served).chunks
    finally:
        served.close()


def test_always_a_caller_takes_a_link_place_and_says_it_calls(store):
    chunks = ask(store, "always", "shout")
    linked = [c for c in chunks if c["linked_from"] and c["path"] == "objc/main.m"]
    assert linked and linked[0]["linked_from"]["relation"] == "calls"
    assert linked[0]["linked_from"]["name"] == "greet:times:"


def test_off_callers_are_not_followed(store):
    assert not called(ask(store, "off", "who calls shout"))


def test_asked_callers_are_followed_for_a_question_about_uses_only(store):
    assert called(ask(store, "asked", "who calls shout"))
    assert not called(ask(store, "asked", "shout"))


def test_by_default_callers_are_followed_when_the_question_asks_for_them(store):
    assert called(ask(store, None, "who calls shout"))
    assert not called(ask(store, None, "shout"))


def called(chunks: list[dict]) -> bool:
    return any((c["linked_from"] or {}).get("relation") == "calls" for c in chunks)


@pytest.mark.parametrize(
    "question",
    [
        "what calls registerModule",
        "where is RCTImageLoader used",
        "which views depend on the shadow tree",
        "who registers the modules",
        "what breaks if I rename flush",
        "find references to greet:times:",
    ],
)
def test_questions_about_uses_ask_for_callers(question):
    assert follows_callers("asked", question)


@pytest.mark.parametrize(
    "question",
    ["how do I use NSURLSession", "how does the bridge load modules", "sort a list using a key"],
)
def test_questions_about_how_something_works_do_not(question):
    assert not follows_callers("asked", question)


# A commit between two reads (`--watch`), and adopters recorded with their scope


class CommittedBetweenReads:
    """An index whose second read of definitions comes after a commit that removed them,
    as a `--watch` ingest committing between callers_of's reads leaves it."""

    def __init__(self, index) -> None:
        self._index = index

    def definitions_named(self, names: list[str]) -> list[dict]:
        return []

    def __getattr__(self, name: str):
        return getattr(self._index, name)


def test_definitions_gone_by_the_second_read_lead_nowhere_rather_than_fail(store):
    chunk_id = declaring_chunk(store, "objc/Greeter.m", "greet:times:", None)
    index = SQLiteStore(store).open_index("app")
    try:
        assert callers_of(CommittedBetweenReads(index), [(chunk_id, "objc/Greeter.m")]) == []
    finally:
        index.close()


def test_a_failing_link_stage_leaves_the_answer_with_a_note(store, monkeypatch):
    def broken(retriever, first, **options):
        raise KeyError("greet:times:")

    monkeypatch.setattr("query.retrieval.pipeline.linked_chunks", broken)
    served = engine(store, "always")
    try:
        request = make_request({"query": "who calls shout", "mode": "bm25", "rerank": False})
        response = answer(request, served)
    finally:
        served.close()
    assert response.chunks
    assert any(n.startswith("degraded: link places failed") for n in response.notes)


def reference(name: str, role: str, scope: str, path: str, line: int, **more) -> dict:
    doc = path.rsplit(".", 1)[0]
    fields = {"qualifier": "", "kind": "", "end_line": line, "chunk_id": f"{doc}#{line}"}
    return {
        "name": name,
        "role": role,
        "scope": scope,
        "path": path,
        "line": line,
        "doc_id": doc,
        **fields,
        **more,
    }


class Rows:
    """An index holding only these reference rows."""

    def __init__(self, rows: list[dict]) -> None:
        self.rows = rows

    def references_in(self, path: str) -> list[dict]:
        return [r for r in self.rows if r["path"] == path]

    def references_named(self, names: list[str]) -> list[dict]:
        return [r for r in self.rows if r["name"] in names]

    def definitions_named(self, names: list[str]) -> list[dict]:
        return [r for r in self.references_named(names) if r["role"] == "definition"]

    def imports_of(self, doc_ids: list[str]) -> dict[str, list[str]]:
        return {}


def test_a_call_through_a_protocol_reaches_a_method_of_a_type_recorded_with_its_scope():
    # Studio.Brush adopts Painting; `item.paintAll()` may mean the requirement or Brush's
    # method, both of which run Brush's paintAll.
    index = Rows(
        [
            reference("paintAll", "definition", "Painting", "Painting.swift", 2),
            reference("Painting", "inherit", "Studio.Brush", "Brush.swift", 3),
            reference("paintAll", "definition", "Studio.Brush", "Brush.swift", 4),
            reference("paintAll", "call", "show", "Gallery.swift", 2, qualifier="item"),
        ]
    )
    found = callers_of(index, [("Brush#4", "Brush.swift")])
    assert [(c.chunk_id, c.name) for c in found] == [("Gallery#2", "paintAll")]
