"""Command-line interface: `python -m tripkit_py.cli <command> ...`."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from tripkit_py import __version__
from tripkit_py.geo import route_length_km
from tripkit_py.models import Trip, TripValidationError
from tripkit_py.storage import TripRepository
from tripkit_py.sync import sync

DEFAULT_DB = Path(os.environ.get("TRIPKIT_DB", "~/.tripkit/trips.db")).expanduser()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tripkit", description="Plan and sync trips.")
    parser.add_argument("--db", type=Path, default=DEFAULT_DB, help="database file (default: %(default)s)")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    add = commands.add_parser("add", help="add a trip")
    add.add_argument("name")
    add.add_argument("--destination", default="")
    add.add_argument("--start", type=date.fromisoformat, required=True, help="YYYY-MM-DD")
    add.add_argument("--end", type=date.fromisoformat, required=True, help="YYYY-MM-DD")

    ls = commands.add_parser("list", help="list trips")
    ls.add_argument("--upcoming", action="store_true", help="only trips that haven't started")
    ls.add_argument("--search", metavar="TEXT")
    ls.add_argument("--json", action="store_true", help="print the app's JSON format")

    commands.add_parser("stats", help="show totals")

    imp = commands.add_parser("import", help="import a TripJournal JSON export")
    imp.add_argument("file", type=Path)

    sy = commands.add_parser("sync", help="sync with the TripJournal service")
    sy.add_argument("--token", default=os.environ.get("TRIPKIT_TOKEN"), help="API token (or $TRIPKIT_TOKEN)")
    return parser


def _print_trips(trips: list[Trip], as_json: bool) -> None:
    if as_json:
        json.dump([trip.to_json() for trip in trips], sys.stdout, indent=2)
        print()
        return
    for trip in trips:
        km = route_length_km([stop.coordinate for stop in trip.ordered_stops])
        print(f"{trip.start_date}  {trip.name:<30} {trip.destination:<24} {trip.nights:>3} nights  {km:>7.1f} km")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.db.parent.mkdir(parents=True, exist_ok=True)

    with TripRepository.open(args.db) as repo:
        match args.command:
            case "add":
                try:
                    trip = Trip(args.name, args.destination, args.start, args.end)
                except TripValidationError as exc:
                    print(f"error: {exc}", file=sys.stderr)
                    return 2
                repo.save(trip)
                print(f"added {trip.id}")
            case "list":
                if args.search:
                    trips = repo.search(args.search)
                elif args.upcoming:
                    trips = repo.upcoming()
                else:
                    trips = repo.all()
                _print_trips(trips, args.json)
            case "stats":
                for key, value in repo.stats().items():
                    print(f"{key:>14}: {value}")
            case "import":
                print(f"imported {repo.import_json(args.file)} trips")
            case "sync":
                if not args.token:
                    print("error: no token; pass --token or set TRIPKIT_TOKEN", file=sys.stderr)
                    return 2
                report = asyncio.run(sync(repo, args.token))
                print(f"uploaded {report.uploaded}, downloaded {report.downloaded}")
                for trip_id, reason in report.failures.items():
                    print(f"  failed {trip_id}: {reason}", file=sys.stderr)
                return 0 if report.ok else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
