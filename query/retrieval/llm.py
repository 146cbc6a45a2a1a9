"""A small client for OpenAI-compatible chat endpoints, and tolerant JSON extraction.

`ChatClient.complete` sends `POST {endpoint}/v1/chat/completions` and returns the first
choice's text. Everything that keeps an answer from arriving in time — refused connection,
timeout, HTTP error status, a body that is not a chat completion — raises `LLMUnavailable`,
because every caller treats the LLM as optional and falls back to a deterministic path.

The timeout is a deadline for the whole exchange, not only per socket read (see
core.http_client), so a server that trickles bytes cannot hold a query for much longer than
`timeout_s`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

from core.http_client import JSONClient, ServiceError
from core.settings import Settings

_MAX_BODY = 4 * 1024 * 1024  # far above any chat reply; a runaway body is not a reply


class LLMUnavailable(RuntimeError):
    """The LLM did not produce a usable completion in time; the message says why."""


def chat_completions_url(endpoint: str) -> str:
    """`{endpoint}/v1/chat/completions`, whether the endpoint ends in `/v1` or not (or is
    already the full path)."""
    base = endpoint.strip().rstrip("/")
    if base.endswith("/chat/completions"):
        return base
    if base.endswith("/v1"):
        return base + "/chat/completions"
    return base + "/v1/chat/completions"


class ChatClient:
    def __init__(
        self,
        endpoint: str,
        model: str,
        timeout_s: float,
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        cooldown_s: float = 30.0,
    ) -> None:
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        self.endpoint = endpoint
        self.url = chat_completions_url(endpoint)
        self.model = model
        self.timeout_s = float(timeout_s)
        self.max_tokens = max_tokens
        # Zero by default: query rewriting and sufficiency judgments should be repeatable.
        self.temperature = temperature
        # After the server was down or too slow, calls fail at once for a while: one query
        # asks the LLM twice (expansion, CoRAG), and a worker serves many; none of them
        # should wait out the timeout again for a server that just failed.
        self.cooldown_s = cooldown_s
        self._down_until = 0.0
        self._down_reason = ""
        self._client = JSONClient(max_reply_bytes=_MAX_BODY)

    def __repr__(self) -> str:
        return f"ChatClient({self.url!r}, model={self.model!r}, timeout_s={self.timeout_s:g})"

    def complete(self, messages: list[dict[str, Any]]) -> str:
        """The assistant's reply text to `messages` (OpenAI chat format)."""
        if time.monotonic() < self._down_until:
            raise LLMUnavailable(f"{self._down_reason} (not retried for {self.cooldown_s:g}s)")
        payload = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "stream": False,
        }
        try:
            reply = self._client.post(self.url, payload, timeout_s=self.timeout_s)
        except ServiceError as exc:
            # A server that answers garbage at once costs no wait: only a down or slow one
            # is worth skipping.
            if exc.kind != "bad_response":
                self._down_until = time.monotonic() + self.cooldown_s
                self._down_reason = str(exc)
            raise LLMUnavailable(str(exc)) from exc
        return parse_chat_response(reply, self.url)

    def close(self) -> None:
        """Let go of the pooled connections to the server."""
        self._client.close()


def parse_chat_response(body: Any, url: str = "the LLM") -> str:
    """The first choice's message text from a decoded chat completion."""
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise LLMUnavailable(f"{url} returned no choices: {str(body)[:200]}")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        texts = [p.get("text") for p in content if isinstance(p, dict)]
        content = "".join(t for t in texts if isinstance(t, str))
    if not isinstance(content, str):
        # Legacy completions put the text at choices[0].text.
        content = choices[0].get("text")
    if not isinstance(content, str):
        raise LLMUnavailable(f"{url} returned a choice without message content")
    return content


def make_chat_client(settings: Settings) -> ChatClient | None:
    """The configured chat client, or None when OPENCLAW_LLM_ENDPOINT is unset."""
    if not settings.llm_endpoint:
        return None
    return ChatClient(settings.llm_endpoint, settings.llm_model, settings.llm_timeout_s)


def describe_llm(llm: Any) -> str:
    """A short name for notes: the URL of a ChatClient, the class name of anything else."""
    return str(getattr(llm, "url", None) or type(llm).__name__)


# Tolerant JSON extraction from model replies

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n?(.*?)```", re.DOTALL)
_OPENER = re.compile(r"[\[{]")
# Reasoning models may think aloud first; what is inside the think block is not the answer.
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def json_values(text: str) -> Iterator[Any]:
    """Every JSON array or object found in a model reply, best candidates first: fenced code
    blocks, then the whole reply, then each `[` or `{` in the text that starts valid JSON
    (so prose before and after is ignored)."""
    if not isinstance(text, str):
        return
    text = _THINK.sub("", text)
    decoder = json.JSONDecoder()
    seen: set[str] = set()
    blocks = [m[2] for m in _FENCE.finditer(text)]
    for block in [*blocks, text]:
        stripped = block.strip()
        if not stripped or stripped in seen:
            continue
        seen.add(stripped)
        try:
            value = json.loads(stripped)
        except ValueError:
            pass
        else:
            if isinstance(value, (list, dict)):
                yield value
                continue
        position = 0
        while (match := _OPENER.search(stripped, position)) is not None:
            try:
                value, end = decoder.raw_decode(stripped, match.start())
            except ValueError:
                position = match.start() + 1
                continue
            if value:
                yield value
            position = end  # values nested inside this one were seen with it
