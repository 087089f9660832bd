"""The HTTP front end: a threading HTTP/1.1 server tuned to behave like a real one under benchmarks.

The stdlib defaults would make numbers measured through the emulator lie: a listen backlog of 5 drops
connections when a client opens ten at once (~1 s SYN retry stalls), Nagle plus delayed ACKs add ~40 ms per
request on kept-alive connections, and HTTP/1.0 reconnects every time. Hence a backlog of 128, TCP_NODELAY on
every accepted socket, keep-alive, and an exact Content-Length on every answer.

Nothing here writes to stdout: the MCP server embeds the emulator in demo mode, and its stdout is the
protocol channel. Request lines go to the `server.emulator` logger at DEBUG level as JSON.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import socketserver
import struct
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from .app import AbortConnection, EmulatorApp, Exchange, Response, error_response, json_response
from .errors import ApiError

LOG = logging.getLogger("server.emulator")
CONTROL_PREFIX = "/_emulator/"


class EmulatorHTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer with a deep backlog, TCP_NODELAY, and connections it can close on stop."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], app: EmulatorApp) -> None:
        self.app = app
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(address, EmulatorRequestHandler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls getfqdn(), a reverse DNS lookup that can stall start-up for seconds.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def get_request(self) -> tuple[socket.socket, Any]:
        connection, address = super().get_request()
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self._open_lock:
            self._open.add(connection)
            self.app.connections_accepted += 1
        return connection, address

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Ends kept-alive connections so their handler threads stop serving after the server does."""
        with self._open_lock:
            connections = list(self._open)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # the client went away: routine, not an error
            LOG.debug("connection from %s closed by the client", client_address)
            return
        LOG.exception("unhandled error serving %s", client_address)


class EmulatorRequestHandler(BaseHTTPRequestHandler):
    """Reads one request, hands it to the app, writes the answer (or drops the connection on purpose)."""

    protocol_version = "HTTP/1.1"
    server: EmulatorHTTPServer

    def version_string(self) -> str:
        return "gmail-emulator"

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        app = self.server.app
        target = urlsplit(self.path)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            self._send(json_response(411, {"error": "chunked bodies are not supported; send Content-Length"}))
            self.close_connection = True
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if target.path.startswith(CONTROL_PREFIX):
            self._send(app.control(self.command, target.path, target.query, body))
            return
        exchange = Exchange(
            method=self.command,
            path=target.path,
            query=target.query,
            headers={name.lower(): value for name, value in self.headers.items()},
            body=body,
            connection=self.connection,
        )
        entry = app.log.start(self.command, target.path, target.query)
        try:
            response = app.serve(exchange, entry)
        except AbortConnection as abort:
            self._abort(reset=abort.reset)
            app.log.finish(entry, None)
            return
        except Exception:  # a bug in the emulator: answer like Google's front end would, and say so
            LOG.exception("emulator failed on %s %s", self.command, self.path)
            response = error_response(ApiError(500))
        # Logged before sending, so a client that has its answer also finds the finished entry.
        app.log.finish(entry, response.status)
        LOG.debug(json.dumps({"method": self.command, "path": target.path, "status": response.status}))
        self._send(response)

    def _send(self, response: Response) -> None:
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(response.body)

    def _abort(self, *, reset: bool) -> None:
        """Drops the connection without an answer; with reset, SO_LINGER 0 makes close() send an RST."""
        self.close_connection = True
        try:
            if reset:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.rfile.close()
            self.connection.close()
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        LOG.debug("http: " + format, *args)
