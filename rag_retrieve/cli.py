"""`rag-retrieve`: a thin dispatcher over the module entry points users already know.

    rag-retrieve "QUESTION" [flags]      python -m query "QUESTION" [flags]
    rag-retrieve ask "QUESTION" [flags]  the same, for a question that names a subcommand
    rag-retrieve ingest PATH... [flags]  python -m flows.ingest PATH... [flags] (--watch too)
    rag-retrieve embed [flags]           python -m flows.embed [flags]
    rag-retrieve fetch URL... [flags]    python -m flows.fetch URL... [flags]
    rag-retrieve status | doctor | serve | mcp | embeddings-server | symbol | calibrate [flags]
                                         python -m query status | doctor | ... | calibrate
    rag-retrieve eval DATASET [flags]    python -m query.eval DATASET [flags]
    rag-retrieve migrate [flags]         python -m query migrate: upgrade the indexes
    rag-retrieve model install [--json]  fetch the embedding model now (rag_retrieve/model.py)

Each subcommand is handed to its module's own parser, so flags, help, output and exit codes
(0 done, 1 failed or nothing found, 2 bad arguments) are exactly the module's. Only the
standard library is imported here: `rag-retrieve --help` and a question a running worker
answers cost what `python -m query` costs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

# The subcommands python -m query dispatches itself.
QUERY_SUBCOMMANDS = (
    "status",
    "doctor",
    "serve",
    "mcp",
    "embeddings-server",
    "symbol",
    "calibrate",
    "migrate",
)
USAGE = """usage: rag-retrieve "QUESTION" [flags]       ask the indexes (rag-retrieve --help-ask)
       rag-retrieve ask "QUESTION" [flags]   the same
       rag-retrieve ingest PATH... [flags]   index files and directories (--watch follows them)
       rag-retrieve embed [--index I]        embed the chunks an index holds without vectors
       rag-retrieve fetch URL... [flags]     fetch DocC docs from the web and ingest them
       rag-retrieve status [--store S] [--json]    what the indexes hold
       rag-retrieve doctor [--store S] [--json]    what works, each line OK or the fix
       rag-retrieve symbol NAME [--json]     where it is defined and used, what calls it
       rag-retrieve calibrate [--index I]    choose each index's fusion rule from its chunks
       rag-retrieve migrate [--store S]      upgrade the indexes to this version (ingest does too)
       rag-retrieve serve [flags]            the warm query worker (HTTP)
       rag-retrieve mcp [flags]              the MCP server (stdio, or --http)
       rag-retrieve embeddings-server [flags]   the embedding model over HTTP, for other
                                             machines' ingests (OpenAI's /v1/embeddings)
       rag-retrieve eval DATASET [flags]     measure retrieval on a BEIR-format set
       rag-retrieve model install [--json]   fetch the embedding model now (else on first use)
       rag-retrieve --version

Each subcommand's own --help lists its flags. Exit codes: 0 done, 1 failed or nothing
found, 2 bad arguments."""


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print(USAGE, file=sys.stderr)
        return 2
    if args[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    first, rest = args[0], args[1:]
    if first == "--version":
        from core.cli import package_version

        print(f"rag-retrieve {package_version()}")
        return 0
    if first == "--help-ask":
        return _query()(["--help"])
    if first == "ingest":
        from flows.ingest import main as ingest

        return ingest(rest)
    if first == "fetch":
        from flows.fetch import main as fetch

        return fetch(rest)
    if first == "embed":
        from flows.embed import main as embed

        return embed(rest)
    if first == "model":
        from rag_retrieve.model import main as model

        return model(rest)
    if first == "eval":
        from query.eval.cli import main as evaluate

        return evaluate(rest)
    if first in QUERY_SUBCOMMANDS:
        return _query()(args)
    if first == "ask":
        # A question that is itself a subcommand's name goes last, after `--`, as python -m
        # query takes it.
        if rest[:1] and rest[0] in QUERY_SUBCOMMANDS:
            return _query()([*rest[1:], "--", rest[0]])
        return _query()(rest)
    return _query()(args)


def _query() -> Callable[[list[str]], int]:
    from query.cli.main import main as query

    return query
