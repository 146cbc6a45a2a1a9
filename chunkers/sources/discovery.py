"""Finding corpus files: paths, globs and directory walks, with the skip rules and .gitignore.

Nothing here reads a file's content; a path that names nothing usable is a `SourceError`
(a usage error), while a file that cannot be read becomes a reject later, when it is read
(where its content is screened for credentials, and a confined file's real path checked
again: chunkers/sources/reading.py).
"""

from __future__ import annotations

import glob
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pathspec import GitIgnoreSpec

from chunkers.sources.file_types import (
    file_kind,
    is_docc_archive,
    may_be_docc_page,
    over_size_cap,
    skipped_type,
)
from chunkers.sources.paths import OUTSIDE, expand_paths, inside, is_glob, resolved_roots
from chunkers.sources.secrets import named_secret, secret_dir, secret_file, skipped_label

# Counted per file or folder beside an archive's data/ (chunkers/sources/file_types.py).
ARCHIVE_SKIPPED = "DocC archive web app and index (not pages)"
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
    within: tuple[Path, ...] = ()  # the roots its real path must stay in where it is read
    screened: bool = True  # whether its content is screened for credentials


def discover(
    paths: Iterable[str | os.PathLike[str]],
    skipped: Counter[str] | None = None,
    *,
    secrets: bool = False,
    within: Iterable[str | os.PathLike[str]] = (),
) -> list[SourceFile]:
    """Expand files, globs and directories into corpus files, in a stable order. Files not
    read are counted in `skipped`: a directory's by type (`skipped_type`), credentials (by
    name here, by content where they are read: chunkers/sources/secrets.py) unless `secrets`
    opts them in. A file named by its path is read as asked, credential or not; with
    `within` (the MCP tool's roots) it is not, and every file whose real path leaves the
    roots is passed over too, counted as `outside root`. A folder's walk never leaves the
    folder: a linked file that does is counted as `outside root` as well."""
    roots = resolved_roots(within)
    confined = bool(roots)
    found: dict[Path, SourceFile] = {}

    def keep(
        path: Path, kind: str, root: Path, *, named: bool, bounds: tuple[Path, ...] = roots
    ) -> None:
        screened = not secrets and not (named and not confined)
        found.setdefault(path, SourceFile(path, kind, root, bounds, screened))

    def count(label: str) -> None:
        if skipped is not None:
            skipped[label] += 1

    for raw in paths:
        names = list(expand_paths([raw]))
        if not names:
            raise SourceError(f"{raw}: the pattern matches no file")
        for name in names:
            path = name.path
            if path.is_dir() and not name.globbed:
                if confined and not inside(path, roots):
                    count(OUTSIDE)
                    continue
                folder = None if secrets else named_secret(path, is_dir=True)
                if confined and folder:
                    count(folder)
                    continue
                # A walked folder is a root of its own: a link in a cloned repository must
                # not carry its ingest to a file elsewhere on the machine.
                bounds = roots or resolved_roots([path])
                for file in walk_directory(path, skipped, secrets=secrets, within=bounds):
                    keep(file, source_kind(file) or "text", path, named=False, bounds=bounds)
                continue
            if name.globbed and not path.is_file():
                continue
            if not name.globbed and not path.is_file():
                raise SourceError(f"{path}: no such file or directory")
            if confined and not inside(path, roots):
                count(OUTSIDE)
                continue
            credential = None if secrets else named_secret(path)
            if credential and (name.globbed or confined):
                count(credential)
                continue
            kind = source_kind(path)
            if kind is None and not name.globbed:
                raise SourceError(f"{path}: {UNSUPPORTED}")
            if kind is not None:
                keep(path, kind, path.parent, named=not name.globbed)
    return list(found.values())


def named_credentials(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """How each file or folder named by its path (not a glob's matches) counts as a
    credential, for those that do: a person may ingest one on purpose, and is warned."""
    labels = []
    for name in expand_paths(paths):
        if not name.globbed and name.path.exists():
            label = named_secret(name.path, is_dir=name.path.is_dir())
            if label:
                labels.append(f"{name.path} ({label})")
    return labels


def check_paths(paths: Iterable[str | os.PathLike[str]]) -> None:
    """What `discover` would refuse, found without walking any directory: a path that names
    nothing, an unreadable file or directory, an unsupported file type, a glob that matches
    nothing. Cheap enough to run before anything starts."""
    for raw in paths:
        text = str(raw)
        if is_glob(text):
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
    root: Path,
    skipped: Counter[str] | None = None,
    *,
    secrets: bool = False,
    within: tuple[Path, ...] = (),
) -> Iterator[Path]:
    """Corpus files under `root`, skipping tool/build folders and honouring .gitignore files
    (each applies to its own folder and below, as git does). Files not read for their type
    (or configuration files over the size cap) are counted in `skipped`, ignored ones not;
    so are credentials (folders and files), passed over unless `secrets`. Links to folders
    are never followed; with `within` (resolved roots), those leaving the roots and the
    files whose real path does are counted as `outside root`."""
    specs: list[tuple[Path, GitIgnoreSpec]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        specs = _with_gitignore(
            here, [(base, spec) for base, spec in specs if _is_within(here, base)]
        )
        if is_docc_archive(here):
            # Pages only: the web app, its navigator index and settings answer no question.
            if skipped is not None:
                others = [name for name in dirnames if name != "data"]
                skipped[ARCHIVE_SKIPPED] += len(filenames) + len(others)
            dirnames[:] = [name for name in dirnames if name == "data"]
            filenames = []
        kept = []
        for name in sorted(dirnames):
            if _skipped_dir(here / name, specs):
                continue
            if within and (here / name).is_symlink():
                # os.walk lists a link to a folder but does not descend into it.
                if not inside(here / name, within) and skipped is not None:
                    skipped[OUTSIDE] += 1
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
            if within and not inside(path, within):
                if skipped is not None:
                    skipped[OUTSIDE] += 1
                continue
            kind = source_kind(path)
            if kind is not None and not _over_cap(path, kind):
                yield path
            elif skipped is not None:
                capped = kind is not None
                skipped[skipped_type(path) + (" over the size cap" if capped else "")] += 1


def _over_cap(path: Path, kind: str) -> bool:
    try:
        capped = over_size_cap(kind, path.stat().st_size)
    except OSError:
        return False  # reading it will say what is wrong
    return capped and not (kind == "json" and may_be_docc_page(path))


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
