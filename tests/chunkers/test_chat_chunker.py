"""Behaviour of the chat-session chunker."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkers.config import ChunkConfig
from chunkers.model import Piece
from chunkers.prose.chat import chunk_chat
from tests.support import paths

FIXTURES = paths.FIXTURES / "chat"


def load(name: str) -> list[dict[str, str]]:
    return json.loads((FIXTURES / name).read_text())


SESSION = load("session.json")
LONG = load("long_message.json")


def message_text(pieces: list[Piece], index: int) -> str:
    """The content of message `index` as recovered from the pieces that hold it."""
    holders = [
        p for p in pieces if p.metadata["first_message"] <= index <= p.metadata["last_message"]
    ]
    if len(holders) == 1 and "part" not in holders[0].metadata:
        return holders[0].content
    return "".join(p.content.split(": ", 1)[1] for p in holders)


def test_empty_session_gives_no_pieces(cfg):
    assert chunk_chat([], cfg) == []


def test_messages_are_grouped_in_windows_of_five(cfg):
    pieces = chunk_chat(SESSION, cfg)
    assert [len(p.metadata["roles"]) for p in pieces] == [5, 5]


def test_window_size_follows_the_config(cfg):
    pieces = chunk_chat(SESSION, replace(cfg, chat_window=3))
    assert [len(p.metadata["roles"]) for p in pieces] == [3, 3, 3, 1]


def test_windows_do_not_overlap(cfg):
    pieces = chunk_chat(SESSION, replace(cfg, chat_window=2))
    spans = [(p.metadata["first_message"], p.metadata["last_message"]) for p in pieces]
    assert all(prev[1] < nxt[0] for prev, nxt in zip(spans, spans[1:], strict=False))


def test_each_message_renders_as_a_role_colon_content_line(cfg):
    first = chunk_chat(SESSION, cfg)[0]
    assert first.content.splitlines()[:2] == [
        "system: You are a senior Python reviewer. Answer briefly and show code.",
        "user: My FastAPI endpoint returns 422 when I post JSON from the iOS app.",
    ]


def test_multiline_message_content_is_kept_verbatim(cfg):
    first = chunk_chat(SESSION, cfg)[0]
    assert "user: class Order(BaseModel):\n    order_id: str\n    quantity: int\n" in first.content


def test_pieces_are_of_kind_messages(cfg):
    assert {p.kind for p in chunk_chat(SESSION, cfg)} == {"messages"}


def test_metadata_names_first_and_last_message_and_roles(cfg):
    first = chunk_chat(SESSION, cfg)[0]
    assert first.metadata == {
        "first_message": 0,
        "last_message": 4,
        "roles": ["system", "user", "assistant", "user", "assistant"],
    }


def test_line_numbers_are_message_indices_plus_one(cfg):
    for piece in chunk_chat(SESSION, cfg):
        assert piece.start_line == piece.metadata["first_message"] + 1
        assert piece.end_line == piece.metadata["last_message"] + 1


def test_messages_with_empty_content_are_skipped(cfg):
    second = chunk_chat(SESSION, cfg)[1]
    # Message 5 is empty and message 9 only whitespace; indices still point at the session.
    assert (second.metadata["first_message"], second.metadata["last_message"]) == (6, 11)
    assert "assistant: \n" not in second.content
    assert "user:    " not in second.content


def test_missing_role_becomes_unknown(cfg):
    second = chunk_chat(SESSION, cfg)[1]
    assert "unknown: [tool output] 3 passed, 0 failed in 0.41s" in second.content
    assert second.metadata["roles"][2] == "unknown"


def test_window_over_the_hard_limit_is_split_into_fewer_messages(small_cfg):
    pieces = chunk_chat(SESSION, small_cfg)
    assert len(pieces) > 2
    assert all(small_cfg.count(p.content) <= small_cfg.max_tokens for p in pieces)
    assert [p.metadata["first_message"] for p in pieces] == [0, 3, 4, 6, 10]


def test_oversize_message_is_cut_into_parts_that_keep_the_role(small_cfg):
    pieces = chunk_chat(LONG, small_cfg)
    parts = [p for p in pieces if p.metadata["last_message"] == 0]
    assert len(parts) > 1
    assert all(p.content.startswith("user: ") for p in parts)
    assert [p.metadata["part"] for p in parts] == list(range(1, len(parts) + 1))
    assert all((p.start_line, p.end_line) == (1, 1) for p in parts)


@pytest.mark.parametrize("config", ["cfg", "small_cfg"])
@pytest.mark.parametrize("session", [SESSION, LONG], ids=["session", "long"])
def test_no_piece_exceeds_the_hard_limit(config, session, request):
    chosen: ChunkConfig = request.getfixturevalue(config)
    assert all(chosen.count(p.content) <= chosen.max_tokens for p in chunk_chat(session, chosen))


@pytest.mark.parametrize("session", [SESSION, LONG], ids=["session", "long"])
def test_no_message_text_is_lost(small_cfg, session):
    pieces = chunk_chat(session, small_cfg)
    for i, msg in enumerate(session):
        if msg["content"].strip():
            assert msg["content"] in message_text(pieces, i)


PIECES_OF_TEXT = st.sampled_from(["a", "b", " ", "é", "\n", ":", "word "])
MESSAGES = st.lists(
    st.fixed_dictionaries(
        {"content": st.lists(PIECES_OF_TEXT, max_size=200).map("".join)},
        optional={"role": st.sampled_from(["user", "assistant", "system", ""])},
    ),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(messages=MESSAGES, window=st.integers(1, 6))
def test_property_any_session_fits_the_limit_and_keeps_all_text(counter, messages, window):
    limits = ChunkConfig(counter=counter, target_tokens=20, max_tokens=30, chat_window=window)
    pieces = chunk_chat(messages, limits)
    assert all(limits.count(p.content) <= limits.max_tokens for p in pieces)
    for i, msg in enumerate(messages):
        if msg["content"].strip():
            assert msg["content"] in message_text(pieces, i)
