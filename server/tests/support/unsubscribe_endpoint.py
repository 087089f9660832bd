"""A loopback HTTP endpoint that records every request it gets: where one-click unsubscribe POSTs land in tests.

`unsubscribe_mail(...)` writes a newsletter with the unsubscribe headers a test needs: `List-Unsubscribe`,
optionally `List-Unsubscribe-Post`, a `DKIM-Signature` whose `h=` is chosen, and Gmail's
`Authentication-Results: mx.google.com; dkim=<verdict> header.i=@<domain> header.s=s1 header.b=<first 8>`
(the shape Gmail writes: RFC 8601, as in the recorded messages of `security/authentication.py`'s tests).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SIGNATURE = "AbCdEfGh1234567890signature"


@dataclass
class Endpoint:
    url: str
    port: int
    requests: list[dict[str, Any]] = field(default_factory=list)


@contextmanager
def unsubscribe_endpoint(status: int = 200) -> Iterator[Endpoint]:
    endpoint = Endpoint("", 0)

    class Handler(BaseHTTPRequestHandler):
        def _record(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            endpoint.requests.append(
                {"method": self.command, "path": self.path, "headers": dict(self.headers.items()), "body": body}
            )
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = _record
        do_GET = _record

        def log_message(self, *_args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    endpoint.port = server.server_address[1]
    endpoint.url = f"http://127.0.0.1:{endpoint.port}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        server.shutdown()
        server.server_close()


def unsubscribe_mail(
    *,
    domain: str,
    subject: str,
    unsubscribe: str,
    post: bool = True,
    dkim: str = "pass",
    covered: str = "From:To:Subject:Date:List-Unsubscribe:List-Unsubscribe-Post",
) -> bytes:
    lines = [
        f"Authentication-Results: mx.google.com;\r\n       dkim={dkim} header.i=@{domain} header.s=s1 "
        f"header.b={SIGNATURE[:8]};\r\n       spf=pass (google.com: domain of news@{domain}) "
        f"smtp.mailfrom=news@{domain}",
        f"DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d={domain}; s=s1;\r\n        h={covered};\r\n"
        f"        bh=abc=; b={SIGNATURE}",
        f"From: News <news@{domain}>",
        "To: me@example.com",
        f"Subject: {subject}",
        "Date: Mon, 02 Nov 2026 10:00:00 +0000",
        f"Message-ID: <{subject.replace(' ', '-')}@{domain}>",
        f"List-Unsubscribe: {unsubscribe}",
        *(["List-Unsubscribe-Post: List-Unsubscribe=One-Click"] if post else []),
        "X-Gmail-Labels: Inbox,Category Promotions",
        "Content-Type: text/plain; charset=utf-8",
        "",
        "This week's news.",
        "",
    ]
    return "\r\n".join(lines).encode()
