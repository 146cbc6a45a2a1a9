"""Every shell command of the README and of the pages of docs/ runs as printed, or is listed
below with why it cannot.

The commands are the lines of the ```sh, ```bash and ```console blocks of README.md and
docs/*.md (continued lines joined, comments dropped). Each one runs from the repository's
root, as a reader runs it after `make run` (a page of docs/ the same way as the README), but
with every data path of the settings (RAG_DATA_DIR, RAG_INDEX_DIR, RAG_STAGING_DIR) in a
temporary directory whose index was ingested from data/sample/guides: nothing is written into
the checkout. A synopsis (a line with `[--option]`s) cannot run as printed; its program's
--help runs instead and must know each option it shows. A command in neither SKIPPED nor a
synopsis is run, so a new command on any of those pages is tested unless it is listed.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.settings import ENV_VARS, Settings
from tests.support.paths import ROOT

# Each command is a process of its own (a minute and more in all): the full suite runs them,
# the inner loop (make test-fast) does not.
pytestmark = pytest.mark.slow

README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
VENV_PYTHON = ".venv/bin/python"
TIMEOUT_S = 120
SHELL_FENCES = ("sh", "bash", "console")

CLAUDE = "registers with Claude Code, which is not installed here"
INSTALLED = (
    "the command as `pipx install` puts it on PATH, run in the reader's own project; in this "
    "checkout it is .venv/bin/rag-retrieve, whose commands run"
)
SKIPPED: dict[str, str] = {
    f"{VENV_PYTHON} -m query.eval ../shared/data/scifact --split train --modes "
    "bm25,vector,hybrid --fusion rrf --store DIR --json": "an evaluation of SciFact's 5,183 "
    "abstracts: minutes of embedding (the query.eval tests run it on a small set)",
    f"{VENV_PYTHON} -m query.eval ../shared/data/scifact --split train --modes hybrid "
    "--fusion adaptive --store DIR --json": "an evaluation of SciFact, over the store of the "
    "run above",
    f"{VENV_PYTHON} -m query.eval ../shared/data/scifact --split train --modes hybrid "
    "--store DIR --json": "an evaluation of SciFact, over the store of the run above",
    "rag-retrieve embed --index docs --executor dask --workers 4": "the installed command "
    "with the dask extra on a user's index (tests/flows/test_embed_dask.py runs the dask "
    "executor on a LocalCluster)",
    "dask scheduler": "a Dask scheduler that serves until stopped",
    "EMBEDDING_ENDPOINT_TOKEN=… rag-retrieve embed --index docs --executor endpoints "
    "--endpoints http://gpu-mac-1.local:8766,http://gpu-mac-2.local:8766": "the endpoints "
    "executor on servers of other machines (tests/flows/test_embed_endpoints.py runs it on "
    "two local servers)",
    "rag-retrieve embeddings-server --host 0.0.0.0 --port 8766 --token-file "
    "~/.config/rag-retrieve/embeddings-token": "an embeddings server for other machines, "
    "until stopped (tests/query/test_embeddings_server.py starts the command on loopback)",
    "dask worker tcp://scheduler-host:8786 --nworkers 4 --nthreads 1": "a Dask worker of a "
    "scheduler on another machine, until stopped",
    "rag-retrieve embed --index docs --executor dask --dask-address tcp://scheduler-host:8786": "the dask executor on a cluster of other machines",
    "pipx install /path/to/rag-retrieve": "installs the command as a tool, with its "
    "dependencies from the registries (tests/test_installed_command.py does the same with pip "
    "into a fresh virtual environment)",
    "uv tool install /path/to/rag-retrieve": "installs the command as a tool "
    "(tests/test_installed_command.py runs it on a copy of the clone)",
    'pipx install "/path/to/rag-retrieve[torch]" --pip-args="--extra-index-url '
    'https://download.pytorch.org/whl/cpu"': "the torch extra, from PyTorch's CPU index",
    "make install": "the set-up these tests run in",
    ".venv/bin/python -m pip install --index-url https://download.pytorch.org/whl/cpu "
    "torch==2.13.0": "torch's CPU build from PyTorch's index, which is not reachable here",
    "cd ~/src/MyApp && rag-retrieve ingest . --index myapp": INSTALLED,
    'rag-retrieve "how is X done" --index myapp': INSTALLED,
    "rag-retrieve mcp --print-config mcp-json": INSTALLED,
    "make run": "the set-up these tests run in: builds .venv, ingests into the clone's data/",
    "make test": "runs this test suite",
    f"{VENV_PYTHON} -m chunkers data/sample --summary": "chunks all of data/sample with the "
    "model's topic segmentation of transcripts: about 50 s; the apple_docs.jsonl line runs",
    f"{VENV_PYTHON} -m query serve --port 8765": "a server, until stopped "
    "(tests/query/test_query_worker.py serves one)",
    f"{VENV_PYTHON} -m query mcp --http --store data/indexes": "a server, until stopped "
    "(tests/query/test_mcp_server.py serves one over HTTP)",
    "claude mcp add --transport http rag-retrieve http://127.0.0.1:8765/mcp": CLAUDE,
    f"{VENV_PYTHON} -m query.eval ../shared/data/scifact --split train --modes "
    "bm25,vector,hybrid --json": "embeds SciFact's 5,183 documents (minutes), from outside "
    "the repository; the tiny set's eval runs",
    f"{VENV_PYTHON} -m flows.serve": "serves the Prefect deployments until stopped",
    f"{VENV_PYTHON} bench/react-native-eval/corpus.py --out /tmp/rn": "fetches React Native's "
    "package from the npm registry (`npm pack`) and writes outside the repository",
    f"{VENV_PYTHON} bench/vision-camera-eval/corpus.py --out /tmp/vc": "fetches "
    "react-native-vision-camera from the npm registry (`npm pack`) and writes outside the "
    "repository",
    f"{VENV_PYTHON} bench/fusion_lists.py score SET.json ...": "scores the lists the record "
    "line above keeps from a built index (tests/bench/test_fusion_lists.py covers scoring)",
    f"{VENV_PYTHON} bench/werkzeug-eval/corpus.py --out /tmp/wz": "fetches Werkzeug's sdist "
    "from PyPI (`pip download`) and writes outside the repository",
    f"{VENV_PYTHON} -m query mcp --store data/indexes --index myapp --watch ~/src/MyApp": "a "
    "server that follows the reader's own codebase, until stopped "
    "(tests/query/test_mcp_watch.py serves one)",
    f"{VENV_PYTHON} -m flows.ingest data/sample/apple_docs.jsonl --index docs --store "
    "'tidb://user@host:4000/rag'": "needs a TiDB cluster",
    f"{VENV_PYTHON} -m query \"NavigationStack\" --store 'tidb://user@host:4000/rag'": "needs "
    "a TiDB cluster",
    "export TIDB_HOST=host TIDB_PORT=4000 TIDB_USER=user TIDB_PASSWORD=pw "
    "TIDB_DATABASE=rag": "points the shell at a TiDB cluster",
    f"source .ci/mariadb.sh && start_private_mariadb && {VENV_PYTHON} -m pytest -q "
    "tests/core/test_tidb_*.py": "starts a private MariaDB server (.ci/run does, in CI)",
    ".venv/bin/prefect server start --host 127.0.0.1 --port 4200": "a Prefect server, "
    "until stopped",
    f"PREFECT_API_URL=http://127.0.0.1:4200/api {VENV_PYTHON} -m flows.serve": "needs the "
    "Prefect server above, and serves until stopped",
    "PREFECT_API_URL=http://127.0.0.1:4200/api .venv/bin/prefect deployment run "
    'backfill/backfill --params \'{"request": {"paths": ["data/sample/guides"], "index": '
    '"default"}}\' --watch': "needs the Prefect server and flows.serve above",
}
# The generated `claude mcp add` lines change with the generator; their text is
# tests/query/test_agent_config.py's to check.
SKIPPED_PREFIXES: dict[str, str] = {
    "claude mcp add --scope user rag-retrieve ": CLAUDE,
    "claude mcp add --transport http rag-retrieve ": CLAUDE,
}


@dataclass(frozen=True)
class Command:
    text: str
    line: int
    page: str = "README.md"

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def synopsis(self) -> bool:
        return "[--" in self.text


def shell_commands(text: str, page: str = "README.md") -> list[Command]:
    """The commands of the shell blocks, in order: continued lines joined, comments and
    blank lines dropped; in a console block only the `$ ` lines."""
    commands: list[Command] = []
    fence: str | None = None
    pending, start = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fence = None if fence is not None else line[3:].strip()
            continue
        if fence not in SHELL_FENCES:
            continue
        if fence == "console" and not pending:
            if not line.startswith("$ "):
                continue
            line = line[2:]
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        command = _without_comment(pending + line.strip()).strip()
        pending = ""
        if command:
            commands.append(Command(re.sub(r"\s+", " ", command), start, page))
    return commands


def _without_comment(line: str) -> str:
    """`line` up to a `#` that starts a shell comment (after a blank, outside quotes)."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def skip_reason(command: Command) -> str | None:
    if command.text in SKIPPED:
        return SKIPPED[command.text]
    return next((r for p, r in SKIPPED_PREFIXES.items() if command.text.startswith(p)), None)


