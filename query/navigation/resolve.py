"""Which declarations a use of a name may mean, decided from the index alone (no language
server, no build), and honestly bounded: a use whose receiver's type cannot be known from the
text stays ambiguous and says how many declarations it may mean.

A use may mean only declarations in a language its file can call (Swift, Objective-C and C
call each other; so do JavaScript and TypeScript, Java and Kotlin): a Python `draw()` never
means a Swift `draw`. Among those, a use is narrowed step by step, each step kept only when
it leaves at least one declaration:
for a use on `self`/`this` or on nothing, first the members of the enclosing type, then the
declarations of the same file, then those of the files it imports; for a use on a type's
name (`Logger.shared`), the members of that type. A receiver that is any other expression
(`shape.reset()`) narrows nothing: its type is not in the text.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any

from chunkers.sources.file_types import EXTENSIONS

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
    return Resolver(definitions, parameters).resolve(use, imports)


class Resolver:
    """`resolve` for many uses of one name: its declarations grouped once (by container, by
    file, by file stem), so that each step picks its group instead of testing every
    declaration; a name declared in hundreds of files has thousands of uses."""

    def __init__(
        self, definitions: Sequence[Row], parameters: Collection[tuple[str, str]] = ()
    ) -> None:
        self.definitions = tuple(definitions)
        self.parameters = parameters
        # Declarations in several language families: a Resolver per family, and a use asks
        # its own family's (none: the name is declared nowhere its file can reach).
        families = _grouped(self.definitions, lambda d: family(d["path"]))
        self._family = next(iter(families)) if len(families) == 1 else None
        self._families = (
            {f: Resolver(rows, parameters) for f, rows in families.items()}
            if len(families) > 1
            else None
        )
        self._by_scope = _grouped(self.definitions, lambda d: d["scope"])
        self._by_path = _grouped(self.definitions, lambda d: d["path"])
        self._by_stem = _grouped(self.definitions, lambda d: _stem(d["path"]))
        self._position = {id(d): i for i, d in enumerate(self.definitions)}
        self._memo: dict[tuple[str, ...], Resolution] = {}

    def needs_imports(self, use: Row) -> bool:
        """Whether the use's resolution reaches the step that reads its file's imports."""
        if self._families is not None:
            own = self._families.get(family(use["path"]))
            return own is not None and own.needs_imports(use)
        if self._family is not None and self._family != family(use["path"]):
            return False
        if use["role"] in NAMING or use["qualifier"] not in _OWN_RECEIVERS:
            return False
        own_type = enclosing_type(use["scope"]) or use["scope"]
        return len(self._local(use["path"], own_type)) > 1

    def resolve(self, use: Row, imports: Sequence[str] = ()) -> Resolution:
        role, qualifier = use["role"], use["qualifier"]
        if role in NAMING:
            return Resolution((), NAMING[role])
        if self._families is not None:
            own = self._families.get(family(use["path"]))
            return own.resolve(use, imports) if own is not None else Resolution(())
        if self._family is not None and self._family != family(use["path"]):
            return Resolution(())
        if role == "value" and (use["path"], use["scope"]) in self.parameters:
            return Resolution((), NAMING["param"])
        # What a use resolves to depends on its file, its enclosing type and its imports
        # (on its own type or nothing), or on its receiver alone: each worked out once.
        if qualifier in _OWN_RECEIVERS:
            own_type = enclosing_type(use["scope"]) or use["scope"]
            # The type and the file matter only when they hold declarations of the name: uses
            # elsewhere with the same imports (another copy of a library) resolve alike.
            key: tuple[str, ...] = (
                own_type if own_type in self._by_scope else "",
                use["path"] if use["path"] in self._by_path else "",
                *imports,
            )
            found = self._memo.get(key)
            if found is None:
                found = self._memo[key] = self._on_own_type(use["path"], own_type, imports)
            return found
        if len(self.definitions) > 1 and qualifier in self._by_scope:
            return Resolution(self._by_scope[qualifier])
        return Resolution(self.definitions)

    def _on_own_type(self, path: str, own_type: str, imports: Sequence[str]) -> Resolution:
        candidates = self._local(path, own_type)
        if len(candidates) > 1 and imports:
            stems = _import_stems(tuple(imports))
            if len(candidates) == len(self.definitions):  # nothing narrowed it yet
                picked = [d for s in stems for d in self._by_stem.get(s, ())]
                narrowed = sorted(picked, key=lambda d: self._position[id(d)])
            else:
                narrowed = [d for d in candidates if _stem(d["path"]) in stems]
            if narrowed:
                candidates = tuple(narrowed)
        return Resolution(candidates)

    def _local(self, path: str, own_type: str) -> tuple[Row, ...]:
        """The candidates after the first two steps of a use on its own type or on nothing:
        the members of the enclosing type, then the declarations of the same file."""
        candidates = self.definitions
        if len(candidates) <= 1:
            return candidates
        if own_type and own_type in self._by_scope:
            candidates = self._by_scope[own_type]
        if len(candidates) <= 1:
            return candidates
        if candidates is self.definitions:
            same_file = self._by_path.get(path, ())
        else:
            same_file = tuple(d for d in candidates if d["path"] == path)
        return same_file or candidates


# Languages whose files call each other's declarations: Swift and Objective-C through the
# bridging header, Objective-C++ and C++, C from all of them; the JavaScript family; the JVM.
_FAMILIES = {
    **dict.fromkeys(("swift", "objc", "c", "cpp", "metal"), "apple-native"),
    **dict.fromkeys(("javascript", "jsx", "typescript", "tsx"), "web"),
    **dict.fromkeys(("java", "kotlin"), "jvm"),
}


@lru_cache(maxsize=1 << 16)
def family(path: str) -> str:
    """The language family of a file: whose declarations its code can call."""
    language = EXTENSIONS.get(PurePosixPath(path).suffix.lower(), "")
    return _FAMILIES.get(language, language)


def _grouped(rows: Sequence[Row], key: Callable[[Row], str]) -> dict[str, tuple[Row, ...]]:
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return {k: tuple(v) for k, v in groups.items()}


# Memoized: a lookup asks for the same few hundred paths and import lists thousands of times,
# and a PurePosixPath costs microseconds.
@lru_cache(maxsize=1 << 16)
def _stem(path: str) -> str:
    return PurePosixPath(path).stem


@lru_cache(maxsize=1 << 12)
def _import_stems(imports: tuple[str, ...]) -> frozenset[str]:
    """The file stems the imports name (`./registry`, `shapes`, `Greeter.h`, `pkg.module`)."""
    stems = set()
    for i in imports:
        stems.add(_stem(i.replace(".", "/") if "/" not in i else i))
        stems.add(_stem(i))
    return frozenset(stems)
