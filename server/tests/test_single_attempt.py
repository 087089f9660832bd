"""A send reaches the server at most once: `SingleAttemptHttp` against raw sockets that misbehave.

Each server counts the requests it receives. Plain httplib2 is run against the same server first, to show the
trap is real (a POST re-sent after the connection closed without an answer); then the single-attempt Http must
deliver exactly one request and say whether the failure came before or after it was written.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import httplib2
import pytest

from server.gmail.single_attempt import (
    RequestMayHaveBeenSent,
    RequestNotSent,
    check_compatible,
    single_attempt_http,
)

BODY = b'{"id": "r1"}'


class RawServer:
    """Accepts connections, reads each request, then does `behaviour`; counts the requests it read."""

    def __init__(self, behaviour: str) -> None:
        self.behaviour = behaviour
        self.requests = 0
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/gmail/v1/users/me/drafts/send"

    def _read_request(self, connection: socket.socket) -> bool:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = connection.recv(65536)
            if not chunk:
                return False
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")),
            0,
        )
        while len(body) < length:
            body += connection.recv(65536)
        return True

    def _serve(self) -> None:
        self.listener.settimeout(0.05)
        while not self.stop.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                continue
            threading.Thread(target=self._handle, args=(connection,), daemon=True).start()

    def _handle(self, connection: socket.socket) -> None:
        with connection:
            while self._read_request(connection):
                self.requests += 1
                if self.behaviour == "close":  # the kept-alive connection closes without an answer
                    connection.shutdown(socket.SHUT_RDWR)
                    return
                if self.behaviour == "reset":
                    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return
                if self.behaviour == "hang":
                    self.stop.wait(5)
                    return
                status = b"503 Service Unavailable" if self.behaviour == "503" else b"200 OK"
                connection.sendall(
                    b"HTTP/1.1 "
                    + status
                    + b"\r\nContent-Type: application/json\r\nContent-Length: "
                    + str(len(BODY)).encode()
                    + b"\r\n\r\n"
                    + BODY
                )

    def close(self) -> None:
        self.stop.set()
        self.listener.close()
        self.thread.join(timeout=2)


@contextmanager
def raw_server(behaviour: str) -> Iterator[RawServer]:
    server = RawServer(behaviour)
    try:
        yield server
    finally:
        server.close()


def post(http: httplib2.Http, url: str) -> tuple[httplib2.Response, bytes]:
    return http.request(url, "POST", body=b'{"id":"r1"}', headers={"content-type": "application/json"})


def test_the_trap_is_real_plain_httplib2_sends_a_post_twice():
    with raw_server("close") as server:
        with pytest.raises(Exception):  # noqa: B017 - whatever it raises, the point is the count below
            post(httplib2.Http(timeout=2), server.url)
        assert server.requests == 2


@pytest.mark.parametrize("behaviour", ["close", "reset"])
def test_a_connection_lost_after_the_request_is_one_request_and_an_unknown_outcome(behaviour):
    with raw_server(behaviour) as server:
        http = single_attempt_http(2)
        with pytest.raises(RequestMayHaveBeenSent):
            post(http, server.url)
        assert server.requests == 1 and http.attempts == 1


def test_a_timeout_is_one_request_and_an_unknown_outcome():
    with raw_server("hang") as server:
        http = single_attempt_http(0.3)
        with pytest.raises(RequestMayHaveBeenSent) as caught:
            post(http, server.url)
        assert isinstance(caught.value.cause, TimeoutError)
        assert server.requests == 1


def test_a_5xx_answer_is_returned_once_not_retried():
    with raw_server("503") as server:
        response, content = post(single_attempt_http(2), server.url)
        assert response.status == 503 and content == BODY and server.requests == 1


def test_a_refused_connection_is_not_sent():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    http = single_attempt_http(2)
    with pytest.raises(RequestNotSent):
        post(http, f"http://127.0.0.1:{port}/x")
    assert http.attempts == 0


def test_success_and_the_kept_connection_are_one_request_each():
    with raw_server("ok") as server:
        http = single_attempt_http(2)
        response, content = post(http, server.url)
        assert response.status == 200 and content == BODY
        response, _ = post(http, server.url)
        assert response.status == 200 and server.requests == 2 and http.attempts == 2


def test_this_httplib2_is_compatible():
    check_compatible()  # the installed httplib2 still routes requests through the overridden method
