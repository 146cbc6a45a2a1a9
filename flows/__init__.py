"""The Prefect flows: ingest (`python -m flows.ingest`, and `--watch`), refresh, backfill,
reverify, and the deployments that serve them (`python -m flows.serve`).

The ingest's stages log through module loggers under `rag` (`rag.ingest`, `rag.progress`,
`rag.embedding`, ...), whoever runs them. Prefect forwards the loggers its extra-loggers
setting names to the log of the flow or task run they log in, and reads that setting once,
when Prefect is first imported: so `rag` is added to it here, before any flow module
imports Prefect (a user's own extra loggers are kept), and set to INFO, the level of the
stages' progress lines (count, rate, ETA).
"""

import logging
import os

_EXTRA_LOGGERS = "PREFECT_LOGGING_EXTRA_LOGGERS"

# A third-party library's own setting, written before the library reads it; our settings
# stay in core.settings.
_named = [name.strip() for name in os.environ.get(_EXTRA_LOGGERS, "").split(",") if name.strip()]
if "rag" not in _named:
    os.environ[_EXTRA_LOGGERS] = ",".join([*_named, "rag"])
logging.getLogger("rag").setLevel(logging.INFO)
