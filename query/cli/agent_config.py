"""What registers the MCP server with an agent host, made from the tools the server registers.

`rag-retrieve mcp --print-config claude|mcp-json|openclaw` prints, for this machine, the
`claude mcp add` command (Claude Code), the `mcpServers` block (Claude Desktop, Cursor, ...)
or the OpenClaw skill (SKILL.md in the seed skill's format). The skill's inputs and outputs
are the tools' JSON schemas as `build_server` registers them, listed in-process (no server
runs), and its CLI flags are `python -m query`'s own parser; so none of it is written twice.
What they start is core.own_command's: never an interpreter that imports from the working
directory, which is the user's project when a host starts the server there.
`python -m query.cli.agent_docs` writes the same texts, for a checkout at a placeholder path,
into the README and skills/rag-retrieve/SKILL.md.
"""

from __future__ import annotations

import argparse
import inspect
import json
import shlex
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
import yaml
from mcp_types import Tool as ListedTool
from pydantic import SecretStr

from core.own_command import SCRIPT, query_program
from core.settings import ENV_VARS, Settings
from core.store.sqlite.store import SQLiteStore
from query.cli.question_args import build_parser
from query.errors import store_location
from query.mcp.server import INSTRUCTIONS, RETRIEVE_ARGS, SERVER_NAME, build_server
from query.retrieval.engine import Engine

CONFIG_KINDS = ("claude", "mcp-json", "openclaw")
SKILL_TOOL = "retrieve"  # the seed skill's contract is this tool's
# How the seed skill is called (seeds/000); the platform's, not the tools'.
SKILL_TRIGGERS = (
    "always called by coding-orchestrator before generation",
    'standalone for "find docs about X" queries',
    "by decompose-plan when planning needs context",
)
SKILL_TAGS = ("coding", "rag", "retrieval", "hybrid-search", "mcp")


@dataclass(frozen=True)
class Launch:
    """How a host starts the server: the program (the installed `rag-retrieve` command, or
    an interpreter that has the package with `-P -m query`, by absolute path), the server's
    flags, and the settings it must be given (a host does not pass on a shell's exports)."""

    program: tuple[str, ...]
    store: str | None
    indexes: tuple[str, ...] = ()
    ingest_roots: tuple[str, ...] = ()  # absolute folders the ingest tool may read
    watch: tuple[str, ...] = ()  # absolute directories the server follows
    env: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def in_checkout(cls, root: str, **options: Any) -> Launch:
        """The server of a clone at `root` after `make run`: its .venv and data/indexes."""
        root = root.rstrip("/")
        program = (f"{root}/.venv/bin/{SCRIPT}",)
        return cls(program=program, store=f"{root}/data/indexes", **options)

    @property
    def args(self) -> list[str]:
        """The server's words after the program."""
        args = ["mcp"]
        if self.store:
            args += ["--store", self.store]
        if self.indexes:
            args += ["--index", ",".join(self.indexes)]
        if self.ingest_roots:
            args += ["--allow-ingest", *self.ingest_roots]
        for directory in self.watch:
            args += ["--watch", directory]
        return args


def exported_settings(settings: Settings) -> dict[str, str]:
    """The settings that differ from the defaults, as environment variables; relative paths
    made absolute, since a host starts the server in a directory of its own."""
    defaults = Settings().model_dump()
    env = {}
    for name, value in settings.model_dump().items():
        if value is None or value == defaults[name]:
            continue
        if isinstance(value, Path):
            value = value.resolve()
        elif isinstance(value, SecretStr):  # the token: a host must pass it on as it is
            value = value.get_secret_value()
        env[ENV_VARS[name]] = str(value).lower() if isinstance(value, bool) else str(value)
    return dict(sorted(env.items()))


