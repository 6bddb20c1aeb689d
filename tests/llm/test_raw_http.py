"""Reaching the server over the early call's plain socket (`llm/raw_http.py`): bounded apart from the request's
own timeout, and given up at once when the caller has something else to do. Real sockets throughout."""

from __future__ import annotations

import os
import ssl
import threading
import time

import certifi
import pytest

from coder_agent.prestart import raw_http
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.silent_server import silent_server

BODY = b'{"model": "scripted", "messages": [{"role": "user", "content": "hi"}], "stream": true}'


def tls() -> ssl.SSLContext:
    return ssl.create_default_context(cafile=certifi.where())


@pytest.mark.parametrize("scheme", ["https", "http"])
def test_a_server_that_accepts_and_never_answers_costs_the_connect_timeout_not_the_request_timeout(
    scheme: str,
) -> None:
    with silent_server() as server:
        started = time.monotonic()
        if scheme == "https":  # the handshake never completes
            with pytest.raises(TimeoutError, match=r"did not answer within 0\.5 s"):
                raw_http.post(server.url(scheme) + "/chat/completions", {}, BODY, 30.0, tls(), connect_timeout=0.5)
        else:  # connected and sent: what is left is the reply, which the request's timeout bounds
            response = raw_http.post(server.url(scheme) + "/chat/completions", {}, BODY, 30.0, connect_timeout=0.5)
            response.close()
            assert server.wait_for("request", 5)[0].endswith(BODY)
        elapsed = time.monotonic() - started
    assert elapsed < 5, f"{elapsed:.1f} s"


def test_the_callers_wait_gives_up_at_once_when_it_has_something_else_to_do() -> None:
    """The early stage waits on stdin and on the runtime too: either one ends the handshake's wait."""
    other_read, other_write = os.pipe()
    try:

        def wait(fd: int, for_write: bool, seconds: float) -> bool | None:
            import select

            readable, writable, _ = select.select(
                [other_read] + ([] if for_write else [fd]), [fd] if for_write else [], [], seconds
            )
            if other_read in readable:
                return False
            return True if readable or writable else None

        with silent_server() as server:

            def other_input() -> None:  # comes once the socket is connected: while the handshake waits
                server.wait_for("connection", 10)
                os.write(other_write, b"x")

            threading.Thread(target=other_input, daemon=True).start()
            started = time.monotonic()
            with pytest.raises(raw_http.Interrupted):
                raw_http.post(server.url("https") + "/chat/completions", {}, BODY, 30.0, tls(), wait=wait)
            elapsed = time.monotonic() - started
    finally:
        os.close(other_read)
        os.close(other_write)
    assert elapsed < 5, f"{elapsed:.1f} s"


def test_a_name_is_looked_up_off_the_caller_and_the_reply_is_read_as_ever(srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.text("Hello"))
    url = srv.url.replace("127.0.0.1", "localhost") + "/chat/completions"
    response = raw_http.post(url, {"Content-Type": "application/json"}, BODY, 10.0)
    try:
        while not response.head():
            response.fill_blocking()
        body = bytearray(response.body())
        while not response.done and response.fill_blocking():
            body += response.body()
    finally:
        response.close()
    assert response.status == 200
    assert b"Hello" in body


def test_nobody_listening_is_an_os_error_at_once() -> None:
    with silent_server() as server:
        port = server.port
    with pytest.raises(OSError, match="refused"):
        raw_http.post(f"http://127.0.0.1:{port}/v1/chat/completions", {}, BODY, 30.0)
