"""One writer per index at a time, across every process that talks to the Prefect API.

Each index has a Prefect global concurrency limit `index-write:<name>` of one slot; a run
holds the slot while it reads the index's state and writes to it, so two runs on the same
index queue up while runs on different indexes proceed side by side.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime

from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate
from prefect.concurrency.sync import concurrency
from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

LIMIT_PREFIX = "index-write:"
# Leases are renewed in the background; an expired one (a crashed run) frees the slot.
LEASE_SECONDS = 120.0


@dataclass
class SlotTimes:
    """When a run waited for and held its index's slot, for the run's artifact."""

    index: str
    limit_name: str
    requested: datetime
    acquired: datetime | None = None
    released: datetime | None = None
    waited_s: float = 0.0

    def rows(self) -> list[tuple[str, str]]:
        def stamp(moment: datetime | None) -> str:
            return moment.isoformat(timespec="milliseconds") if moment else "—"

        return [
            ("index slot", f"`{self.limit_name}`"),
            ("slot requested (UTC)", stamp(self.requested)),
            ("waited for slot (s)", f"{self.waited_s:.3f}"),
            ("slot acquired (UTC)", stamp(self.acquired)),
            ("slot released (UTC)", stamp(self.released)),
        ]


def limit_name(index: str) -> str:
    return f"{LIMIT_PREFIX}{index}"


def ensure_index_limit(index: str) -> None:
    """Create the index's one-slot limit if it does not exist yet.

    An existing limit is left as the operator set it (raised, or deactivated to let runs
    overlap on purpose)."""
    name = limit_name(index)
    with get_client(sync_client=True) as client:
        try:
            client.read_global_concurrency_limit_by_name(name)
            return
        except ObjectNotFound:
            pass
        # Another run may create it between our read and create; theirs is as good.
        with suppress(ObjectAlreadyExists):
            client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name=name, limit=1))


@contextmanager
def index_slot(index: str) -> Iterator[SlotTimes]:
    """Hold the index's write slot for the duration of the block."""
    ensure_index_limit(index)
    times = SlotTimes(index, limit_name(index), requested=datetime.now(UTC))
    started = time.perf_counter()
    # strict: a missing limit must stop the run, never let it write unserialised.
    with concurrency(times.limit_name, occupy=1, strict=True, lease_duration=LEASE_SECONDS):
        times.acquired = datetime.now(UTC)
        times.waited_s = round(time.perf_counter() - started, 3)
        try:
            yield times
        finally:
            times.released = datetime.now(UTC)
