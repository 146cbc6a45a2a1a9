"""Paths as named: the one expansion of globs, and confinement to roots by real path.

The MCP server checks what an agent names against the folders the user allowed, and the
ingest it starts expands the same names again; both expand them here, so they cannot
disagree on what a pattern means. The server's check is not enough on its own: a file can be
swapped for a link between the check and the read. So a confined ingest checks each file's
real path again where it opens it (`open_confined`), and a link that leaves every root is
passed over and counted as `outside root`.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

GLOB_CHARS = "*?["
OUTSIDE = "outside root"


class OutsideRoots(OSError):
    """A file whose real path lies outside every root it is confined to."""


@dataclass(frozen=True)
class Named:
    """One file or folder a path names: the path itself, or one match of a glob."""

    given: str  # as named
    path: Path
    globbed: bool


def is_glob(text: str) -> bool:
    return any(ch in text for ch in GLOB_CHARS)


def expand_paths(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Named]:
    """Each path as named, a glob as its matches (recursive `**`, sorted); a glob that
    matches nothing yields nothing (callers say so in their own terms)."""
    for raw in paths:
        text = str(raw)
        if not is_glob(text):
            yield Named(text, Path(text), globbed=False)
            continue
        for match in sorted(glob.glob(text, recursive=True)):
            yield Named(text, Path(match), globbed=True)


def inside(path: str | os.PathLike[str], roots: Iterable[Path]) -> bool:
    """Whether `path`, links and `..` followed, lies inside one of `roots` (resolved ones)."""
    real = Path(os.path.realpath(path))
    return any(real == root or root in real.parents for root in roots)


def resolved_roots(roots: Iterable[str | os.PathLike[str]]) -> tuple[Path, ...]:
    return tuple(dict.fromkeys(Path(os.path.realpath(root)) for root in roots))


def open_confined(path: Path, roots: tuple[Path, ...]) -> BinaryIO:
    """`path` opened for reading. With `roots`, the file opened is the one its real path
    names, checked inside a root as it is opened (OutsideRoots otherwise); O_NOFOLLOW
    refuses a last link planted between the check and the open."""
    if not roots:
        return path.open("rb")
    real = os.path.realpath(path)
    if not inside(real, roots):
        raise OutsideRoots(f"{path} resolves to {real}, outside the roots it is confined to")
    descriptor = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    return os.fdopen(descriptor, "rb")
