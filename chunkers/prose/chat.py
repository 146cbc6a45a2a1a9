"""Chat sessions -> pieces: windows of consecutive messages rendered as `role: content` lines."""

from __future__ import annotations

from dataclasses import dataclass

from chunkers.config import ChunkConfig
from chunkers.model import Piece
from chunkers.packing import pack_by
from chunkers.windows import cut_at_tokens


@dataclass
class _Message:
    index: int  # position in the session as given, so pieces point back at the source
    role: str
    content: str

    @property
    def line(self) -> str:
        return f"{self.role}: {self.content}"


def chunk_chat(messages: list[dict[str, str]], cfg: ChunkConfig) -> list[Piece]:
    """Non-overlapping windows of `cfg.chat_window` messages, each at most `cfg.max_tokens`.

    Empty messages are skipped; a window over the limit is split into fewer messages, and a
    single message over the limit is cut into parts that each repeat its role."""
    kept = _kept_messages(messages)
    size = max(1, cfg.chat_window)
    pieces: list[Piece] = []
    for k in range(0, len(kept), size):
        for group in _fit(kept[k : k + size], cfg):
            pieces += _group_pieces(group, cfg)
    return pieces


def _kept_messages(messages: list[dict[str, str]]) -> list[_Message]:
    kept = []
    for i, msg in enumerate(messages):
        content = msg.get("content")
        content = "" if content is None else str(content)
        if not content.strip():
            continue
        role = str(msg.get("role") or "").strip() or "unknown"
        kept.append(_Message(i, role, content))
    return kept


def _render(group: list[_Message]) -> str:
    return "\n".join(m.line for m in group)


def _fit(window: list[_Message], cfg: ChunkConfig) -> list[list[_Message]]:
    """Split a window into runs of consecutive messages that each fit the hard limit; a message
    too big on its own becomes a run of one, cut later. Runs are measured rendered, as the
    pieces will be: the role prefixes and newlines cost tokens too."""

    def grow(group: list[_Message], msg: _Message) -> list[_Message] | None:
        grown = group + [msg]
        return grown if cfg.count(_render(grown)) <= cfg.max_tokens else None

    return pack_by(window, lambda msg: [msg], grow)


def _group_pieces(group: list[_Message], cfg: ChunkConfig) -> list[Piece]:
    text = _render(group)
    if cfg.count(text) <= cfg.max_tokens:
        return [_piece(text, group)]
    (msg,) = group  # _fit only leaves oversize groups of a single message
    parts = _cut_message(msg, cfg)
    pieces = [_piece(part, group) for part in parts]
    for i, piece in enumerate(pieces, 1):
        piece.metadata.update(part=i, parts=len(pieces))
    return pieces


def _cut_message(msg: _Message, cfg: ChunkConfig) -> list[str]:
    """Cut one message so every part starts with its role; without room for the role prefix,
    cut the rendered line as is."""
    prefix = f"{msg.role}: "
    budget = cfg.max_tokens - cfg.count(prefix)
    if budget < cfg.max_tokens // 2:
        return cut_at_tokens(msg.line, cfg, cfg.max_tokens)
    return [
        line
        for part in cut_at_tokens(msg.content, cfg, budget)
        for line in _with_prefix(prefix, part, cfg)
    ]


def _with_prefix(prefix: str, text: str, cfg: ChunkConfig) -> list[str]:
    # Tokens can merge across the join with the prefix; halving keeps the limit, loses nothing.
    line = prefix + text
    if len(text) <= 1 or cfg.count(line) <= cfg.max_tokens:
        return [line]
    half = len(text) // 2
    return _with_prefix(prefix, text[:half], cfg) + _with_prefix(prefix, text[half:], cfg)


def _piece(text: str, group: list[_Message]) -> Piece:
    first, last = group[0].index, group[-1].index
    return Piece(
        content=text,
        start_line=first + 1,
        end_line=last + 1,
        kind="messages",
        metadata={
            "first_message": first,
            "last_message": last,
            "roles": [m.role for m in group],
        },
    )
