"""Which declarations a use of a name may mean, decided from the index alone (no language
server, no build), and honestly bounded: a use whose receiver's type cannot be known from the
text stays ambiguous and says how many declarations it may mean.

A use is narrowed step by step, each step kept only when it leaves at least one declaration:
for a use on `self`/`this` or on nothing, first the members of the enclosing type, then the
declarations of the same file, then those of the files it imports; for a use on a type's
name (`Logger.shared`), the members of that type. A receiver that is any other expression
(`shape.reset()`) narrows nothing: its type is not in the text.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

DEFINITION = "definition"
# Records that name something of their own instead of using a declaration: a parameter
# declared with the name, an Objective-C category's own name. They resolve to nothing and say
# what they name; so does a bare read of a parameter inside the declaration that declares it.
NAMING = {"param": "parameter", "category": "category"}
_OWN_RECEIVERS = frozenset({"", "self", "this", "super", "Self", "cls"})

Row = dict[str, Any]  # one row of the references table (core.store.contract.REFERENCE_COLUMNS)


@dataclass(frozen=True)
class Resolution:
    """The declarations a use may mean: one when resolved, several when ambiguous, none when
    the name is declared nowhere in the index (a framework's or a library's)."""

    candidates: tuple[Row, ...]
    names: str = ""  # what a naming record names (NAMING), instead of candidates

    @property
    def resolved(self) -> Row | None:
        return self.candidates[0] if len(self.candidates) == 1 else None

    def describe(self) -> dict[str, Any]:
        if self.names:
            return {"names": self.names}
        found = self.resolved
        if found is not None:
            return {"resolved": f"{found['path']}:{found['line']}"}
        return {"candidates": len(self.candidates)}


def enclosing_type(scope: str) -> str:
    """The type part of a use's enclosing declaration (`Canvas` of `Canvas.paint`)."""
    head, dot, _ = scope.partition(".")
    return head if dot else ""


def resolve(
    use: Row,
    definitions: Sequence[Row],
    imports: Sequence[str] = (),
    parameters: Collection[tuple[str, str]] = (),
) -> Resolution:
    """The declarations among `definitions` (of the use's name) the use may mean.
    `parameters`: the (path, enclosing declaration) of the parameters of that name."""
    if use["role"] in NAMING:
        return Resolution((), NAMING[use["role"]])
    if use["role"] == "value" and (use["path"], use["scope"]) in parameters:
        return Resolution((), NAMING["param"])
    steps: list[Callable[[Row], bool]]
    qualifier = use["qualifier"]
    if qualifier in _OWN_RECEIVERS:
        own_type = enclosing_type(use["scope"]) or use["scope"]
        steps = [
            lambda d: bool(own_type) and d["scope"] == own_type,
            lambda d: d["path"] == use["path"],
            lambda d: _imported(d["path"], imports),
        ]
    elif any(d["scope"] == qualifier for d in definitions):
        steps = [lambda d: d["scope"] == qualifier]
    else:
        steps = []
    candidates = list(definitions)
    for step in steps:
        if len(candidates) <= 1:
            break
        narrowed = [d for d in candidates if step(d)]
        if narrowed:
            candidates = narrowed
    return Resolution(tuple(candidates))


def _imported(path: str, imports: Sequence[str]) -> bool:
    """Whether the file at `path` is one of the modules imported (`./registry`, `shapes`,
    `Greeter.h`, `pkg.module`): compared by file stem."""
    stem = PurePosixPath(path).stem
    return any(
        PurePosixPath(i.replace(".", "/") if "/" not in i else i).stem == stem
        or PurePosixPath(i).stem == stem
        for i in imports
    )
