"""Chunking throughput (MB/s) per language, next to the bare parse of the same bytes.

    python bench/chunking.py [--mb-per-language 20] [--mb-per-table-language 2] [--json]

Generates a corpus of at least 50 MB in total from varied templates (so files differ in
names, sizes and nesting), then measures, in the same run and on the same bytes:
- the bare parse (tree-sitter for Swift, `ast.parse` for Python, a line scan for markdown),
- the full chunker (parse + split + token counting with the model's tokenizer),
- the full chunker again without reference extraction (`ChunkConfig.references=False`),
  alternated with the full chunker over `--rounds` rounds on the same files, in CPU time
  (`time.process_time`, steadier than wall time on a shared box): what extraction adds,
and prints MB/s for each and their ratio. The languages of the node table
(chunkers/code/grammar_table.py) are measured on their file of the polyglot fixture
repository (repeated to files of about 14 KB, each made distinct by a leading comment),
against tree-sitter's bare parse of the same bytes.
"""

from __future__ import annotations

import argparse
import ast
import json
import keyword
import platform
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chunkers.code.grammar_syntax import chunk_code, syntax_for  # noqa: E402
from chunkers.code.python import chunk_python  # noqa: E402
from chunkers.code.swift import chunk_swift  # noqa: E402
from chunkers.config import ChunkConfig  # noqa: E402
from chunkers.prose.markdown import chunk_markdown  # noqa: E402
from core.embedding.model_files import model_dir  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.tokens import counter_for_model  # noqa: E402

WORDS = [
    "view",
    "model",
    "store",
    "query",
    "record",
    "sync",
    "cloud",
    "container",
    "async",
    "task",
    "actor",
    "stream",
    "value",
    "state",
    "binding",
    "navigation",
    "path",
    "stack",
    "list",
    "item",
    "detail",
    "error",
    "result",
    "cache",
    "token",
]


RESERVED = set(keyword.kwlist) | {"actor", "async", "await", "func", "struct", "class", "enum"}


def ident(rng: random.Random, upper: bool = False) -> str:
    parts = [rng.choice(WORDS) for _ in range(rng.randint(1, 3))]
    name = parts[0] + "".join(p.title() for p in parts[1:])
    if name in RESERVED:  # "async" alone is a keyword in both languages
        name += "Value"
    return name[0].upper() + name[1:] if upper else name


def swift_file(rng: random.Random) -> str:
    out = ["import SwiftUI", "import SwiftData", ""]
    for _ in range(rng.randint(3, 12)):
        kind = rng.choice(["struct", "class", "enum", "extension", "actor", "func", "protocol"])
        name = ident(rng, upper=True)
        out.append(f"/// {' '.join(rng.choices(WORDS, k=rng.randint(5, 15)))}.")
        if rng.random() < 0.3:
            out.append(f"@available(iOS {rng.randint(13, 26)}.0, *)")
        if kind == "func":
            out.append(f"func {ident(rng)}(_ value: Int) -> Int {{")
            out.extend(f"    let v{i} = value * {i}" for i in range(rng.randint(2, 20)))
            out.append("    return value\n}\n")
            continue
        if kind == "protocol":
            out.append(f"protocol {name} {{")
            out.extend(f"    func {ident(rng)}() async throws" for _ in range(rng.randint(1, 6)))
            out.append("}\n")
            continue
        header = {"enum": f"enum {name}: String", "extension": f"extension {name}"}.get(
            kind, f"{kind} {name}"
        )
        out.append(header + " {")
        if kind == "enum":
            out.extend(f"    case {ident(rng)}{i}" for i in range(rng.randint(2, 10)))
        for _ in range(rng.randint(1, 25)):
            out.append(f"    var {ident(rng)}: Int = {rng.randint(0, 99)}")
            out.append(f"    func {ident(rng)}(_ x: Int) -> Int {{")
            out.extend(f"        let y{i} = x + {i}" for i in range(rng.randint(1, 8)))
            out.append("        return x\n    }")
        out.append("}\n")
    return "\n".join(out)


