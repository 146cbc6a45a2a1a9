"""`python -m query calibrate [--index I] [--store S] [--reset] [--json]`: decide each index's
fusion rule from its own chunks (query/calibration) and record it in the index, where
queries with the default `--fusion auto` read it. Ingest runs it by itself when an index
is new or has changed by a quarter; this command is for running it at will, or `--reset`
to return an index to the default rule. Exit 0 done, 1 store or model failure, 2 bad usage."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from core.cli import EXIT_FAILURE, EXIT_USAGE, error_exit
from core.settings import SettingsError
from query.cli.store_commands import _settings_for_store, pick_indexes
from query.errors import UsageError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m query calibrate",
        description="Choose each index's fusion rule (adaptive or RRF) from pairs mined from "
        "its own chunks, and record it in the index.",
    )
    p.add_argument("--index", action="append", help="an index (repeatable; default all)")
    p.add_argument("--store", metavar="DIR|tidb://...", help="default: RAG_INDEX_DIR or TiDB")
    p.add_argument("--reset", action="store_true", help="forget the calibration: default rule")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    return p


def calibrate_main(argv: list[str]) -> int:
    from core.embedding.runtimes import load_embedder
    from core.store.contract import StoreError
    from core.store.modes import LONG_LIVED
    from core.store.open import open_store
    from query.calibration.calibrate import CalibrationError, calibrate_index

    args = _parser().parse_args(argv)
    results: dict[str, Any] = {}
    try:
        settings = _settings_for_store(args.store)
        # Hundreds of searches per index: searched as a worker searches.
        store = open_store(args.store, settings, modes=LONG_LIVED)
        indexes = pick_indexes(store.list_indexes(), args.index)
        embedder = None if args.reset else load_embedder(settings)
        for name in indexes:
            index = store.open_index(name, write=True)  # it records the calibration
            try:
                if args.reset:
                    index.record_fusion_calibration(None)
                    results[name] = {"rule": "adaptive", "reason": "reset: the default rule"}
                    continue
                found = calibrate_index(
                    index,
                    embedder,
                    depth=settings.candidates_per_signal,
                    rrf_k=settings.rrf_k,
                    log=lambda line: print(line, file=sys.stderr),
                    cache_file=settings.embedding_cache_file,
                )
                results[name] = json.loads(found.to_json())
            finally:
                index.close()
    except (UsageError, SettingsError) as exc:
        return error_exit(exc, EXIT_USAGE)
    except (StoreError, CalibrationError) as exc:
        return error_exit(exc, EXIT_FAILURE)
    if args.json:
        print(json.dumps({"indexes": results}, ensure_ascii=False))
    else:
        for name, found in results.items():
            print(f"{name}: fusion {found['rule']} ({found['reason']})")
    return 0