def launch_here(
    settings: Settings,
    store: str | None,
    indexes: tuple[str, ...],
    ingest_roots: tuple[Path, ...],
    watch: tuple[str, ...] = (),
    program: tuple[str, ...] | None = None,
) -> Launch:
    """This environment's program (default: core.own_command.query_program) and store, as
    `mcp` with these flags would serve them."""
    directory = store_location(store).directory if store else None
    if directory is not None:
        store = str(directory.resolve())
    elif store is None and not settings.tidb_host:
        store = str(settings.index_dir.resolve())
    return Launch(
        program=program or query_program(),
        store=store,
        indexes=indexes,
        ingest_roots=tuple(str(root) for root in ingest_roots),
        watch=watch,
        env=exported_settings(settings),
    )


def registered_tools(launch: Launch) -> list[ListedTool]:
    """The tools as the server lists them to a host, with their JSON schemas."""
    # Listing calls no tool, so the engine's store is never opened: any location serves.
    engine = Engine(Settings(), SQLiteStore(Path(launch.store or ".")))
    server = build_server(
        engine,
        default_indexes=launch.indexes or None,
        ingest_roots=tuple(Path(root) for root in launch.ingest_roots),
    )
    return anyio.run(server.list_tools)


def render_config(kind: str, launch: Launch) -> str:
    """One of CONFIG_KINDS, ending with a newline."""
    if kind == "claude":
        return claude_command(launch) + "\n"
    if kind == "mcp-json":
        return mcp_json(launch) + "\n"
    if kind == "openclaw":
        return openclaw_skill(launch, registered_tools(launch))
    raise ValueError(f"unknown config kind {kind!r}: one of {', '.join(CONFIG_KINDS)}")


def claude_command(launch: Launch) -> str:
    """`claude mcp add` for every project of the user (--scope user)."""
    # The name before -e: Claude Code's -e takes several values and would swallow it.
    words = ["claude", "mcp", "add", "--scope", "user", SERVER_NAME]
    for name, value in launch.env.items():
        words += ["-e", f"{name}={value}"]
    return shlex.join([*words, "--", *launch.program, *launch.args])


def mcp_json(launch: Launch) -> str:
    command, *words = launch.program
    server = {"command": command, "args": [*words, *launch.args], "env": dict(launch.env)}
    return json.dumps({"mcpServers": {SERVER_NAME: server}}, indent=2, ensure_ascii=False)


def openclaw_skill(launch: Launch, tools: list[ListedTool]) -> str:
    """SKILL.md: YAML front matter in the seed skill's fields, then how to call it."""
    by_name = {tool.name: tool for tool in tools}
    skill = by_name[SKILL_TOOL]
    front = {
        "name": SERVER_NAME,
        "version": version("rag-retrieve"),
        "description": textwrap.fill(INSTRUCTIONS, 92) + "\n",
        "triggers": list(SKILL_TRIGGERS),
        "tools": ["shell"],
        "inputs": [
            {name: _input_line(name, skill.input_schema)}
            for name in _properties(skill.input_schema)
        ],
        "outputs": [
            {name: _output_line(schema)}
            for name, schema in _properties(skill.output_schema or {}).items()
        ],
        "metadata": {
            "openclaw": {
                "category": "coding",
                "tags": list(SKILL_TAGS),
                "binaries": [launch.program[0]],
                "env_vars": skill_env_vars(launch),
            }
        },
    }
    header = yaml.dump(front, Dumper=_SkillDumper, sort_keys=False, width=1000, allow_unicode=True)
    return f"---\n{header}---\n{_skill_body(launch, by_name)}"


class _SkillDumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks (the description), the rest as plain as YAML
    allows."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_SkillDumper.add_representer(str, _represent_str)


def skill_env_vars(launch: Launch) -> list[str]:
    """The settings users export under their own names (TIDB_*, EMBEDDING_ENDPOINT, ...:
    the ones without the project's RAG_ prefix), and those the launch passes."""
    names = [var for var in ENV_VARS.values() if not var.startswith("RAG_")]
    return list(dict.fromkeys([*names, *launch.env]))


