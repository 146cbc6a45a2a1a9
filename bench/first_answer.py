"""First answer: how soon a fresh corpus answers a keyword question, against earlier code.

    .venv/bin/python bench/first_answer.py [--corpora scifact,swift] [--paths two,one]
                                           [--prefect warm] [--vectors now] [--repeat 1]
                                           [--limit 0] [--out FILE] [--json]
    .venv/bin/python bench/first_answer.py --corpora guides,sample,wwdc20 \
        --paths two,before --prefect fresh,warm --vectors later --interval 0.1

Issue 37's and issue 49's acceptance benchmark. Each run ingests one corpus into a FRESH
temporary data dir, store and embedding cache (a cache shared between runs would make the
second run free) with the real CLI, `python -P -m flows.ingest CORPUS --index fa --json
[--vectors later]`, in a child process, and is timed from just before that process starts:

- `two`: the code of this tree;
- `one`: the code as it was before the two-phase change (`--one-phase-commit`, c119238);
- `before`: the code as it was before issue 49's changes (`--before-commit`, 7e2cd13:
  Prefect's temporary server started before the flow, the model loaded for `--vectors
  later` too, calibration re-embedding its pairs).
  Earlier code is checked out into a temporary git worktree and put first on the child's
  PYTHONPATH. `-P` keeps the current directory off sys.path; the venv's editable install
  of the main checkout comes after PYTHONPATH, and each run checks which tree it imports.

Prefect's home (`--prefect`): `warm`, one shared by the runs and warmed up first by one tiny
ingest (Prefect creates and migrates its database on first use); `fresh`, an empty one per
run, as on a machine that never ran Prefect.

While the ingest runs, a poller (`--poll`, a child process of its own so that it reads
the store with the same tree's code as the writer: the old schema is not the new code's,
and readers do not migrate) opens the index read-only every `--interval` seconds and
prints what it sees: whether a fixed keyword question (`bm25_search`, top 10) has hits,
and `stats()`'s chunks and vectors. From those lines: the first keyword answer, the times
chunks and vectors first reach 50 % and 100 % of the final chunk count, and the wall time
of the ingest process. Runs alternate (path by path within a corpus and Prefect home,
corpus by corpus, `--repeat` rounds); the results file is rewritten after every run, so an
interrupted round keeps what finished. Progress goes to stderr.

The questions, one per corpus, are asked of whatever the index holds so far; each is
answered by many documents, so its first hit measures when the index first answers, not
when one particular document arrives:
- swift: "async await concurrency" (the book's Concurrency chapter and a dozen Swift
  Evolution proposals: SE-0296 async/await, SE-0306 actors, SE-0304 structured concurrency);
- scifact: "cancer cells" (hundreds of the 5,183 abstracts are about tumour cell biology);
- guides: "migration" (the three Markdown guides of data/sample/guides);
- sample: "SwiftData" (the whole data/sample: guides, JSONL corpora, a Swift package and a
  Python package);
- wwdc20: "SwiftUI" (the first 20 WWDC19 WebVTT transcripts, by file name, with their
  sessions.json sidecar).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.first_answer_corpora import CORPORA, QUESTIONS, prepare  # noqa: E402

INDEX = "fa"
TREES = ("two", "one", "before")
PREFECT_HOMES = ("warm", "fresh")
ONE_PHASE_COMMIT = "c119238"
BEFORE_COMMIT = "7e2cd13"
STOP_FILE = "stop"
SUMMARY_FIELDS = (
    "kind",
    "seconds",
    "docs_seen",
    "chunks_written",
    "chunks_embedded",
    "embedding_cache_hits",
    "chunks_pending",
    "vector_coverage",
    "error",
)


def log(message: str) -> None:
    print(f"[first_answer {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# -- the poller (runs in a child process, importing only the tree on its PYTHONPATH) ----------


def poll(store: Path, question: str, interval: float, stop: Path) -> None:
    """Print one JSON line per look at index INDEX in `store`, until `stop` exists; then one
    last look. Each line: monotonic time, and either what was seen or why nothing was."""
    from core.settings import Settings
    from core.store.filters import SearchFilter
    from core.store.open import open_store

    settings = Settings(index_dir=store)
    index = None
    while True:
        last = stop.exists()
        t = time.monotonic()
        line: dict[str, Any] = {"t": t}
        try:
            if index is None and (store / f"{INDEX}.sqlite").exists():
                index = open_store(store, settings).open_index(INDEX)
            if index is not None:
                stats = index.stats()
                hits = index.bm25_search(question, SearchFilter(), 10)
                line.update(chunks=stats["chunks"], vectors=stats["vectors"], hits=len(hits))
            else:
                line["missing"] = True
        except Exception as exc:  # a file mid-creation or mid-migration: look again later
            line["error"] = f"{type(exc).__name__}: {exc}"[:200]
            if index is not None:
                index.close()
            index = None
        line["poll_s"] = round(time.monotonic() - t, 4)
        print(json.dumps(line), flush=True)
        if last:
            break
        time.sleep(max(0.0, interval - (time.monotonic() - t)))
    if index is not None:
        index.close()


# -- what the poll lines say ---------------------------------------------------------------


def milestones(lines: Iterable[dict[str, Any]], t0: float) -> dict[str, Any]:
    """Seconds from t0 to the first keyword hit and to chunks / vectors reaching 50 % and
    100 % of the final chunk count (the last look's), from the poller's lines."""
    seen = [x for x in lines if "chunks" in x]
    out: dict[str, Any] = {"polls": len(seen), "first_keyword_answer_s": None}
    if not seen:
        return out
    final = seen[-1]["chunks"]
    out["final_chunks"], out["final_vectors"] = final, seen[-1]["vectors"]

    def first(test: Any) -> float | None:
        return next((round(x["t"] - t0, 2) for x in seen if test(x)), None)

    out["first_keyword_answer_s"] = first(lambda x: x["hits"] > 0)
    for share, name in ((0.5, "50"), (1.0, "100")):
        need = share * final
        out[f"chunks_{name}_s"] = first(lambda x, need=need: x["chunks"] >= need > 0)
        out[f"vectors_{name}_s"] = first(lambda x, need=need: x["vectors"] >= need > 0)
    out["max_poll_s"] = max(x["poll_s"] for x in seen)
    return out


LOG_LINE = re.compile(r"^(\d\d):(\d\d):(\d\d\.\d+) \| \w+ +\| (.*)$")
MARKS = (
    ("server starting", re.compile(r"Starting temporary server")),
    ("flow started", re.compile(r"Beginning flow run")),
    ("model loaded", re.compile(r"embedding with .* on ")),
    ("flow finished", re.compile(r"Flow run .* - Finished")),
)
TASK_DONE = re.compile(r"Task run '(.+)-[0-9a-f]+' - Finished")


def stage_marks(log_text: str, started: float) -> dict[str, float]:
    """Seconds from `started` (a UTC epoch time) to each milestone the ingest logged
    (Prefect's clock-time lines, UTC on this box): its temporary server starting, the flow
    starting, the embedding model loaded, and each stage (Prefect task) finishing."""
    day = started - started % 86400
    marks: dict[str, float] = {}
    for raw in log_text.splitlines():
        match = LOG_LINE.match(raw)
        if not match:
            continue
        hours, minutes, seconds, message = match.groups()
        at = day + int(hours) * 3600 + int(minutes) * 60 + float(seconds)
        if at < started - 3600:  # past midnight since the start
            at += 86400
        task = TASK_DONE.search(message)
        names = [f"{task.group(1)} done"] if task else []
        names += [name for name, pattern in MARKS if pattern.search(message)]
        for name in names:
            marks.setdefault(name, round(at - started, 2))
    return marks


# -- running one ingest ----------------------------------------------------------------------


def environment(tree: Path, run_dir: Path, prefect_home: Path) -> dict[str, str]:
    """Every directory under run_dir (tests/flows/test_ingest_crash.py's environment()),
    with the default batch sizes; the tree first on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "TIDB_"))}
    env.pop("PREFECT_API_URL", None)
    env.update(
        PYTHONPATH=str(tree),
        RAG_DATA_DIR=str(run_dir / "data"),
        RAG_INDEX_DIR=str(run_dir / "store"),
        RAG_STAGING_DIR=str(run_dir / "staging"),
        PREFECT_HOME=str(prefect_home),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        DO_NOT_TRACK="1",
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="120",
        RAG_PREFECT_STARTUP_TIMEOUT_S="120",
        PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW="ignore",
    )
    return env


