"""The question's command line (`python -m query "QUESTION" [flags]`): its parser, and the
request fields its flags give. Apart from `query.cli.main` so that what describes the CLI
(query.cli.agent_config's skill manifest) reads the same parser without the dispatch and its
imports.
"""

from __future__ import annotations

import argparse
from typing import Any

from query.types import DEFAULT_FUSION, FUSIONS


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m query",
        description="Hybrid, version-aware retrieval over the indexes of a store. "
        "Subcommands: `python -m query serve` runs the warm HTTP worker, `python -m query mcp` "
        "the MCP server, `python -m query status` says what each index holds, `python -m query "
        "doctor` what works and the fix for what does not (each has its own --help).",
    )
    p.add_argument("query", help="the question")
    flag = p.add_argument
    flag("--domain", help="ios, web, python, trading, vc or general; D admits D and general")
    flag("--ios-version", metavar="X.Y", help="target iOS version, e.g. 17.0")
    flag(
        "--framework",
        dest="frameworks",
        action="append",
        metavar="NAME",
        help="boost chunks tagged with it (x1.25; not a filter); repeatable",
    )
    flag("--top-k", type=int, metavar="N", help="results to return (default 10)")
    flag("--corag", action="store_true", default=None, help="multi-hop retrieval with the LLM")
    flag(
        "--no-user-codebase",
        dest="user_codebase",
        action="store_false",
        default=None,
        help="leave out the user's code (by default it passes any --domain)",
    )
    flag("--index", dest="indexes", action="append", metavar="NAME[,NAME...]", help="default: all")
    flag("--store", metavar="DIR|tidb://...", help="default: RAG_INDEX_DIR, or TiDB if configured")
    flag("--mode", help="hybrid (default), vector or bm25")
    fusions = f"{', '.join(FUSIONS[:-1])} or {FUSIONS[-1]}"
    flag("--fusion", help=f"{fusions} (default {DEFAULT_FUSION})")
    flag("--max-tokens", type=int, metavar="N", help="token budget of the returned chunks")
    flag(
        "--fresh-within", dest="fresh_within_days", type=int, metavar="DAYS", help="verified since"
    )
    flag("--include-deprecated", action="store_true", default=None, help="keep, demoted x0.5")
    flag("--strict", action="store_true", default=None, help="any degradation exits 1")
    flag("--no-rerank", dest="rerank", action="store_false", default=None, help="fused order")
    flag("--no-expand", dest="expand", action="store_false", default=None, help="no variants")
    flag("--no-links", dest="links", action="store_false", default=None, help="no link places")
    flag(
        "--worker",
        metavar="URL",
        help="ask this worker (default RAG_QUERY_WORKER_URL, else the one the store's "
        "worker.json names, once it proves it holds that file's secret)",
    )
    flag(
        "--serve-if-absent",
        action="store_true",
        help="with no worker serving the store, start one on a free loopback port (it keeps "
        "running)",
    )
    flag("--json", action="store_true", help="the response as JSON on stdout")
    return p


def request_fields(args: argparse.Namespace) -> dict[str, Any]:
    skip = ("worker", "json", "serve_if_absent")
    fields = {k: v for k, v in vars(args).items() if k not in skip}
    for name in ("frameworks", "indexes"):
        if fields[name] is not None:
            fields[name] = ",".join(fields[name])  # "--index a,b --index c" = a, b, c
    return fields