def cli_flags() -> dict[str, str]:
    """Per retrieve argument, how `python -m query` takes it (from its own parser)."""
    actions = {action.dest: action for action in build_parser()._actions}
    flags = {}
    for argument, dest in RETRIEVE_ARGS.items():
        action = actions[dest]
        if not action.option_strings:
            flags[argument] = "the question, as the first argument"
            continue
        option = action.option_strings[0]
        metavar = action.metavar or dest.upper()
        if action.nargs == 0:
            flags[argument] = f"`{option}` for {str(action.const).lower()}"
        elif isinstance(action, argparse._AppendAction):
            flags[argument] = f"`{option} {metavar}`, once per item"
        else:
            flags[argument] = f"`{option} {metavar}`"
    return flags


def _properties(schema: Mapping[str, Any]) -> dict[str, Any]:
    return dict(schema.get("properties", {}))


def _type(schema: Mapping[str, Any]) -> str:
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"] if s.get("type") != "null")
    if "enum" in schema:
        return " | ".join(json.dumps(value) for value in schema["enum"])
    kind = str(schema.get("type", "any"))
    if kind == "array":
        return f"list of {_type(schema.get('items', {}))}s"
    if kind == "integer" and "minimum" in schema:
        return f"integer >= {schema['minimum']}"
    return kind


def _input_line(name: str, schema: Mapping[str, Any]) -> str:
    field_schema = schema["properties"][name]
    if name in schema.get("required", ()):
        kind = f"{_type(field_schema)}, required"
    elif field_schema.get("default") is not None:
        kind = f"{_type(field_schema)}, default {json.dumps(field_schema['default'])}"
    else:
        kind = f"{_type(field_schema)}, optional"
    return f"{kind}. {field_schema.get('description', '')}".strip()


def _output_line(schema: Mapping[str, Any]) -> str:
    return f"{_type(schema)}. {schema.get('description', '')}".strip()


def _skill_body(launch: Launch, tools: Mapping[str, ListedTool]) -> str:
    server = shlex.join([*launch.program, *launch.args])
    cli = [*launch.program, *(["--store", launch.store] if launch.store else [])]
    if launch.indexes:
        cli += ["--index", ",".join(launch.indexes)]
    shell = shlex.join(cli) + ' "QUESTION" --json'
    symbol_cli = [*launch.program, "symbol", *(["--store", launch.store] if launch.store else [])]
    flags = cli_flags()
    rows = "\n".join(f"| `{argument}` | {flags[argument]} |" for argument in RETRIEVE_ARGS)
    sections = []
    for name, tool in tools.items():
        arguments = ", ".join(f"`{a}`" for a in _properties(tool.input_schema)) or "none"
        outputs = ", ".join(f"`{o}`" for o in _properties(tool.output_schema or {}))
        sections.append(
            f"### `{name}`\n\nArguments: {arguments}. Returns: {outputs}.\n\n"
            f"{inspect.cleandoc(tool.description or '')}\n"
        )
    return f"""# RAG Retrieve

{textwrap.fill(INSTRUCTIONS, 92)}

## Calling it

Over MCP: the server `{SERVER_NAME}`, started by the host as

```sh
{server}
```

(`rag-retrieve mcp --print-config claude` or `mcp-json` prints its registration). From a
shell, the same retrieval, the response as JSON on stdout and notes on stderr (exit 0 with
chunks, 1 with none, 2 for a bad argument, with the reason):

```sh
{shell}
```

| input | on the command line |
|---|---|
{rows}

## Before changing code

Retrieval finds where something is done; before editing a declaration, ask who uses it:
`find_symbol` (where `NAME` is declared), `find_references` (every use: path, line, the
declaration it is in, the kind of use, and the definition it resolves to, or `candidates: N`
when the text cannot tell which), `call_graph` (what calls it, what it calls). Each returns
a page that fits `max_tokens`; pass its `next_cursor` as `cursor` for the rest. From a shell:

```sh
{shlex.join(symbol_cli)} NAME --json
{shlex.join(symbol_cli)} --impact PATH:FIRST-LAST --json
```

## Tools

{chr(10).join(sections)}"""
