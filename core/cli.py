"""How every command line ends on an error: one line on stderr, a documented exit code.

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