COMMANDS = [
    command
    for page in PAGES
    for command in shell_commands(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)))
]
RUN = [c for c in COMMANDS if not c.synopsis and skip_reason(c) is None]
SYNOPSES = [c for c in COMMANDS if c.synopsis and skip_reason(c) is None]


@pytest.fixture(scope="module")
def sample_env(tmp_path_factory) -> dict[str, str]:
    """The environment of a reader after `make run`, its data paths in a temporary directory
    holding an index of data/sample/guides."""
    from loaders.ingest import ingest
    from loaders.target import IngestTarget

    assert (ROOT / VENV_PYTHON).is_file(), f"the README's commands run {VENV_PYTHON}: make install"
    tmp = tmp_path_factory.mktemp("readme")
    paths = {"data_dir": tmp / "data", "index_dir": tmp / "indexes", "staging_dir": tmp / "staging"}
    summary = ingest([str(ROOT / "data/sample/guides")], Settings(**paths), IngestTarget())
    assert summary.chunks_written and not summary.rejects
    # Nothing of the caller's configuration (endpoints, TiDB, a worker URL) leaks in.
    ours = set(ENV_VARS.values())
    env = {k: v for k, v in os.environ.items() if k not in ours}
    env.update({ENV_VARS[name]: str(path) for name, path in paths.items()})
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return env


