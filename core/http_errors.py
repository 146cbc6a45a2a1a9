"""What an HTTP error from an OpenAI-compatible service says, for our own error messages.

Embedding endpoints, LLM endpoints and rerankers answer errors the same ways: OpenAI's
`{"error": {"message": ...}}`, a bare `{"error": "..."}` (TEI, Ollama), or plain text.
"""

from __future__ import annotations

import json
import urllib.error

_MAX_DETAIL = 300


def error_detail(exc: urllib.error.HTTPError) -> str:
    """The service's own explanation of an HTTP error, shortened; the reason phrase if the
    body says nothing."""
    try:
        text = exc.read().decode("utf-8", "replace")
    except Exception:  # a body that cannot be read must not hide the status
        return str(exc.reason or "no detail")
    try:
        err = json.loads(text).get("error")
        message = err.get("message") if isinstance(err, dict) else err
        if message:
            return str(message)[:_MAX_DETAIL]
    except (ValueError, AttributeError):
        pass
    return text.strip()[:_MAX_DETAIL] or str(exc.reason or "no detail")
