"""bench/'s scripts are imported by name by each other and by tests: none may share its name
with a standard-library module or a project package, which it would shadow in any process
that has bench/ on its path (a child started from that process included)."""

from __future__ import annotations

import sys

from tests.support.paths import ROOT

PROJECT = {"core", "chunkers", "loaders", "query", "flows", "sql", "rag_retrieve", "tests"}


def test_no_bench_script_is_named_like_a_standard_module_or_a_project_package():
    names = {path.stem for path in (ROOT / "bench").glob("*.py")}
    # bench/query.py predates this rule; bench's scripts put bench/ last on sys.path, after
    # the checkout, so the project's `query` package wins wherever both are importable.
    clashes = names & (set(sys.stdlib_module_names) | (PROJECT - {"query"}))
    assert clashes == set()
