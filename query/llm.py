"""A small client for OpenAI-compatible chat endpoints, and tolerant JSON extraction.

`ChatClient.complete` sends `POST {endpoint}/v1/chat/completions` and returns the first
choice's text. Everything that keeps an answer from arriving in time — refused connection,
timeout, HTTP error status, a body that is not a chat completion — raises `LLMUnavailable`,
because every caller treats the LLM as optional and falls back to a deterministic path.

The timeout is a deadline for the whole exchange, not only per socket read: the body is read
in pieces and the clock is checked between them, so a server that trickles bytes cannot hold
a query for longer than `timeout_s` plus one socket read (itself bounded by the remainder).

The standard library's urllib is used (as the embedding HTTP client does): the request is one
JSON POST, and no extra dependency is worth it.
"""

from __future__ import annotations

import http.client
import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

from core.http_errors import error_detail
from core.settings import Settings

_READ_PIECE = 64 * 1024
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

    def __repr__(self) -> str:
        return f"ChatClient({self.url!r}, model={self.model!r}, timeout_s={self.timeout_s:g})"

    def complete(self, messages: list[dict[str, Any]]) -> str:
        """The assistant's reply text to `messages` (OpenAI chat format)."""
        if time.monotonic() < self._down_until:
            raise LLMUnavailable(f"{self._down_reason} (not retried for {self.cooldown_s:g}s)")
        body = json.dumps(
            {
                "model": self.model,
                "messages": messages,
                "temperature": self.temperature,
                "max_tokens": self.max_tokens,
                "stream": False,
            }
        ).encode("utf-8")
        request = urllib.request.Request(
            self.url,
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        try:
            raw = self._send(request)
        except LLMUnavailable as exc:
            self._down_until = time.monotonic() + self.cooldown_s
            self._down_reason = str(exc)
            raise
        return parse_chat_response(raw, self.url)

    def _send(self, request: urllib.request.Request) -> bytes:
        deadline = time.monotonic() + self.timeout_s
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return _read_until(response, deadline, self._late)
        except urllib.error.HTTPError as exc:
            raise LLMUnavailable(
                f"{self.url} answered HTTP {exc.code}: {error_detail(exc)}"
            ) from exc
        except TimeoutError as exc:
            raise self._late() from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):  # timed out while connecting
                raise self._late() from exc
            raise LLMUnavailable(f"{self.url} is unreachable: {exc.reason}") from exc
        except (ConnectionError, http.client.HTTPException, OSError) as exc:
            raise LLMUnavailable(f"{self.url} dropped the connection: {exc}") from exc

    def _late(self) -> LLMUnavailable:
        return LLMUnavailable(f"{self.url} did not answer within {self.timeout_s:g}s")


def _read_until(response: Any, deadline: float, late: Any) -> bytes:
    pieces: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise late()
        piece = response.read1(_READ_PIECE)
        if not piece:
            return b"".join(pieces)
        pieces.append(piece)
        size += len(piece)
        if size > _MAX_BODY:
            raise LLMUnavailable(f"reply larger than {_MAX_BODY} bytes")


def parse_chat_response(raw: bytes, url: str = "the LLM") -> str:
    """The first choice's message text from a chat completion body."""
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise LLMUnavailable(f"{url} returned a body that is not JSON: {exc}") from None
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
