"""A TiDB location without the tidb extra is an error that names the extra."""

from __future__ import annotations

import sys

import pytest

from core.settings import Settings
from core.store.contract import StoreError
from core.store.open import TIDB_EXTRA, open_store


def test_a_tidb_location_without_polars_names_the_tidb_extra(monkeypatch):
    for name in [m for m in sys.modules if m == "polars" or m.startswith("core.store.tidb.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "polars", None)  # as if the extra were not installed
    with pytest.raises(StoreError, match=r"tidb extra") as caught:
        open_store("tidb://rag:pw@127.0.0.1:4000/rag", Settings())
    assert TIDB_EXTRA in str(caught.value)