def run(command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


@pytest.mark.parametrize("command", RUN, ids=[f"{c.page}: {c.text[:70]}" for c in RUN])
def test_the_command_runs_as_printed(command, sample_env):
    done = run(command.text, sample_env)
    assert done.returncode == 0, (
        f"{command.where}: `{command.text}` exited {done.returncode}:\n"
        f"{done.stderr[-2000:]}\n(if it cannot run offline in seconds, list it in SKIPPED "
        f"in {Path(__file__).name} with the reason)"
    )


@pytest.mark.parametrize("command", SYNOPSES, ids=[f"{c.page}: {c.text[:70]}" for c in SYNOPSES])
def test_a_synopsis_shows_only_options_its_program_has(command, sample_env):
    words = shlex.split(command.text.replace("...", ""))
    program = words[:3]
    if len(words) > 3 and re.fullmatch(r"[a-z]+", words[3]):
        program.append(words[3])  # a subcommand: query serve, query mcp, ...
    done = run(shlex.join([*program, "--help"]), sample_env)
    assert done.returncode == 0, done.stderr
    shown = set(re.findall(r"--[a-z][a-z-]*", command.text))
    unknown = sorted(o for o in shown if o not in done.stdout)
    assert not unknown, f"{command.where}: {shlex.join(program)} has no {unknown}"


def test_every_skipped_command_is_still_on_a_page():
    texts = {c.text for c in COMMANDS}
    gone = sorted(set(SKIPPED) - texts)
    assert not gone, f"SKIPPED lists commands neither the README nor docs/ has: {gone}"
    for prefix in SKIPPED_PREFIXES:
        assert any(t.startswith(prefix) for t in texts), f"no command starts {prefix!r}"


def test_every_python_command_uses_the_virtualenv_interpreter():
    bare = [
        c.where + f": {c.text}" for c in COMMANDS if re.search(r"(^|[\s;&|])python3? -m ", c.text)
    ]
    assert not bare, f"write {VENV_PYTHON}, which works after `make run` in any shell: {bare}"


def test_commands_are_read_from_every_shell_block_with_continuations_and_comments():
    text = (
        "```sh\nmake run   # a comment\n.venv/bin/python -m query \\\n    status\n```\n"
        '```json\n{"not": "a command"}\n```\n'
        "```console\n$ .venv/bin/python -m query doctor\nOK   query model\n```\n"
    )
    assert [c.text for c in shell_commands(text)] == [
        "make run",
        ".venv/bin/python -m query status",
        ".venv/bin/python -m query doctor",
    ]


def test_the_pages_of_docs_are_read_and_each_command_names_its_page():
    pages = {c.page for c in COMMANDS}
    assert "README.md" in pages and any(p.startswith("docs/") for p in pages)
    [command] = shell_commands("text\n\n```sh\nmake run\n```\n", "docs/page.md")
    assert command.where == "docs/page.md:4"
