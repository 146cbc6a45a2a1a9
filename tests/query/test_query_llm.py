"""The chat client against a local server speaking the OpenAI chat completions API, and the
tolerant JSON extraction every LLM caller uses."""

from __future__ import annotations

import time

import pytest

from core.settings import Settings
from query.retrieval.llm import (
    ChatClient,
    LLMUnavailable,
    chat_completions_url,
    json_values,
    make_chat_client,
)
from tests.support.fake_services import Reply, chat_completion, chat_server, serving

MESSAGES = [{"role": "user", "content": "hello"}]


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://h:1",
        "http://h:1/",
        "http://h:1/v1",
        "http://h:1/v1/",
        "http://h:1/v1/chat/completions",
    ],
)
def test_the_endpoint_may_be_given_with_or_without_v1(endpoint):
    assert chat_completions_url(endpoint) == "http://h:1/v1/chat/completions"


def test_complete_returns_the_first_choice_message_content():
    with chat_server("the answer") as server:
        assert ChatClient(server.url, "gemma-4", 5.0).complete(MESSAGES) == "the answer"


def test_the_request_is_an_openai_chat_completion_request():
    with chat_server("ok") as server:
        ChatClient(server.url + "/v1", "gemma-4", 5.0).complete(MESSAGES)
    (request,) = server.received
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "gemma-4"
    assert request.body["messages"] == MESSAGES
    assert request.body["stream"] is False


def test_content_given_as_parts_is_joined():
    parts = chat_completion(None)
    parts["choices"][0]["message"]["content"] = [
        {"type": "text", "text": "one "},
        {"type": "text", "text": "two"},
    ]
    with serving({"/v1/chat/completions": lambda r: Reply(body=parts)}) as server:
        assert ChatClient(server.url, "m", 5.0).complete(MESSAGES) == "one two"


def test_a_server_slower_than_the_timeout_raises_llm_unavailable_in_time():
    with chat_server("late", delay_s=2.0) as server:
        started = time.monotonic()
        with pytest.raises(LLMUnavailable, match="did not answer within 0.3s"):
            ChatClient(server.url, "m", 0.3).complete(MESSAGES)
        assert time.monotonic() - started < 1.5


def test_a_body_trickling_past_the_deadline_raises_llm_unavailable():
    """Each byte arrives well within the socket timeout; only the total deadline catches it."""
    with chat_server("a long enough reply", trickle_s=0.02) as server:
        started = time.monotonic()
        with pytest.raises(LLMUnavailable, match="did not answer within"):
            ChatClient(server.url, "m", 0.5).complete(MESSAGES)
        assert time.monotonic() - started < 1.5


def test_http_500_raises_llm_unavailable_with_the_servers_message():
    error = {"error": {"message": "model overloaded", "type": "server_error"}}
    with (
        serving({"/v1/chat/completions": lambda r: Reply(500, error)}) as server,
        pytest.raises(LLMUnavailable, match="HTTP 500: model overloaded"),
    ):
        ChatClient(server.url, "m", 5.0).complete(MESSAGES)


def test_a_refused_connection_raises_llm_unavailable():
    with serving({}) as server:
        url = server.url
    with pytest.raises(LLMUnavailable, match="unreachable"):
        ChatClient(url, "m", 2.0).complete(MESSAGES)


@pytest.mark.parametrize(
    "body",
    [
        b"<html>Bad gateway</html>",
        {"choices": []},
        {"object": "error"},
        {"choices": [{"message": {}}]},
    ],
)
def test_a_body_that_is_not_a_chat_completion_raises_llm_unavailable(body):
    with (
        serving({"/v1/chat/completions": lambda r: Reply(body=body)}) as server,
        pytest.raises(LLMUnavailable),
    ):
        ChatClient(server.url, "m", 5.0).complete(MESSAGES)


def test_after_a_timeout_calls_fail_at_once_without_contacting_the_server():
    """One query asks the LLM twice (expansion, CoRAG): a down LLM must cost one timeout."""
    with chat_server("late", delay_s=2.0) as server:
        client = ChatClient(server.url, "m", 0.3)
        with pytest.raises(LLMUnavailable):
            client.complete(MESSAGES)
        started = time.monotonic()
        with pytest.raises(LLMUnavailable, match="not retried for 30s"):
            client.complete(MESSAGES)
        assert time.monotonic() - started < 0.1
    assert len(server.received) == 1


def test_the_server_is_asked_again_after_the_cooldown():
    replies = iter([Reply(503, {"error": "loading model"}), Reply(body=chat_completion("up"))])
    with serving({"/v1/chat/completions": lambda r: next(replies)}) as server:
        client = ChatClient(server.url, "m", 5.0, cooldown_s=0.2)
        with pytest.raises(LLMUnavailable, match="HTTP 503"):
            client.complete(MESSAGES)
        time.sleep(0.3)
        assert client.complete(MESSAGES) == "up"


def test_no_client_without_an_endpoint():
    assert make_chat_client(Settings()) is None


def test_the_client_takes_endpoint_model_and_timeout_from_settings():
    settings = Settings(llm_endpoint="http://h:9/v1", llm_model="qwen3", llm_timeout_s=2.5)
    client = make_chat_client(settings)
    assert (client.url, client.model, client.timeout_s) == (
        "http://h:9/v1/chat/completions",
        "qwen3",
        2.5,
    )


def test_json_values_finds_a_fenced_block_first():
    reply = 'Sure: [1]\n```json\n["a", "b"]\n```'
    assert next(json_values(reply)) == ["a", "b"]


def test_json_values_skips_prose_around_json():
    reply = 'The rewrites are {"queries": ["x"]} and that is all.'
    assert next(json_values(reply)) == {"queries": ["x"]}


def test_json_values_ignores_a_think_block():
    reply = '<think>maybe ["wrong"]</think>["right"]'
    assert next(json_values(reply)) == ["right"]


def test_json_values_finds_nothing_in_prose():
    assert list(json_values("I am sorry, I cannot do that [citation needed].")) == []