def python_file(rng: random.Random) -> str:
    out = ['"""' + " ".join(rng.choices(WORDS, k=12)) + '."""', "import os", "import json", ""]
    for _ in range(rng.randint(3, 12)):
        if rng.random() < 0.4:
            out.append(f"class {ident(rng, upper=True)}:")
            out.append(f'    """{" ".join(rng.choices(WORDS, k=8))}."""')
            for _ in range(rng.randint(1, 20)):
                out.append(f"    def {ident(rng)}(self, value: int) -> int:")
                out.extend(f"        v{i} = value * {i}" for i in range(rng.randint(1, 8)))
                out.append("        return value\n")
        else:
            out.append("@staticmethod" if rng.random() < 0.1 else "")
            out.append(f"def {ident(rng)}(value: int) -> int:")
            out.extend(f"    v{i} = value + {i}" for i in range(rng.randint(2, 20)))
            out.append("    return value\n")
    return "\n".join(out)


def markdown_file(rng: random.Random) -> str:
    out = [f"# {ident(rng, upper=True)}", ""]
    for _ in range(rng.randint(2, 8)):
        out.append(f"## {' '.join(rng.choices(WORDS, k=3)).title()}\n")
        for _ in range(rng.randint(1, 6)):
            sentences = [
                " ".join(rng.choices(WORDS, k=rng.randint(6, 20))).capitalize() + "."
                for _ in range(rng.randint(2, 8))
            ]
            out.append(" ".join(sentences) + "\n")
        if rng.random() < 0.4:
            out.append("```swift\nlet value = " + str(rng.randint(0, 9)) + "\n```\n")
    return "\n".join(out)


