"""The one JSON-over-HTTP client, against a real local HTTP server: what comes back, and
how each way of failing is reported."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from core.http_client import JSONClient, ServiceError, error_detail, post_json
from tests.support.fake_services import Reply, serving


def answering(reply: Reply):
    return serving({"/api": lambda request: reply})


def failure(url: str, **kw) -> ServiceError:
    with pytest.raises(ServiceError) as info:
        post_json(url, {"q": 1}, **{"timeout_s": 5.0, **kw})
    return info.value


def test_the_json_reply_comes_back_decoded():
    with answering(Reply(body={"data": [1, 2]})) as server:
        assert post_json(server.url + "/api", {"q": 1}, timeout_s=5.0) == {"data": [1, 2]}


def test_the_payload_is_sent_as_a_json_body():
    with answering(Reply(body={})) as server:
        post_json(server.url + "/api", {"input": ["é", 1.5]}, timeout_s=5.0)
    assert server.received[0].body == {"input": ["é", 1.5]}


def test_a_reply_that_is_a_list_is_returned_as_it_is():
    with answering(Reply(body=[{"index": 0, "score": 0.5}])) as server:
        assert post_json(server.url + "/api", {}, timeout_s=5.0) == [{"index": 0, "score": 0.5}]


def test_one_client_serves_many_calls():
    with answering(Reply(body={"ok": True})) as server, JSONClient() as client:
        replies = [client.post(server.url + "/api", {}, timeout_s=5.0) for _ in range(3)]
    assert replies == [{"ok": True}] * 3


def test_an_openai_style_error_names_the_url_status_and_message():
    error = {"error": {"message": "model overloaded", "type": "server_error"}}
    with answering(Reply(500, error)) as server:
        exc = failure(server.url + "/api")
    assert str(exc) == f"{server.url}/api answered HTTP 500: model overloaded"
    assert (exc.kind, exc.status, exc.detail) == ("http", 500, "model overloaded")


def test_a_bare_error_string_is_the_detail():
    with answering(Reply(503, {"error": "loading model"})) as server:
        exc = failure(server.url + "/api")
    assert str(exc).endswith("answered HTTP 503: loading model")
    assert exc.detail == "loading model"


def test_a_plain_text_error_body_is_the_detail():
    with answering(Reply(502, b"  upstream exploded\n")) as server:
        exc = failure(server.url + "/api")
    assert (exc.kind, exc.status, exc.detail) == ("http", 502, "upstream exploded")


def test_an_empty_error_body_falls_back_to_the_reason_phrase():
    with answering(Reply(500, b"")) as server:
        assert failure(server.url + "/api").detail == "Internal Server Error"


def test_a_long_explanation_is_shortened_in_the_message_but_kept_in_the_detail():
    with answering(Reply(400, {"error": "x" * 1000})) as server:
        exc = failure(server.url + "/api")
    assert str(exc).endswith(": " + "x" * 300)
    assert exc.detail == "x" * 1000


def test_a_closed_port_is_unreachable():
    with serving({}) as server:
        url = server.url + "/api"
    exc = failure(url)
    assert exc.kind == "unreachable" and exc.status is None
    assert str(exc).startswith(f"{url} is unreachable: ")


def test_a_connection_closed_before_any_reply_is_dropped():
    """A server that accepts, reads the request and hangs up (a worker killed mid-call)."""
    listener = socket.create_server(("127.0.0.1", 0))

    def hang_up() -> None:
        for _ in range(2):
            conn, _ = listener.accept()
            conn.recv(65536)
            conn.close()

    threading.Thread(target=hang_up, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/api"
    try:
        kinds = [failure(url).kind]
        with JSONClient() as client, pytest.raises(ServiceError) as info:
            client.post(url, {}, timeout_s=5.0)
        kinds.append(info.value.kind)
    finally:
        listener.close()
    assert kinds == ["dropped", "dropped"]


def test_a_url_without_a_scheme_is_unreachable_not_a_crash():
    assert failure("localhost:1/api").kind == "unreachable"


def test_a_server_slower_than_the_timeout_times_out_in_time():
    with answering(Reply(body={}, delay_s=2.0)) as server:
        started = time.monotonic()
        exc = failure(server.url + "/api", timeout_s=0.3)
        assert time.monotonic() - started < 1.5
    assert exc.kind == "timeout"
    assert str(exc) == f"{server.url}/api did not answer within 0.3s"


def test_a_body_trickling_past_the_deadline_times_out():
    """Each byte arrives well within the socket timeout; only the total deadline catches it."""
    with answering(Reply(body={"text": "a long enough reply"}, trickle_s=0.02)) as server:
        started = time.monotonic()
        assert failure(server.url + "/api", timeout_s=0.3).kind == "timeout"
        assert time.monotonic() - started < 1.5


def test_a_reply_that_is_not_json_is_a_bad_response_showing_its_start():
    with answering(Reply(body=b"<html>gateway login</html>")) as server:
        exc = failure(server.url + "/api")
    assert exc.kind == "bad_response"
    assert str(exc) == f"{server.url}/api returned invalid JSON: b'<html>gateway login</html>'"


def test_a_reply_over_the_size_limit_is_a_bad_response():
    with (
        answering(Reply(body={"text": "x" * 2000})) as server,
        JSONClient(max_reply_bytes=1000) as client,
        pytest.raises(ServiceError, match="more than 1000 bytes") as info,
    ):
        client.post(server.url + "/api", {}, timeout_s=5.0)
    assert info.value.kind == "bad_response"


def test_a_redirect_is_reported_not_followed():
    with answering(Reply(301, b"")) as server:
        exc = failure(server.url + "/api")
    assert (exc.kind, exc.status) == ("http", 301)
    assert [r.path for r in server.received] == ["/api"]


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (b'{"error": {"message": "bad model"}}', "bad model"),
        (b'{"error": "bad model"}', "bad model"),
        (b'{"detail": "bad model"}', '{"detail": "bad model"}'),
        (b'["a list"]', '["a list"]'),
        (b"\xff\xfe not utf-8", "\ufffd\ufffd not utf-8"),
        (b"", "Bad Request"),
    ],
)
def test_error_detail_reads_every_shape_services_answer_in(body, detail):
    assert error_detail(body, "Bad Request") == detail
