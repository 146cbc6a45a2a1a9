"""Finding corpus files: paths, globs and directory walks, with the skip rules and .gitignore.

Nothing here reads a file's content; a path that names nothing usable is a `SourceError`
(a usage error), while a file that cannot be read becomes a reject later, when it is read.
"""

from __future__ import annotations

import glob
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pathspec import GitIgnoreSpec

from chunkers.sources.file_types import file_kind, over_size_cap, skipped_type
from chunkers.sources.secrets import secret_dir, secret_file, skipped_label

UNSUPPORTED = "unsupported file type (see docs/ingestion.md, *Documents in*, for what is read)"
# Folders that hold tooling, builds or dependencies, never the user's own corpus.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        "env",
        ".env",
        "node_modules",
        "build",
        ".build",
        "dist",
        "DerivedData",
        "Pods",
        "Carthage",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "site-packages",
        ".swiftpm",
        ".idea",
        ".vscode",
        ".eggs",
        "target",
    }
)


class SourceError(ValueError):
    """A path given on the command line that names nothing usable."""


@dataclass(frozen=True)
class SourceFile:
    path: Path
    kind: str  # "jsonl" or a language from chunkers.sources.file_types
    root: Path  # the directory the user named, for relative paths in doc ids


def discover(
    paths: Iterable[str | os.PathLike[str]],
    skipped: Counter[str] | None = None,
    *,
    secrets: bool = False,
) -> list[SourceFile]:
    """Expand files, globs and directories into corpus files, in a stable order. Files a
    directory holds that are not read are counted in `skipped` by type (`skipped_type`), and
    credentials by name (chunkers/sources/secrets.py) unless `secrets` opts them in."""
    found: dict[Path, SourceFile] = {}
    for raw in paths:
        text = str(raw)
        if any(ch in text for ch in "*?["):
            matches = sorted(glob.glob(text, recursive=True))
            if not matches:
                raise SourceError(f"{text}: the pattern matches no file")
            for match in matches:
                path = Path(match)
                if path.is_file() and (kind := source_kind(path)):
                    found.setdefault(path, SourceFile(path, kind, path.parent))
            continue
        path = Path(text)
        if path.is_dir():
            for file in walk_directory(path, skipped, secrets=secrets):
                found.setdefault(file, SourceFile(file, source_kind(file) or "text", path))
        elif path.is_file():
            kind = source_kind(path)
            if kind is None:
                raise SourceError(f"{path}: {UNSUPPORTED}")
            found.setdefault(path, SourceFile(path, kind, path.parent))
        else:
            raise SourceError(f"{path}: no such file or directory")
    return list(found.values())


def check_paths(paths: Iterable[str | os.PathLike[str]]) -> None:
    """What `discover` would refuse, found without walking any directory: a path that names
    nothing, an unreadable file or directory, an unsupported file type, a glob that matches
    nothing. Cheap enough to run before anything starts."""
    for raw in paths:
        text = str(raw)
        if any(ch in text for ch in "*?["):
            if next(glob.iglob(text, recursive=True), None) is None:
                raise SourceError(f"{text}: the pattern matches no file")
            continue
        path = Path(text)
        if path.is_dir():
            if not os.access(path, os.R_OK | os.X_OK):
                raise SourceError(f"{path}: directory is not readable")
        elif path.is_file():
            if source_kind(path) is None:
                raise SourceError(f"{path}: {UNSUPPORTED}")
            if not os.access(path, os.R_OK):
                raise SourceError(f"{path}: file is not readable")
        else:
            raise SourceError(f"{path}: no such file or directory")


def walk_directory(
    root: Path, skipped: Counter[str] | None = None, *, secrets: bool = False
) -> Iterator[Path]:
    """Corpus files under `root`, skipping tool/build folders and honouring .gitignore files
    (each applies to its own folder and below, as git does). Files not read for their type
    (or configuration files over the size cap) are counted in `skipped`, ignored ones not;
    so are credentials (folders and files), passed over unless `secrets`."""
    specs: list[tuple[Path, GitIgnoreSpec]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        specs = _with_gitignore(
            here, [(base, spec) for base, spec in specs if _is_within(here, base)]
        )
        kept = []
        for name in sorted(dirnames):
            if _skipped_dir(here / name, specs):
                continue
            if not secrets and secret_dir(here / name):
                if skipped is not None:
                    skipped[skipped_label(here / name, is_dir=True)] += 1
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            path = here / name
            if _ignored(path, specs, is_dir=False):
                continue
            if not secrets and secret_file(path):
                if skipped is not None:
                    skipped[skipped_label(path, is_dir=False)] += 1
                continue
            kind = source_kind(path)
            if kind is not None and not _over_cap(path, kind):
                yield path
            elif skipped is not None:
                capped = kind is not None
                skipped[skipped_type(path) + (" over the size cap" if capped else "")] += 1


def _over_cap(path: Path, kind: str) -> bool:
    try:
        return over_size_cap(kind, path.stat().st_size)
    except OSError:
        return False  # reading it will say what is wrong


def walked(root: Path, path: Path, *, is_dir: bool = False, secrets: bool = False) -> bool:
    """Whether `walk_directory(root, secrets=secrets)` yields the file `path` (with `is_dir`:
    descends into the folder `path`). Judged from names and the .gitignore files on the way
    down, never from the path itself, so that it also answers for a path just deleted."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    if not parts:
        return is_dir
    here, specs = root, _with_gitignore(root, [])
    for name in parts[:-1]:
        if _skipped_dir(here / name, specs) or (not secrets and secret_dir(here / name)):
            return False
        here = here / name
        specs = _with_gitignore(here, specs)
    if is_dir:
        return not _skipped_dir(path, specs) and (secrets or not secret_dir(path))
    if not secrets and secret_file(path):
        return False
    return source_kind(path) is not None and not _ignored(path, specs, is_dir=False)


def source_kind(path: Path) -> str | None:
    """What a file is read as, by its name: "jsonl", a language, or None (not read)."""
    return file_kind(path)


def _with_gitignore(
    folder: Path, specs: list[tuple[Path, GitIgnoreSpec]]
) -> list[tuple[Path, GitIgnoreSpec]]:
    """`specs` plus the folder's own .gitignore, if it has one."""
    ignore_file = folder / ".gitignore"
    if not ignore_file.is_file():
        return specs
    try:
        lines = ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return specs  # an unreadable .gitignore ignores nothing, like git
    return [*specs, (folder, GitIgnoreSpec.from_lines(lines))]


def _skipped_dir(path: Path, specs: list[tuple[Path, GitIgnoreSpec]]) -> bool:
    name = path.name
    return name in SKIP_DIRS or name.endswith(".egg-info") or _ignored(path, specs, is_dir=True)


def _is_within(path: Path, base: Path) -> bool:
    return path == base or base in path.parents


def _ignored(path: Path, specs: list[tuple[Path, GitIgnoreSpec]], *, is_dir: bool) -> bool:
    for base, spec in specs:
        relative = path.relative_to(base).as_posix() + ("/" if is_dir else "")
        if spec.match_file(relative):
            return True
    return False
