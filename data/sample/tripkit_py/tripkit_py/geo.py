"""Great-circle distances and bounding boxes for stops."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from functools import lru_cache

EARTH_RADIUS_KM = 6371.0088  # mean Earth radius (IUGG)

Coordinate = tuple[float, float]


def haversine_km(a: Coordinate, b: Coordinate) -> float:
    """Great-circle distance between two (latitude, longitude) points, in kilometres.

    >>> round(haversine_km((38.7223, -9.1393), (41.1579, -8.6291)), 1)  # Lisbon -> Porto
    274.3
    """
    lat1, lon1 = map(math.radians, a)
    lat2, lon2 = map(math.radians, b)
    dlat = lat2 - lat1
    dlon = lon2 - lon1
    h = math.sin(dlat / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin(dlon / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def route_length_km(points: Sequence[Coordinate]) -> float:
    """Total length of a path through `points`, in order."""
    return sum(haversine_km(p, q) for p, q in zip(points, points[1:], strict=False))


def bounding_box(points: Iterable[Coordinate], padding_km: float = 0.0) -> tuple[Coordinate, Coordinate]:
    """South-west and north-east corners enclosing `points`, padded by `padding_km`.

    Raises ValueError for an empty input. Doesn't handle boxes crossing the antimeridian.
    """
    pts = list(points)
    if not pts:
        raise ValueError("bounding_box() needs at least one point")
    lats = [p[0] for p in pts]
    lons = [p[1] for p in pts]
    dlat = padding_km / 110.574
    mid_lat = math.radians((min(lats) + max(lats)) / 2)
    dlon = padding_km / (111.320 * max(math.cos(mid_lat), 1e-6))
    south_west = (max(min(lats) - dlat, -90.0), max(min(lons) - dlon, -180.0))
    north_east = (min(max(lats) + dlat, 90.0), min(max(lons) + dlon, 180.0))
    return south_west, north_east


@lru_cache(maxsize=4096)
def _cached_distance(a: Coordinate, b: Coordinate) -> float:
    return haversine_km(a, b)


def nearest_neighbour_order(points: Sequence[Coordinate], start: int = 0) -> list[int]:
    """A quick, greedy visiting order (indices into `points`), starting at `start`.

    Good enough to suggest an order for a day's stops; not an optimal TSP solution.
    """
    if not points:
        return []
    remaining = set(range(len(points)))
    order = [start]
    remaining.remove(start)
    while remaining:
        here = points[order[-1]]
        nxt = min(remaining, key=lambda i: _cached_distance(here, points[i]))
        order.append(nxt)
        remaining.remove(nxt)
    return order
