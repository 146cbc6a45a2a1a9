"""What registers the MCP server with an agent host (`python -m query mcp --print-config`) is
made from the tools the server registers and the CLI's parser, and the copies the repository
shows (README blocks, skills/rag-retrieve/SKILL.md) are that output for a placeholder clone."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
import yaml

from query.cli.agent_config import (
    CONFIG_KINDS,
    Launch,
    claude_command,
    cli_flags,
    registered_tools,
    render_config,
)
from query.cli.agent_docs import REGENERATE, expected_texts
from query.cli.main import main as query_cli
from query.cli.question_args import build_parser, request_fields
from query.mcp.server import RETRIEVE_ARGS
from tests.support.paths import ROOT

PLACEHOLDER = Launch.in_checkout("/path/to/rag-retrieve")
# A value for each retrieve argument, as the skill's flag would be given it.
FLAG_VALUES = {
    "domain": "ios",
    "ios_version": "17.0",
    "frameworks": "SwiftData",
    "top_k": "3",
    "indexes": "docs",
    "max_tokens": "500",
}


def front_matter(skill: str) -> dict:
    _, header, _ = skill.split("---\n", 2)
    return yaml.safe_load(header)


@pytest.mark.parametrize("path", sorted(expected_texts(ROOT)), ids=lambda p: p.name)
def test_the_checked_in_copy_is_the_generated_text(path):
    expected = expected_texts(ROOT)[path]
    actual = path.read_text(encoding="utf-8") if path.is_file() else ""
    assert actual == expected, (
        f"{path.relative_to(ROOT)} differs from what the generator makes of the server's "
        f"tools: regenerate with `{REGENERATE}`"
    )


def test_the_skill_inputs_and_outputs_are_the_retrieve_tools_schema():
    retrieve = {t.name: t for t in registered_tools(PLACEHOLDER)}["retrieve"]
    skill = front_matter(render_config("openclaw", PLACEHOLDER))
    assert [next(iter(i)) for i in skill["inputs"]] == list(retrieve.input_schema["properties"])
    assert [next(iter(o)) for o in skill["outputs"]] == list(retrieve.output_schema["properties"])
    assert skill["inputs"][0]["query"].startswith("string, required.")
    assert "TIDB_HOST" in skill["metadata"]["openclaw"]["env_vars"]


def test_each_skill_flag_sets_its_argument_on_the_command_line():
    argv = ["a question"]
    for argument, flag in cli_flags().items():
        options = flag.split("`")[1:2]
        if not options:
            continue  # the question itself, the first argument
        option = options[0].split()[0]
        argv += [option, FLAG_VALUES[argument]] if argument in FLAG_VALUES else [option]
    fields = request_fields(build_parser().parse_args(argv))
    assert all(fields[field] is not None for field in RETRIEVE_ARGS.values())
    assert fields["corag"] is True and fields["user_codebase"] is False


def test_ingest_is_in_the_skill_only_with_allow_ingest():
    with_ingest = Launch.in_checkout("/x", ingest_roots=("/x/src", "/x/docs"))
    assert "### `ingest`" in render_config("openclaw", with_ingest)
    assert "### `ingest`" not in render_config("openclaw", PLACEHOLDER)
    assert with_ingest.args[-3:] == ["--allow-ingest", "/x/src", "/x/docs"]


def test_the_claude_command_names_the_server_before_its_environment():
    launch = Launch.in_checkout("/my clone", env={"OPENCLAW_LLM_ENDPOINT": "http://llm:8080"})
    words = shlex.split(claude_command(launch))
    # Claude Code's -e takes several values: a name after it would be read as one.
    assert words[: words.index("-e")] == ["claude", "mcp", "add", "--scope", "user", "rag-retrieve"]
    assert words[words.index("-e") + 1] == "OPENCLAW_LLM_ENDPOINT=http://llm:8080"
    assert words[words.index("--") + 1 :] == ["/my clone/.venv/bin/rag-retrieve", *launch.args]


def test_print_config_names_the_installed_command_the_resolved_store_and_the_exported_settings(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "indexes").mkdir()
    monkeypatch.setenv("OPENCLAW_LLM_ENDPOINT", "http://llm:8080")
    argv = ["mcp", "--store", "indexes", "--index", "docs", "--print-config", "mcp-json"]
    assert query_cli(argv) == 0
    server = json.loads(capsys.readouterr().out)["mcpServers"]["rag-retrieve"]
    assert server["command"] == str(Path(sys.executable).parent / "rag-retrieve")
    store = str(tmp_path.resolve() / "indexes")
    assert server["args"] == ["mcp", "--store", store, "--index", "docs"]
    assert server["env"]["OPENCLAW_LLM_ENDPOINT"] == "http://llm:8080"


def test_without_the_installed_command_the_config_runs_python_without_the_working_directory(
    tmp_path, monkeypatch, capsys
):
    """`-P`: a host starts the server in the user's project, whose `core/` or `query/`
    must not be imported in place of ours."""
    interpreter = tmp_path / "bin" / "python"
    interpreter.parent.mkdir()
    interpreter.symlink_to(sys.executable)
    monkeypatch.setattr(sys, "executable", str(interpreter))
    monkeypatch.setenv("RAG_INDEX_DIR", str(tmp_path))
    assert query_cli(["mcp", "--print-config", "mcp-json"]) == 0
    server = json.loads(capsys.readouterr().out)["mcpServers"]["rag-retrieve"]
    assert [server["command"], *server["args"][:4]] == [
        str(interpreter),
        "-P",
        "-m",
        "query",
        "mcp",
    ]


def test_every_kind_prints_and_http_is_a_usage_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAG_INDEX_DIR", str(tmp_path))
    for kind in CONFIG_KINDS:
        assert query_cli(["mcp", "--print-config", kind]) == 0
        assert str(tmp_path.resolve()) in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        query_cli(["mcp", "--print-config", "claude", "--http"])
    assert exit_.value.code == 2
    assert "--print-config describes the stdio server" in capsys.readouterr().err


def test_print_config_passes_the_token_and_the_ingest_roots_on(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "indexes").mkdir()
    (tmp_path / "app").mkdir()
    monkeypatch.setenv("RAG_AUTH_TOKEN", "host-token")
    argv = ["mcp", "--store", "indexes", "--allow-ingest", "app", "--print-config", "mcp-json"]
    assert query_cli(argv) == 0
    server = json.loads(capsys.readouterr().out)["mcpServers"]["rag-retrieve"]
    assert server["env"]["RAG_AUTH_TOKEN"] == "host-token"
    assert server["args"][-2:] == ["--allow-ingest", str(tmp_path.resolve() / "app")]
