"""`python -m flows.prefect_api`: a Prefect API for a long-lived parent's children.

The MCP server's ingest tool runs one `flows.ingest` child per call; each would start (and
wait ~10 s for) a temporary server of its own. The MCP server runs this instead, once: it
prints one JSON line, `{"api_url": URL}` once Prefect's temporary server answers (or
`{"api_url": null}` when Prefect talks to a configured API: the children find it as this
did), and keeps the server until its stdin closes, which the parent's exit does, SIGKILL
included; killed itself, its server's guard stops the server (flows/prefect_api/server.py).
A start that fails prints `{"error": MESSAGE}` and exits 1.
"""

from __future__ import annotations

import json
import sys

from core.settings import Settings
from flows.prefect_api.server import ApiServerError, starting_api


def main() -> int:
    settings = Settings.from_env()
    try:
        with starting_api(settings) as start:
            url = start.wait() if start is not None else None
            print(json.dumps({"api_url": url}), flush=True)
            sys.stdin.read()  # until the parent closes it, or dies
    except ApiServerError as exc:
        print(json.dumps({"error": str(exc)}), flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
