"""After fusion (`adjust`): a chunk whose symbol (or, for a part of a split type, a member it
lists) is an identifier the query names is multiplied by DEFINITION_BOOST; a chunk tagged
with any requested framework (case-insensitive) is multiplied by FRAMEWORK_BOOST once,
however many tags match; a chunk deprecated at or before the target iOS version, admitted
only because of --include-deprecated, is multiplied by DEPRECATED_DEMOTION. The order is
score descending, then index name, then chunk id, so ties break the same way on every run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from query.retrieval.fusion import order_key
from query.types import Candidate

# Strong enough to lift a tagged chunk over an untagged one a few ranks above it (RRF
# scores of neighbouring ranks differ by ~2%), too weak to lift an irrelevant chunk to the top.
FRAMEWORK_BOOST = 1.25
# Deprecated-for-the-target chunks the user asked to see stay, below current equivalents.
DEPRECATED_DEMOTION = 0.5
# A chunk that defines an identifier the query names (`TripStore`, `fetch_user`) is what an
# agent asking for it wants. The keyword leg alone does not ensure it: across indexes of
# very different sizes, a document sharing only the identifier's parts can outscore the
# definition (each index has its own term statistics). Doubling lifts a definition over
# anything that does not define the name unless that scores twice as high.
DEFINITION_BOOST = 2.0


def matches_framework(row: Mapping, frameworks: Sequence[str]) -> bool:
    wanted = {f.lower() for f in frameworks}
    return any(str(tag).lower() in wanted for tag in row.get("framework_tags") or ())


def deprecated_for_target(row: Mapping, target: int | None) -> bool:
    """The SearchFilter rule for exclusion: deprecated at or before the target, or deprecated
    with no version. Without a target nothing counts as deprecated for it."""
    if target is None or not row.get("deprecated"):
        return False
    dep = row.get("deprecated_in_int")
    return dep is None or dep <= target


def defines(row: Mapping, identifiers: Sequence[str]) -> bool:
    """The chunk declares one of `identifiers`: its symbol, the symbol's last dotted part
    (`TripRepository.save` defines `save`), or a member it lists as a part of a type split
    at its members (`metadata["members"]`: the part of `TripStore` holding `fetchTrips`
    carries the symbol `TripStore`), equals one of them or their last dotted part."""
    symbol = row.get("symbol")
    if not symbol or not identifiers:
        return False
    names = {symbol, symbol.rsplit(".", 1)[-1]}
    metadata = row.get("metadata")
    members = metadata.get("members") if isinstance(metadata, Mapping) else None
    if isinstance(members, list):
        names.update(m for m in members if isinstance(m, str))
    return any(name in names or name.rsplit(".", 1)[-1] in names for name in identifiers)


def adjust(
    candidates: Sequence[Candidate],
    *,
    frameworks: Sequence[str] = (),
    ios_version_int: int | None = None,
    identifiers: Sequence[str] = (),
) -> list[Candidate]:
    """Apply the definition and framework boosts and the deprecation demotion, re-sort."""
    for cand in candidates:
        if identifiers and defines(cand.row, identifiers):
            cand.score *= DEFINITION_BOOST
        if frameworks and matches_framework(cand.row, frameworks):
            cand.score *= FRAMEWORK_BOOST
        if deprecated_for_target(cand.row, ios_version_int):
            cand.score *= DEPRECATED_DEMOTION
    return sorted(candidates, key=order_key)
