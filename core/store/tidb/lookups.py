"""What a TiDB index answers about documents and code without searching: titles,
declarations, references, imports and calls (core.store.contract.IndexStore), each one read
of the index's tables."""

from __future__ import annotations

from typing import Any

from core.store.contract import REFERENCE_COLUMNS, Declaration, PageLinkRow
from core.store.tidb.index_search import IndexSearch
from core.store.tidb.sql import placeholders


class Lookups(IndexSearch):
    """The lookups of TiDBIndex (core/store/tidb/index.py)."""

    def document_titles(self) -> list[tuple[str, str]]:
        rows = self._rows("reading titles", self._sql("document_titles"))
        return [(str(title), str(chunk_id)) for title, chunk_id in rows]

    def chunk_symbols(self) -> list[Declaration]:
        rows = self._rows("reading symbols", self._sql("chunk_symbols"))
        return [Declaration(str(s), str(k or ""), str(d), str(c)) for s, k, d, c in rows]

    def document_links(self) -> list[PageLinkRow]:
        rows = self._rows("reading links", self._sql("document_links"))
        return [PageLinkRow(*(str(v or "") for v in row)) for row in rows]

    def shard_states(self, shard_ids: list[str]) -> dict[str, str]:
        """The vector phase's ledger (migration 0009) of these shards."""
        wanted = list(dict.fromkeys(shard_ids))
        if not wanted:
            return {}
        marks, slots = placeholders("s", len(wanted))
        statement = self._sql("shard_states", shard_ids=marks)
        rows = self._rows(
            "reading the shard ledger", statement, {n: wanted[i] for n, i in slots.items()}
        )
        return {str(shard_id): str(state) for shard_id, state in rows}

    def sample_chunk_ids(self, limit: int) -> list[str]:
        rows = self._rows("sampling chunks", self._sql("sample_chunk_ids"), {"limit": int(limit)})
        return [str(chunk_id) for (chunk_id,) in rows]

    def references_named(self, names: list[str]) -> list[dict[str, Any]]:
        wanted = list(dict.fromkeys(names))
        if not wanted:
            return []
        marks, slots = placeholders("n", len(wanted))
        statement = self._sql("references_named", names=marks)
        rows = self._rows("reading references", statement, {n: wanted[i] for n, i in slots.items()})
        return [dict(zip(REFERENCE_COLUMNS, row, strict=True)) for row in rows]

    def references_in(self, path: str) -> list[dict[str, Any]]:
        rows = self._rows("reading references", self._sql("references_in_path"), {"path": path})
        return [dict(zip(REFERENCE_COLUMNS, row, strict=True)) for row in rows]

    def imports_of(self, doc_ids: list[str]) -> dict[str, list[str]]:
        wanted = list(dict.fromkeys(doc_ids))
        if not wanted:
            return {}
        marks, slots = placeholders("d", len(wanted))
        statement = self._sql("imports_of_docs", doc_ids=marks)
        rows = self._rows("reading imports", statement, {n: wanted[i] for n, i in slots.items()})
        out: dict[str, list[str]] = {}
        for doc_id, name in rows:
            out.setdefault(str(doc_id), []).append(str(name))
        return out

    def calls_in(self, scopes: list[tuple[str, str]]) -> list[dict[str, Any]]:
        wanted = list(dict.fromkeys(scopes))
        if not wanted:
            return []
        marks = ", ".join(f"(%(d{i})s, %(s{i})s)" for i in range(len(wanted)))
        params = {f"d{i}": doc for i, (doc, _) in enumerate(wanted)}
        params |= {f"s{i}": scope for i, (_, scope) in enumerate(wanted)}
        rows = self._rows("reading calls", self._sql("calls_in_scopes", scopes=marks), params)
        return [dict(zip(REFERENCE_COLUMNS, row, strict=True)) for row in rows]

    def definitions_named(self, names: list[str]) -> list[dict[str, Any]]:
        wanted = list(dict.fromkeys(names))
        if not wanted:
            return []
        marks, slots = placeholders("n", len(wanted))
        statement = self._sql("definitions_named", names=marks)
        rows = self._rows(
            "reading definitions", statement, {n: wanted[i] for n, i in slots.items()}
        )
        return [dict(zip(REFERENCE_COLUMNS, row, strict=True)) for row in rows]