def imported_tree(tree: Path, env: dict[str, str]) -> Path:
    """Where `python -P` with this environment imports flows and core from."""
    code = "import core, flows; print(flows.__file__); print(core.__file__)"
    out = subprocess.run(
        [sys.executable, "-P", "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    roots = {Path(p).resolve().parents[1] for p in out}
    if roots != {tree.resolve()}:
        raise SystemExit(f"the child imports {sorted(map(str, roots))}, not {tree}")
    return tree


def summary_line(stdout: str) -> dict[str, Any]:
    """The ingest's `summary` (or `error`) JSON line: the last JSON object it printed."""
    for raw in reversed(stdout.splitlines()):
        try:
            line = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(line, dict) and "kind" in line:
            return line
    return {}


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run_one(
    tree: Path,
    corpus: Path,
    question: str,
    run_dir: Path,
    prefect_home: Path,
    interval: float,
    later: bool = False,
) -> dict[str, Any]:
    """One ingest of `corpus` with `tree`'s code into run_dir, polled; its figures."""
    env = environment(tree, run_dir, prefect_home)
    imported_tree(tree, env)
    stop = run_dir / STOP_FILE
    load_start = loadavg()
    poller = subprocess.Popen(
        [sys.executable, "-P", str(Path(__file__).resolve()), "--poll", str(run_dir / "store"),
         "--question", question, "--interval", str(interval), "--stop", str(stop)],
        env=env, stdout=(run_dir / "poll.jsonl").open("w"), stderr=(run_dir / "poller.err").open("w"),
    )  # fmt: skip
    t0, started = time.monotonic(), time.time()
    proc = None
    try:
        with (run_dir / "ingest.out").open("w") as out, (run_dir / "ingest.err").open("w") as err:
            proc = subprocess.Popen(
                [sys.executable, "-P", "-m", "flows.ingest", str(corpus), "--index", INDEX,
                 "--json", *(["--vectors", "later"] if later else [])],
                env=env, cwd=run_dir, stdout=out, stderr=err,
            )  # fmt: skip
            code = proc.wait()
        total = time.monotonic() - t0
        stop.touch()
        poller.wait(timeout=120)
    finally:
        # Stopped early (SIGTERM, Ctrl-C): take the children down too; the ingest's own
        # Prefect server has a guard that stops it when the ingest goes.
        for child in (proc, poller):
            if child is not None and child.poll() is None:
                child.terminate()
                child.wait(timeout=60)
    polled = (run_dir / "poll.jsonl").read_text().splitlines()
    lines = [json.loads(raw) for raw in polled if raw.strip()]
    summary = summary_line((run_dir / "ingest.out").read_text())
    errors = [x["error"] for x in lines if "error" in x]
    result: dict[str, Any] = {
        "exit_code": code,
        "total_s": round(total, 2),
        **milestones(lines, t0),
        "stages_s": stage_marks((run_dir / "ingest.err").read_text(), started),
        "poll_errors": len(errors),
        "first_poll_error": errors[0] if errors else None,
        "loadavg_start": load_start,
        "loadavg_end": loadavg(),
        "summary": {k: summary.get(k) for k in SUMMARY_FIELDS if k in summary},
        # This tree's own account of its time (`phases`), absent from older trees.
        "phases": summary.get("phases"),
    }
    if code != 0:
        result["stderr_tail"] = (run_dir / "ingest.err").read_text()[-2000:]
    return result


# -- the run ---------------------------------------------------------------------------------


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def schedule(
    corpora: list[str], homes: list[str], paths: list[str], repeat: int
) -> Iterator[tuple[int, str, str, str]]:
    """(round, corpus, Prefect home, path): corpus by corpus, home by home, the paths
    alternating within each."""
    for round_ in range(1, repeat + 1):
        for corpus in corpora:
            for home in homes:
                for path in paths:
                    yield round_, corpus, home, path


def warm_prefect(tree: Path, work: Path, prefect_home: Path) -> float:
    """One ingest of one record with the given tree: Prefect creates its database."""
    run_dir = work / "warmup"
    run_dir.mkdir(parents=True)
    corpus = run_dir / "one.jsonl"
    corpus.write_text(json.dumps({"id": "w", "text": "Prefect warm-up."}) + "\n")
    t0 = time.monotonic()
    subprocess.run(
        [sys.executable, "-P", "-m", "flows.ingest", str(corpus), "--index", INDEX, "--json"],
        env=environment(tree, run_dir, prefect_home), cwd=run_dir, check=True,
        stdout=subprocess.DEVNULL, stderr=(run_dir / "ingest.err").open("w"),
    )  # fmt: skip
    return round(time.monotonic() - t0, 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default="scifact,swift", help="comma-separated, in order")
    parser.add_argument("--paths", default="two,one", help="two (this tree), one (before)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds")
    parser.add_argument("--limit", type=int, default=0, help="records / files per corpus (0 all)")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between polls")
    parser.add_argument("--prefect", default="warm", help="warm, fresh: Prefect's home")
    parser.add_argument("--vectors", choices=("now", "later"), default="now")
    parser.add_argument("--one-phase-commit", default=ONE_PHASE_COMMIT)
    parser.add_argument("--before-commit", default=BEFORE_COMMIT)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "first_answer.json")
    parser.add_argument("--work", type=Path, help="scratch directory (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument("--json", action="store_true", help="print the results JSON at the end")
    parser.add_argument("--poll", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--question", help=argparse.SUPPRESS)
    parser.add_argument("--stop", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    # SIGTERM unwinds like Ctrl-C: the children stop and the old code's worktree goes.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.poll:
        poll(args.poll, args.question, args.interval, args.stop)
        return 0
    corpora, paths, homes = args.corpora.split(","), args.paths.split(","), args.prefect.split(",")
    bad = [c for c in corpora if c not in CORPORA] + [p for p in paths if p not in TREES]
    bad += [h for h in homes if h not in PREFECT_HOMES]
    if bad:
        parser.error(f"unknown corpus or path: {', '.join(bad)}")
    work = args.work or Path(tempfile.mkdtemp(prefix="first-answer-"))
    work.mkdir(parents=True, exist_ok=True)
    trees = {"two": ROOT}
    commits = {"one": args.one_phase_commit, "before": args.before_commit}
    for path in paths:
        if path in commits:
            trees[path] = work / f"{path}-tree"
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(trees[path]),
                 commits[path]],
                check=True, capture_output=True,
            )  # fmt: skip
    result: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": " ".join(["python", "bench/first_answer.py", *sys.argv[1:]]),
        "machine": {
            "cpu": cpu_model(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
        },
        "questions": {c: QUESTIONS[c] for c in corpora},
        "commits": {p: commits[p] for p in paths if p in commits},
        "vectors": args.vectors,
        # The runs' environment drops every RAG_ variable: the vector phase commits pages of
        # the default size (RAG_VECTOR_PAGE_CHUNKS, 512 chunks).
        "vector_page_chunks": "default (512)",
        "limit": args.limit,
        "loadavg_start": loadavg(),
        "runs": [],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    try:
        inputs = {c: prepare(c, work / "corpora" / c, args.limit) for c in corpora}
        warm_home = work / "prefect-home"
        if "warm" in homes:
            log("warming up Prefect's database")
            result["prefect_warmup_s"] = warm_prefect(ROOT, work, warm_home)
        plan = schedule(corpora, homes, paths, args.repeat)
        for n, (round_, corpus, home, path) in enumerate(plan):
            run_dir = work / f"run{n:02d}-{corpus}-{home}-{path}"
            run_dir.mkdir()
            prefect_home = warm_home if home == "warm" else run_dir / "prefect-home"
            log(
                f"round {round_}: {corpus}, {home} Prefect, {path} ({trees[path]}); load {loadavg()}"
            )
            figures = run_one(
                trees[path], inputs[corpus], QUESTIONS[corpus], run_dir, prefect_home,
                args.interval, later=args.vectors == "later",
            )  # fmt: skip
            figures.update(round=round_, corpus=corpus, prefect=home, path=path)
            result["runs"].append(figures)
            log(
                f"{corpus} {home} {path}: first answer {figures['first_keyword_answer_s']} s, "
                f"vectors 50 % {figures.get('vectors_50_s')} s, 100 % "
                f"{figures.get('vectors_100_s')} s, total {figures['total_s']} s "
                f"(exit {figures['exit_code']})"
            )
            result["loadavg_end"] = loadavg()
            args.out.write_text(json.dumps(result, indent=2) + "\n")
            if not args.keep:
                shutil.rmtree(run_dir, ignore_errors=True)
    finally:
        for path, tree in trees.items():
            if path in commits:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                    check=False, capture_output=True,
                )  # fmt: skip
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    log(f"results in {args.out}")
    if args.json:
        print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
