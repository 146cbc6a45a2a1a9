"""Asynchronous sync with the TripJournal export service.

The protocol is deliberately simple: upload trips changed locally, then download
everything changed on the server since the last sync, keeping the newer copy of each trip
(by `last_modified`), the same rule the iOS app's `CloudSyncService` uses.
"""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.request
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tripkit_py.models import Trip
from tripkit_py.storage import TripRepository

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "https://api.example.com/tripjournal/v1"
MAX_CONCURRENT_UPLOADS = 4


class SyncError(RuntimeError):
    """The server rejected a request or returned something unexpected."""


@dataclass
class SyncReport:
    uploaded: int = 0
    downloaded: int = 0
    skipped_older: int = 0
    failures: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures


async def _request(method: str, url: str, token: str, body: Any | None = None) -> Any:
    """One JSON request, run in a worker thread so the event loop stays responsive."""

    def send() -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Authorization", f"Bearer {token}")
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=20) as response:  # noqa: S310 (https only)
            if response.status >= 300:
                raise SyncError(f"{method} {url}: HTTP {response.status}")
            payload = response.read()
            return json.loads(payload) if payload else None

    return await asyncio.to_thread(send)


async def upload_trip(endpoint: str, token: str, trip: Trip) -> bytes:
    """Uploads one trip; returns the opaque version tag that the server assigned."""
    result = await _request("PUT", f"{endpoint}/trips/{trip.id}", token, trip.to_json())
    return str(result.get("version", "")).encode()


async def upload_pending(
    repo: TripRepository, endpoint: str, token: str, report: SyncReport
) -> None:
    """Uploads every trip flagged for sync, at most `MAX_CONCURRENT_UPLOADS` at a time."""
    # TODO: propagate local deletions too (needs tombstone rows in the trips table).
    pending = repo.pending_sync()
    if not pending:
        return
    semaphore = asyncio.Semaphore(MAX_CONCURRENT_UPLOADS)
    versions: dict[str, bytes] = {}

    async def upload(trip: Trip) -> None:
        async with semaphore:
            try:
                versions[trip.id] = await upload_trip(endpoint, token, trip)
            except (OSError, SyncError) as exc:
                report.failures[trip.id] = str(exc)

    async with asyncio.TaskGroup() as group:
        for trip in pending:
            group.create_task(upload(trip))

    report.uploaded = repo.mark_synced(versions)


async def changed_since(endpoint: str, token: str, since: datetime | None) -> AsyncIterator[Trip]:
    """Yields trips changed on the server since `since`, following pagination."""
    cursor: str | None = None
    while True:
        query = f"since={since.isoformat()}" if since else "since=0"
        if cursor:
            query += f"&cursor={cursor}"
        page = await _request("GET", f"{endpoint}/trips?{query}", token)
        for item in page.get("trips", []):
            yield Trip.from_json(item)
        cursor = page.get("next")
        if not cursor:
            return


async def download_changes(
    repo: TripRepository, endpoint: str, token: str, since: datetime | None, report: SyncReport
) -> None:
    async for remote in changed_since(endpoint, token, since):
        local = repo.get(remote.id)
        if local is not None and local.last_modified > remote.last_modified:
            report.skipped_older += 1  # the local edit wins and is uploaded next time
            continue
        repo.save(remote, mark_for_sync=False)
        report.downloaded += 1


async def sync(
    repo: TripRepository,
    token: str,
    *,
    endpoint: str = DEFAULT_ENDPOINT,
    since: datetime | None = None,
    timeout: float = 120.0,
) -> SyncReport:
    """Runs one full sync pass: upload first, then download. Raises TimeoutError."""
    report = SyncReport()
    async with asyncio.timeout(timeout):
        await upload_pending(repo, endpoint, token, report)
        await download_changes(repo, endpoint, token, since, report)
    log.info(
        "sync finished at %s: %d up, %d down, %d failures",
        datetime.now(UTC).isoformat(timespec="seconds"),
        report.uploaded,
        report.downloaded,
        len(report.failures),
    )
    return report


async def sync_many(repos: Sequence[TripRepository], token: str) -> list[SyncReport]:
    """Syncs several databases concurrently (e.g. one per family member)."""
    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(sync(repo, token)) for repo in repos]
    return [task.result() for task in tasks]
