"""References on a real codebase nobody here wrote, against a whole-word text search.

    python bench/navigation.py [--work DIR] [--names A,B,...] [--json]

Fetches React Native's iOS sources from the npm registry, pinned by version and checked
against the registry's sha512 (`npm pack react-native@0.76.5`: React/ and Libraries/ hold
600+ Objective-C and Objective-C++ files, .m, .mm and .h), reads them as a directory ingest
does (chunkers.sources: discovery, header language detection) and chunks each file with the
ingest's chunker (chunkers.pipeline.chunk_document), whose references are the rows the ingest
writes and `python -m query symbol NAME` lists (every row named NAME; the store keeps them
as given: tests/support/store_contract_references.py). No embedding: the vectors play no
part in this.

For each of 20 declarations (`NAMES`: classes, protocols, methods, functions and
properties, each declared in the corpus), the lines where the references put the name (its
definitions and uses) are compared with the lines where a whole-word search finds it in code:
comments, string literals, `#import <...>` paths and `#pragma mark` lines blanked first by a
small lexer of its own (not tree-sitter, so the two sides are read independently). Recall is
the share of the text search's lines the references have; precision, the share of the
references' lines the text search has. Also, on the same files, what extraction adds to
chunking (CPU time, with and without `ChunkConfig.references`, alternated `--rounds` times).
A selector's entry (`moduleForClass:`) stands for
every selector its first keyword starts (`enqueueJSCall:args:` and
`enqueueJSCall:method:args:completion:`): a text search cannot tell them apart. Targets (issue 28): recall >= 0.95, precision >= 0.90.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# Last, so that bench's own scripts (query.py, keyword_search.py) shadow no package or module.
sys.path.append(str(Path(__file__).resolve().parent))

from registry import npm_fetch  # noqa: E402  (bench/registry.py, beside this file)

from chunkers.config import ChunkConfig  # noqa: E402
from chunkers.pipeline import chunk_document  # noqa: E402
from chunkers.sources.discovery import discover  # noqa: E402
from chunkers.sources.reading import Defaults, read_all  # noqa: E402
from core.embedding.model_files import model_dir  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.tokens import counter_for_model  # noqa: E402

PACKAGE = "react-native"
VERSION = "0.76.5"
# The registry's `dist.integrity` of that version (`npm view react-native@0.76.5 dist`).
INTEGRITY = "sha512-op2p2kB+lqMF1D7AdX4+wvaR0OPFbvWYs+VBE7bwsb99Cn9xISrLRLAgFflZedQsa5HvnOGrULhtnmItbIKVVw=="
SOURCE_DIRS = ("React", "Libraries")
OBJC_SUFFIXES = frozenset({".m", ".mm", ".h", ".swift"})
MIN_FILES = 200
NAMES = (
    "RCTBridge",
    "RCTBridgeModule",
    "RCTEventDispatcher",
    "RCTRootView",
    "RCTImageLoader",
    "RCTConvert",
    "RCTInvalidating",
    "RCTModuleData",
    "RCTUIManager",
    "RCTShadowView",
    "RCTSharedApplication",
    "RCTKeyWindow",
    "RCTPresentedViewController",
    "RCTScreenScale",
    "RCTJSONStringify",
    "invalidate",
    "methodQueue",
    "moduleForClass:",
    "enqueueJSCall:",
    "reactTag",
)


def fetch(
    work: Path, package: str = PACKAGE, version: str = VERSION, integrity: str = INTEGRITY
) -> Path:
    """An npm package's files under `work`/package, from the registry's tarball once its
    sha512 matches the pin (React Native's unless another package is named; the question
    sets' corpus.py use it too)."""
    return npm_fetch(work, package, version, integrity)


# Blanked before the text search: comments, string and character literals (with ObjC's
# @"..."), the <path> of #import/#include, and #pragma mark lines.
_NOT_CODE = re.compile(
    r"""//[^\n]*
      | /\*.*?\*/
      | @?"(?:\\.|[^"\\\n])*"
      | '(?:\\.|[^'\\\n])*'
      | ^[ \t]*\#[ \t]*(?:import|include)[ \t]*<[^>\n]*>
      | ^[ \t]*\#[ \t]*pragma[ \t]+mark[^\n]*
    """,
    re.S | re.M | re.X,
)


def code_only(text: str) -> str:
    """`text` with what is not code blanked, lines kept where they were."""
    return _NOT_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def text_lines(texts: dict[str, str], name: str) -> set[tuple[str, int]]:
    """(path, line) of every whole-word occurrence of `name` in code."""
    word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    found = set()
    for path, code in texts.items():
        for number, line in enumerate(code.split("\n"), 1):
            if word.search(line):
                found.add((path, number))
    return found


def extraction_cost(documents: list, cfg: ChunkConfig, rounds: int) -> dict:
    """CPU seconds chunking `documents` without and with references, alternated."""
    configs = (("without", replace(cfg, references=False)), ("with", replace(cfg)))
    seconds = {"without": 0.0, "with": 0.0}
    for _ in range(rounds):
        for label, config in configs:
            started = time.process_time()
            for doc in documents:
                chunk_document(doc, config)
            seconds[label] += time.process_time() - started
    return {
        "cpu_s_without_refs": round(seconds["without"], 2),
        "cpu_s_with_refs": round(seconds["with"], 2),
        "refs_add_pct": round(100 * (seconds["with"] / seconds["without"] - 1), 1),
    }


def _key(name: str) -> str:
    """What the text search looks for: a name, or a selector's first keyword."""
    return name.split(":", 1)[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--work", type=Path, help="where the package goes (default: a temp dir)")
    parser.add_argument("--names", help="comma-separated declarations (default: the 20 NAMES)")
    parser.add_argument("--rounds", type=int, default=2, help="alternations with/without refs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="rag-navigation-"))
    work.mkdir(parents=True, exist_ok=True)
    names = tuple(args.names.split(",")) if args.names else NAMES
    root = fetch(work)

    started = time.perf_counter()
    sources = discover([str(root / d) for d in SOURCE_DIRS])
    sources = [s for s in sources if s.path.suffix in OBJC_SUFFIXES]
    if len(sources) < MIN_FILES:
        raise SystemExit(f"only {len(sources)} Swift/Objective-C files (want {MIN_FILES}+)")
    documents = read_all(sources, Defaults(source="user_codebase", domain="ios")).documents
    cfg = ChunkConfig(counter=counter_for_model(str(model_dir(Settings.from_env()))))
    lines: dict[str, set[tuple[str, int]]] = defaultdict(set)  # name -> (path, line)
    texts: dict[str, str] = {}
    keys = {name: _key(name) for name in names}  # the whole name, or a selector's keyword
    defined: set[str] = set()
    languages: dict[str, int] = defaultdict(int)
    for doc in documents:
        path = doc.path or doc.doc_id
        texts[path] = code_only(doc.text)
        languages[doc.language or "?"] += 1
        for chunk in chunk_document(doc, cfg).chunks:
            for ref in chunk.references:
                for name, key in keys.items():
                    if ref.name == name or (key != name and ref.name.startswith(name)):
                        lines[name].add((path, ref.line))
                        if ref.role == "definition":
                            defined.add(name)
    chunk_s = time.perf_counter() - started

    cost = extraction_cost(documents, cfg, args.rounds)
    per_name = {}
    hits = found = both = 0
    for name in names:
        expected = text_lines(texts, keys[name])
        ours = lines[name]
        common = expected & ours
        per_name[name] = {
            "declared": name in defined,
            "text_lines": len(expected),
            "reference_lines": len(ours),
            "recall": round(len(common) / len(expected), 3) if expected else None,
            "precision": round(len(common) / len(ours), 3) if ours else None,
            "missed": sorted(f"{p}:{n}" for p, n in expected - ours)[:5],
            "extra": sorted(f"{p}:{n}" for p, n in ours - expected)[:5],
        }
        hits, found, both = hits + len(expected), found + len(ours), both + len(common)
    report = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()} {platform.system()}",
        "package": f"{PACKAGE}@{VERSION}",
        "files": len(documents),
        "languages": dict(languages),
        "chunk_s": round(chunk_s, 1),
        **cost,
        "recall": round(both / hits, 3) if hits else None,
        "precision": round(both / found, 3) if found else None,
        "names": per_name,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{report['package']}: {report['files']} files {report['languages']}")
        print("| declaration | declared | text lines | reference lines | recall | precision |")
        print("|---|---|---|---|---|---|")
        for name, r in per_name.items():
            print(
                f"| {name} | {r['declared']} | {r['text_lines']} | {r['reference_lines']} "
                f"| {r['recall']} | {r['precision']} |"
            )
        print(f"overall: recall {report['recall']}, precision {report['precision']}")
        print(
            f"chunking {cost['cpu_s_without_refs']} s CPU without references, "
            f"{cost['cpu_s_with_refs']} s with: +{cost['refs_add_pct']} %"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
