"""tripkit_py: trip planning helpers that share a data format with the TripJournal iOS app.

The package stores trips in SQLite, computes distances between stops, and syncs with the
TripJournal export endpoint. Import the pieces you need::

    from tripkit_py import Trip, Stop, TripRepository, haversine_km
"""

from tripkit_py.geo import bounding_box, haversine_km, route_length_km
from tripkit_py.models import Category, Stop, Trip, TripValidationError
from tripkit_py.storage import TripRepository

__all__ = [
    "Category",
    "Stop",
    "Trip",
    "TripRepository",
    "TripValidationError",
    "bounding_box",
    "haversine_km",
    "route_length_km",
]

__version__ = "0.4.1"
