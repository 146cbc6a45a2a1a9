"""How every command line ends on an error: one line on stderr, a documented exit code; and
the version a command or server reports.

0 done; 1 the work failed (or found nothing, or rejected records); 2 bad arguments or
settings, found before any work.
"""

from __future__ import annotations

import sys

EXIT_FAILURE = 1
EXIT_USAGE = 2


def error_exit(exc: BaseException | str, code: int) -> int:
    """Print `error: <message>` to stderr; the exit code to return."""
    print(f"error: {exc}", file=sys.stderr)
    return code


def package_version() -> str:
    """The installed rag-retrieve's version (what servers report as theirs)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rag-retrieve")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"
