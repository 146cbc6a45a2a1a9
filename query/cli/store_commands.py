"""`python -m query status` (what the store's indexes hold), `python -m query doctor` (what
works, each line OK or the fix) and `rag-retrieve migrate` (bring the indexes up to date with
this version, which commands that only read never do)."""

from __future__ import annotations

import argparse
import json
import sys

from core.cli import EXIT_FAILURE, EXIT_USAGE, error_exit
from core.settings import Settings, SettingsError
from query.errors import UsageError, store_location


def _store_command(name: str, description: str) -> argparse.ArgumentParser:
    """The parser of a subcommand that reads one store: --store and --json."""
    p = argparse.ArgumentParser(prog=f"python -m query {name}", description=description)
    p.add_argument("--store", metavar="DIR|tidb://...", help="default: RAG_INDEX_DIR or TiDB")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    return p


def _settings_for_store(store: str | None) -> Settings:
    """The settings, after checking that a --store directory exists (a usage error)."""
    settings = Settings.from_env()
    directory = store_location(store).directory if store else None
    if directory is not None and not directory.is_dir():
        raise UsageError(f"no store directory {store}")
    return settings


def pick_indexes(known: list[str], wanted: list[str] | None) -> list[str]:
    """The indexes named with --index (all of `known` without one); a usage error names any
    the store does not have."""
    if not wanted:
        return known
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise UsageError(f"no index {', '.join(unknown)} (the store has {', '.join(known)})")
    return wanted


def status_main(argv: list[str]) -> int:
    from core.store.contract import StoreError
    from query.cli.status import render_status
    from query.retrieval.status import damaged, outdated, store_status

    args = _store_command("status", "What the store's indexes hold.").parse_args(argv)
    try:
        settings = _settings_for_store(args.store)
        status = store_status(settings, args.store)
    except (UsageError, SettingsError) as exc:
        return error_exit(exc, EXIT_USAGE)
    except StoreError as exc:
        return error_exit(exc, EXIT_FAILURE)
    print(
        json.dumps(status, ensure_ascii=False, default=str) if args.json else render_status(status)
    )
    bad = damaged(status)
    if bad:
        print(
            f"error: damaged index(es): {', '.join(bad)}; move the file aside and ingest again "
            "to rebuild",
            file=sys.stderr,
        )
        return 1
    older = outdated(status)
    if older:
        print(
            f"error: index(es) older than this version: {', '.join(older)}; run `rag-retrieve "
            "migrate` (or ingest into them) to upgrade them",
            file=sys.stderr,
        )
        return EXIT_USAGE
    return 0


def doctor_main(argv: list[str]) -> int:
    from query.cli.doctor import as_json, configured, diagnose, failed, render

    args = _store_command(
        "doctor",
        "What works (model, indexes, worker, endpoints, Prefect API), each line OK or the "
        "fix; exit 1 when a check fails.",
    ).parse_args(argv)
    try:
        settings = _settings_for_store(args.store)
    except (UsageError, SettingsError) as exc:
        return error_exit(exc, EXIT_USAGE)
    checks, values = diagnose(settings, args.store), configured(settings)
    print(json.dumps(as_json(checks, values)) if args.json else render(checks, values))
    return EXIT_FAILURE if failed(checks) else 0


def migrate_main(argv: list[str]) -> int:
    """Open each index to write, which applies what this version needs (schema migrations, a
    full-text re-index after an analyzer change, the text fingerprints), and say what changed."""
    from core.store.contract import SchemaOutdated, StoreError
    from core.store.open import open_store

    p = _store_command(
        "migrate",
        "Upgrade the store's indexes to this version (an ingest does it too; commands that "
        "only read never change an index).",
    )
    p.prog = "rag-retrieve migrate"
    p.add_argument("--index", action="append", metavar="NAME", help="this index only (repeatable)")
    args = p.parse_args(argv)
    done: dict[str, dict[str, object]] = {}
    try:
        settings = _settings_for_store(args.store)
        store = open_store(args.store, settings)
        for name in pick_indexes(store.list_indexes(), args.index):
            try:
                index, migrated = store.open_index(name), False
            except SchemaOutdated:  # only a handle opened to write migrates
                index, migrated = store.open_index(name, write=True), True
            try:
                done[name] = {"migrated": migrated, "schema_version": index.schema_version}
            finally:
                index.close()
    except (UsageError, SettingsError) as exc:
        return error_exit(exc, EXIT_USAGE)
    except StoreError as exc:
        return error_exit(exc, EXIT_FAILURE)
    if args.json:
        print(json.dumps({"indexes": done}))
    elif not done:
        print("the store holds no index")
    for name, result in done.items():
        if not args.json:
            state = "migrated to" if result["migrated"] else "up to date at"
            print(f"{name}: {state} schema version {result['schema_version']}")
    return 0 if done else EXIT_FAILURE
