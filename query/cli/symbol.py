"""`python -m query symbol NAME [--index I] [--kind K] [--json]` and
`python -m query symbol --impact PATH[:FIRST-LAST]`: code navigation over the references the
ingest recorded (query.navigation). Exit 0 with results, 1 with none, 2 on bad usage."""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

from core.cli import EXIT_FAILURE, EXIT_USAGE, error_exit
from core.settings import SettingsError
from query.cli.store_commands import _settings_for_store, pick_indexes
from query.errors import UsageError

_LINES = re.compile(r"^(?P<path>.+?):(?P<first>\d+)(?:-(?P<last>\d+))?$")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m query symbol",
        description="Where a symbol is defined, where it is used, what calls it and what it "
        "calls; or, with --impact, what uses the declarations in some lines of a file.",
    )
    p.add_argument("name", nargs="?", help="the symbol (an ObjC selector as `greet:times:`)")
    p.add_argument("--impact", metavar="PATH[:FIRST-LAST]", help="a file, or lines of it")
    p.add_argument("--index", action="append", help="an index to read (repeatable; default all)")
    p.add_argument("--kind", action="append", default=[], help="definitions of this kind only")
    p.add_argument("--store", metavar="DIR|tidb://...", help="default: RAG_INDEX_DIR or TiDB")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    return p


def parse_impact(text: str) -> tuple[str, tuple[int, int] | None]:
    """`path`, `path:12` or `path:12-40` as the path and its line range."""
    found = _LINES.match(text)
    if found is None:
        return text, None
    first = int(found["first"])
    last = int(found["last"] or first)
    if last < first:
        raise UsageError(f"--impact {text}: the range ends before it starts")
    return found["path"], (first, last)


def symbol_main(argv: list[str]) -> int:
    from core.store.contract import SchemaOutdated, StoreError
    from core.store.modes import ONE_SHOT
    from query.navigation.lookup import find_symbol, impact
    from query.retrieval.engine import Engine

    args = _parser().parse_args(argv)
    try:
        if bool(args.name) == bool(args.impact):
            raise UsageError("give a symbol NAME or --impact PATH[:LINES], not both")
        settings = _settings_for_store(args.store)
        # The engine's handles (read-only; each index opened once for all its lookups).
        engine = Engine.open(settings, args.store, modes=ONE_SHOT)
        try:
            indexes = pick_indexes(engine.index_names(), args.index)
            if args.impact:
                result = impact(engine.checkout, *parse_impact(args.impact), indexes)
                found = bool(result["declarations"])
            else:
                result = find_symbol(engine.checkout, args.name, indexes, args.kind)
                found = bool(result["definitions"] or result["references"])
        finally:
            engine.close()
    except (UsageError, SettingsError, SchemaOutdated) as exc:
        return error_exit(exc, EXIT_USAGE)
    except StoreError as exc:
        return error_exit(exc, EXIT_FAILURE)
    print(json.dumps(result, ensure_ascii=False) if args.json else render(result))
    return 0 if found else 1


def render(result: dict[str, Any]) -> str:
    """The readable listing: one line per definition, reference and call edge."""
    if "declarations" in result:
        lines = [f"impact of {result['path']}: {len(result['declarations'])} declaration(s)"]
        for d in result["containing"]:  # around the lines, not changed by them
            lines.append(f"inside {d['kind']} {d['name']} (lines {d['lines'][0]}-{d['lines'][1]})")
        for d in result["declarations"]:
            lines.append(f"\n{d['kind']} {d['name']} (lines {d['lines'][0]}-{d['lines'][1]})")
            lines += [f"  {_use_line(u)}" for u in d["references"]] or ["  no uses found"]
        return "\n".join(lines)
    lines = [f"definitions of {result['symbol']}: {len(result['definitions'])}"]
    for d in result["definitions"]:
        where = f"{d['path']}:{d['lines'][0]}-{d['lines'][1]}"
        owner = f" in {d['container']}" if d["container"] else ""
        lines.append(f"  {where} {d['kind']}{owner}: {d['signature']}")
    lines.append(f"references: {len(result['references'])}")
    lines += [f"  {_use_line(u)}" for u in result["references"]]
    lines.append(f"callers: {len(result['callers'])}")
    lines += [f"  {c['caller'] or '(top level)'} ({c['path']})" for c in result["callers"]]
    lines.append(f"callees: {len(result['callees'])}")
    lines += [
        f"  {c['callee']} at {c['path']}:{c['line']} ({_target(c)})" for c in result["callees"]
    ]
    return "\n".join(lines)


def _use_line(use: dict[str, Any]) -> str:
    receiver = f" on {use['receiver']}" if use.get("receiver") else ""
    inside = use["enclosing"] or "(top level)"
    return f"{use['path']}:{use['line']} {use['use']}{receiver} in {inside} -> {_target(use)}"


def _target(item: dict[str, Any]) -> str:
    if "resolved" in item:
        return str(item["resolved"])
    if "names" in item:
        return f"names a {item['names']}"
    return f"candidates: {item['candidates']}"
