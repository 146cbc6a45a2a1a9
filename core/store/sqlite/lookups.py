"""What an embedded index answers about documents and code without searching: titles,
declarations, references, imports and calls (core.store.contract.IndexStore), each one read
of the index's tables."""

from __future__ import annotations

import json
from typing import Any

from core.store.contract import REFERENCE_COLUMNS, Declaration, PageLinkRow
from core.store.sqlite.index_search import IndexSearch
from core.store.sqlite.schema import q


class Lookups(IndexSearch):
    """The lookups of SQLiteIndex (core/store/sqlite/index.py)."""

    def document_titles(self) -> list[tuple[str, str]]:
        _, rows = self._read_all(q("document_titles"))
        return [(str(title), str(chunk_id)) for title, chunk_id in rows]

    def chunk_symbols(self) -> list[Declaration]:
        _, rows = self._read_all(q("chunk_symbols"))
        return [Declaration(str(s), str(k or ""), str(d), str(c)) for s, k, d, c in rows]

    def document_links(self) -> list[PageLinkRow]:
        _, rows = self._read_all(q("document_links"))
        return [PageLinkRow(*(str(v or "") for v in row)) for row in rows]

    def shard_states(self, shard_ids: list[str]) -> dict[str, str]:
        """The vector phase's ledger (migration 0014) of these shards."""
        _, rows = self._read_all(q("shard_states"), {"shard_ids": json.dumps(list(shard_ids))})
        return {str(shard_id): str(state) for shard_id, state in rows}

    def sample_chunk_ids(self, limit: int) -> list[str]:
        _, rows = self._read_all(q("sample_chunk_ids"), {"limit": int(limit)})
        return [str(chunk_id) for (chunk_id,) in rows]

    def references_named(self, names: list[str]) -> list[dict[str, Any]]:
        if not names:
            return []
        _, rows = self._read_all(q("references_named"), {"names": json.dumps(list(names))})
        return [dict(zip(REFERENCE_COLUMNS, row, strict=True)) for row in rows]

    def references_in(self, path: str) -> list[dict[str, Any]]:
        _, rows = self._read_all(q("references_in_path"), {"path": path})
        return [dict(zip(REFERENCE_COLUMNS, row, strict=True)) for row in rows]

    def imports_of(self, doc_ids: list[str]) -> dict[str, list[str]]:
        if not doc_ids:
            return {}
        _, rows = self._read_all(q("imports_of_docs"), {"doc_ids": json.dumps(list(doc_ids))})
        out: dict[str, list[str]] = {}
        for doc_id, name in rows:
            out.setdefault(doc_id, []).append(name)
        return out

    def calls_in(self, scopes: list[tuple[str, str]]) -> list[dict[str, Any]]:
        if not scopes:
            return []
        wanted = json.dumps([list(pair) for pair in dict.fromkeys(scopes)])
        _, rows = self._read_all(q("calls_in_scopes"), {"scopes": wanted})
        return [dict(zip(REFERENCE_COLUMNS, row, strict=True)) for row in rows]

    def definitions_named(self, names: list[str]) -> list[dict[str, Any]]:
        if not names:
            return []
        _, rows = self._read_all(q("definitions_named"), {"names": json.dumps(list(names))})
        return [dict(zip(REFERENCE_COLUMNS, row, strict=True)) for row in rows]