def generate(make, target_bytes: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    files, size = [], 0
    while size < target_bytes:
        text = make(rng)
        files.append(text)
        size += len(text.encode())
    return files


def swift_parse(texts: list[str]) -> None:
    import tree_sitter_swift
    from tree_sitter import Language, Parser

    parser = Parser(Language(tree_sitter_swift.language()))
    for text in texts:
        parser.parse(text.encode())


def python_parse(texts: list[str]) -> None:
    for text in texts:
        ast.parse(text)


def markdown_scan(texts: list[str]) -> None:
    for text in texts:
        for line in text.splitlines():
            line.startswith("#")


POLYGLOT = json.loads(
    (Path(__file__).resolve().parents[1] / "tests/fixtures/polyglot/expected.json").read_text()
)
_LINE_COMMENT = {"ruby": "#", "bash": "#"}
FILE_BYTES = 14_000


def table_cases(cfg: ChunkConfig, target: int) -> dict[str, tuple]:
    """Per table language: copies of its fixture file up to `target` bytes, the bare parse,
    and the chunker."""
    root = Path(__file__).resolve().parents[1] / "tests/fixtures/polyglot/repo"
    cases = {}
    for relative, entry in POLYGLOT.items():
        language = entry["language"]
        text = (root / relative).read_text(encoding="utf-8")
        marker = _LINE_COMMENT.get(language, "//")
        # Files of about the generated Swift files' size (14 KB): the fixture file repeated.
        repeats = max(1, FILE_BYTES // len(text.encode()))
        copies, size = [], 0
        while size < target:
            copy = f"{marker} copy {len(copies)}\n" + "\n".join([text] * repeats)
            copies.append(copy)
            size += len(copy.encode())
        syntax = syntax_for(language)

        def parse(ts: list[str], syntax=syntax) -> None:
            for t in ts:
                syntax.parse(t.encode())

        def chunk(ts: list[str], cfg: ChunkConfig, language=language) -> None:
            for t in ts:
                chunk_code(t, cfg, language)

        cases[f"{language} ({Path(relative).name})"] = (copies, parse, chunk)
    return cases


def timed(fn, texts: list[str]) -> float:
    started = time.perf_counter()
    fn(texts)
    return time.perf_counter() - started


def extraction_cost(chunk, texts: list[str], cfg: ChunkConfig, rounds: int) -> dict:
    """CPU seconds of the chunker without and with reference extraction, alternated round
    by round on the same files (after one file of each, so each language's query is compiled
    before timing: that is once per process), and what extraction adds in percent."""
    # Fresh configs alike: each has its own cache of token counts.
    configs = (("without", replace(cfg, references=False)), ("with", replace(cfg)))
    for _, config in configs:
        chunk(texts[:1], config)
    seconds = {"without": 0.0, "with": 0.0}
    for _ in range(rounds):
        for label, config in configs:
            started = time.process_time()
            chunk(texts, config)
            seconds[label] += time.process_time() - started
    return {
        "cpu_s_without_refs": round(seconds["without"], 2),
        "cpu_s_with_refs": round(seconds["with"], 2),
        "refs_add_pct": round(100 * (seconds["with"] / seconds["without"] - 1), 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb-per-language", type=float, default=20.0)
    parser.add_argument("--mb-per-table-language", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=2, help="alternations with/without refs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cfg = ChunkConfig(counter=counter_for_model(str(model_dir(Settings.from_env()))))
    target = int(args.mb_per_language * 1_000_000)
    cases = {
        "swift": (swift_file, swift_parse, lambda ts, c: [chunk_swift(t, c) for t in ts]),
        "python": (python_file, python_parse, lambda ts, c: [chunk_python(t, c) for t in ts]),
        "markdown": (
            markdown_file,
            markdown_scan,
            lambda ts, c: [chunk_markdown(t, c) for t in ts],
        ),
    }
    results = {}
    table = table_cases(cfg, int(args.mb_per_table_language * 1_000_000))
    runs = {
        **{k: (generate(make, target, seed), parse, chunk) for seed, (k, (make, parse, chunk))
           in enumerate(cases.items())},
        **table,
    }  # fmt: skip
    for language, (texts, parse, chunk) in runs.items():
        megabytes = sum(len(t.encode()) for t in texts) / 1_000_000
        parse_s = timed(parse, texts)
        chunk_s = timed(lambda ts, chunk=chunk: chunk(ts, cfg), texts)
        results[language] = {
            "files": len(texts),
            "mb": round(megabytes, 1),
            "parse_mb_s": round(megabytes / parse_s, 2),
            "chunk_mb_s": round(megabytes / chunk_s, 2),
            "chunk_vs_parse": round(chunk_s / parse_s, 1),
        }
        if language != "markdown":  # prose has no references
            results[language].update(extraction_cost(chunk, texts, cfg, args.rounds))
        print(f"{language}: {results[language]}", file=sys.stderr)
    timed_langs = [r for r in results.values() if "refs_add_pct" in r]
    without = sum(r["cpu_s_without_refs"] for r in timed_langs)
    with_refs = sum(r["cpu_s_with_refs"] for r in timed_langs)
    report = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()} {platform.system()}, {platform.processor() or ''}".strip(
            ", "
        ),
        "total_mb": round(sum(r["mb"] for r in results.values()), 1),
        "refs_add_pct_total": round(100 * (with_refs / without - 1), 1) if without else None,
        "languages": results,
    }
    if args.json:
        print(json.dumps(report))
    else:
        print(
            "| language | MB | files | bare parse MB/s | chunking MB/s | chunk time / parse "
            "| references add |"
        )
        print("|---|---|---|---|---|---|---|")
        for language, r in results.items():
            added = f"{r['refs_add_pct']} %" if "refs_add_pct" in r else "—"
            print(
                f"| {language} | {r['mb']} | {r['files']} | {r['parse_mb_s']} | "
                f"{r['chunk_mb_s']} | {r['chunk_vs_parse']}x | {added} |"
            )
        print(f"references add {report['refs_add_pct_total']} % in total (CPU time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
