"""Data classes for trips and stops, mirroring the app's `TripSnapshot` JSON format."""

from __future__ import annotations

import enum
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime
from typing import Any


class TripValidationError(ValueError):
    """A trip or stop whose values are inconsistent."""


class Category(enum.StrEnum):
    """The kind of trip. Business trips carry a company name in `Trip.company`."""

    LEISURE = "leisure"
    BUSINESS = "business"
    FAMILY = "family"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Stop:
    """A place visited during a trip."""

    name: str
    latitude: float
    longitude: float
    arrival: datetime

    def __post_init__(self) -> None:
        if not -90.0 <= self.latitude <= 90.0:
            raise TripValidationError(f"latitude out of range: {self.latitude}")
        if not -180.0 <= self.longitude <= 180.0:
            raise TripValidationError(f"longitude out of range: {self.longitude}")

    @property
    def coordinate(self) -> tuple[float, float]:
        return (self.latitude, self.longitude)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "latitude": self.latitude,
            "longitude": self.longitude,
            "arrival": self.arrival.isoformat(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Stop:
        return cls(
            name=data["name"],
            latitude=float(data["latitude"]),
            longitude=float(data["longitude"]),
            arrival=_parse_datetime(data["arrival"]),
        )


@dataclass(slots=True)
class Trip:
    """A trip with dates and an ordered list of stops.

    `last_modified` decides conflicts during sync: the newer copy wins.
    """

    name: str
    destination: str
    start_date: date
    end_date: date
    category: Category = Category.LEISURE
    company: str | None = None
    stops: list[Stop] = field(default_factory=list)
    id: str = field(default_factory=lambda: str(uuid.uuid4()).upper())
    last_modified: datetime = field(default_factory=lambda: datetime.now(UTC))

    def __post_init__(self) -> None:
        if self.end_date < self.start_date:
            raise TripValidationError(
                f"trip {self.name!r} ends ({self.end_date}) before it starts ({self.start_date})"
            )
        if self.category is Category.BUSINESS and not self.company:
            raise TripValidationError("business trips need a company")

    @property
    def nights(self) -> int:
        return (self.end_date - self.start_date).days

    @property
    def ordered_stops(self) -> list[Stop]:
        return sorted(self.stops, key=lambda stop: stop.arrival)

    def touch(self) -> None:
        """Marks the trip as modified now."""
        self.last_modified = datetime.now(UTC)

    def overlaps(self, other: Trip) -> bool:
        return self.start_date <= other.end_date and other.start_date <= self.end_date

    def to_json(self) -> dict[str, Any]:
        """The app's `TripSnapshot` encoding (ISO-8601 dates, camelCase keys)."""
        data = asdict(self)
        return {
            "id": data["id"],
            "name": self.name,
            "destination": self.destination,
            "startDate": self.start_date.isoformat(),
            "endDate": self.end_date.isoformat(),
            "category": _encode_category(self.category, self.company),
            "stops": [stop.to_json() for stop in self.stops],
            "lastModified": self.last_modified.isoformat(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Trip:
        category, company = _decode_category(data.get("category"))
        return cls(
            id=data["id"],
            name=data["name"],
            destination=data.get("destination", ""),
            start_date=_parse_datetime(data["startDate"]).date(),
            end_date=_parse_datetime(data["endDate"]).date(),
            category=category,
            company=company,
            stops=[Stop.from_json(s) for s in data.get("stops", [])],
            last_modified=_parse_datetime(data.get("lastModified", "1970-01-01T00:00:00+00:00")),
        )


def _parse_datetime(value: str) -> datetime:
    """Parses ISO-8601, accepting a trailing 'Z' and date-only strings."""
    if len(value) == 10:
        return datetime.fromisoformat(value).replace(tzinfo=UTC)
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _encode_category(category: Category, company: str | None) -> dict[str, Any]:
    # Swift encodes enums with associated values as {"case": {"label": value}}.
    if category is Category.BUSINESS:
        return {"business": {"company": company}}
    return {category.value: {}}


def _decode_category(raw: Any) -> tuple[Category, str | None]:
    if not isinstance(raw, dict) or not raw:
        return Category.LEISURE, None
    (key, payload), *_ = raw.items()
    try:
        category = Category(key)
    except ValueError:
        return Category.OTHER, None
    company = payload.get("company") if isinstance(payload, dict) else None
    return category, company
