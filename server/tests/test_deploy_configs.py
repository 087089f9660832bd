"""The proxy configurations in `deploy/` keep what the remote mode needs (docs/remote.md, "The TLS proxy"):
every path reaches the server, event streams pass unbuffered and uncompressed, the forwarded headers the server
reads are set, and the upstream is the address the docs tell the server to listen on.

Why each setting: a buffering proxy holds a `text/event-stream` answer until the stream ends (nginx:
`proxy_buffering`; Caddy: `flush_interval -1`, caddyserver.com/docs/caddyfile/directives/reverse_proxy), and
Caddy's `encode` holds events back while it compresses (caddyserver/caddy#6293). Checked by hand as well with
`caddy validate` and `nginx -t`, and by an `initialize` answered as an event stream through each to the demo server.
"""

from __future__ import annotations

import re

from server.runtime.config import PROJECT_ROOT

DEPLOY = PROJECT_ROOT / "deploy"
UPSTREAM = "127.0.0.1:8080"


def directives(path) -> list[str]:
    """The configuration's lines without comments or blank lines, whitespace collapsed."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [" ".join(line.split()) for line in lines if line]


def test_caddy_proxies_every_path_and_flushes_event_streams_at_once():
    lines = directives(DEPLOY / "Caddyfile")
    assert f"reverse_proxy {UPSTREAM} {{" in lines  # no path matcher: the sign-in pages and /.well-known/ too
    assert "flush_interval -1" in lines
    assert not [line for line in lines if line.split()[0] == "encode"]


def test_nginx_proxies_every_path_unbuffered_with_the_forwarded_headers():
    lines = directives(DEPLOY / "nginx.conf")
    assert [line for line in lines if line.startswith("location ")] == ["location / {"]  # every path, one way
    assert f"proxy_pass http://{UPSTREAM};" in lines
    for needed in (
        "proxy_buffering off;",
        "proxy_http_version 1.1;",
        "gzip off;",
        "proxy_set_header Host $host;",
        "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
        "proxy_set_header X-Forwarded-Proto $scheme;",
    ):
        assert needed in lines, needed
    timeout = next(line for line in lines if line.startswith("proxy_read_timeout "))
    assert re.fullmatch(r"proxy_read_timeout (\d+)h;", timeout)  # hours, not nginx's 60 s default


def test_the_docs_start_the_server_where_the_proxies_send_requests():
    remote = (PROJECT_ROOT / "docs" / "remote.md").read_text(encoding="utf-8")
    assert f"--http {UPSTREAM} --auth oauth" in remote
    assert "](../deploy/Caddyfile)" in remote and "](../deploy/nginx.conf)" in remote


def test_every_setting_the_remote_docs_name_is_read_by_the_server():
    sources = "\n".join(
        path.read_text(encoding="utf-8")
        for path in (PROJECT_ROOT / "server").rglob("*.py")
        if "tests" not in path.relative_to(PROJECT_ROOT).parts
    )
    named = set()
    for doc in (PROJECT_ROOT / "docs" / "remote.md", DEPLOY / "Caddyfile", DEPLOY / "nginx.conf"):
        named |= set(re.findall(r"GMAIL_MCP_[A-Z_]*[A-Z]", doc.read_text(encoding="utf-8")))
    assert {"GMAIL_MCP_PUBLIC_URL", "GMAIL_MCP_GOOGLE_CLIENT_FILE", "GMAIL_MCP_ALLOWED_USERS"} <= named
    assert sorted(name for name in named if f'"{name}"' not in sources and f"{name} " not in sources) == []


def test_the_callback_the_docs_give_google_is_the_one_the_server_serves():
    from server.remote.oauth_config import CALLBACK_PATH

    remote = (PROJECT_ROOT / "docs" / "remote.md").read_text(encoding="utf-8")
    assert f"https://mail.example.net{CALLBACK_PATH}" in remote
