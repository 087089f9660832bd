"""HTTP mode's front door in-process (no sockets): configuration parsing, constant-time credential lookup,
Origin and Host rules, the failed-authentication limit with an injected clock, and the concurrency limit."""

from __future__ import annotations

import logging

import anyio
import httpx2
import pytest

from server.protocol.http_guard import FailedAuthLimiter, HttpGuard, find_credential, host_allowed, origin_allowed
from server.runtime.http_config import HttpSettings, check_accounts, load_http_settings, parse_bind, read_token_lines
from server.runtime.observability import JsonFormatter

pytestmark = pytest.mark.anyio
SECRET = "a-long-enough-secret-0123456789"


@pytest.fixture
def anyio_backend():
    return "asyncio"


class Inner:
    """Stands in for the SDK app: records what reached it; POSTs wait until released."""

    def __init__(self) -> None:
        self.seen: list[dict] = []
        self.release = anyio.Event()

    async def __call__(self, scope, receive, send):
        self.seen.append(scope)
        if scope["method"] == "POST" and scope["path"] == "/slow":
            await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"inner"})


def guard(env: dict[str, str], bind: str = "127.0.0.1:8080") -> tuple[HttpGuard, Inner]:
    inner = Inner()
    return HttpGuard(inner, load_http_settings(bind, env), lambda: (b"metrics 1\n", "text/plain")), inner


def client(app: HttpGuard, address: str = "10.0.0.7") -> httpx2.AsyncClient:
    transport = httpx2.ASGITransport(app=app, client=(address, 5555))
    return httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080")


def test_bind_addresses():
    assert parse_bind("8080") == ("127.0.0.1", 8080)
    assert parse_bind("0.0.0.0:9000") == ("0.0.0.0", 9000)
    assert parse_bind("[::1]:0") == ("::1", 0)
    for bad in ("", "host:", "[::1]8080", "99999", "x:y"):
        with pytest.raises(ValueError):
            parse_bind(bad)


def test_tokens_configuration():
    with pytest.raises(ValueError, match="shorter than 16"):
        load_http_settings("8080", {"GMAIL_MCP_HTTP_TOKEN": "short"})
    with pytest.raises(ValueError, match=r"refusing to serve on 0\.0\.0\.0"):
        load_http_settings("0.0.0.0:8080", {})
    with pytest.raises(ValueError, match=r"refusing to serve on 192\.168\.1\.5"):
        load_http_settings("192.168.1.5:8080", {})
    assert load_http_settings("[::1]:8080", {}).loopback and load_http_settings("localhost:1", {}).loopback
    lines = read_token_lines(f"# comment\n\n{SECRET}\n{SECRET}-work work, Personal\n{SECRET}-any *\n", "tokens")
    assert [(c.label, c.accounts) for c in lines] == [
        ("tokens line 3", None),
        ("tokens line 4", frozenset({"work", "personal"})),
        ("tokens line 5", None),
    ]
    settings = load_http_settings("0.0.0.0:8080", {"GMAIL_MCP_HTTP_TOKEN": SECRET})
    assert settings.credentials[0].digest != SECRET.encode() and SECRET not in repr(settings)
    with pytest.raises(ValueError, match="names account\\(s\\) personal with no token; configured accounts: work"):
        check_accounts(HttpSettings("127.0.0.1", 8080, credentials=tuple(lines)), ["work"])


def test_credentials_are_found_by_digest():
    credentials = tuple(read_token_lines(f"{SECRET}\n{SECRET}-work work\n", "f"))
    assert find_credential(SECRET, credentials) is credentials[0]
    assert find_credential(SECRET + "-work", credentials) is credentials[1]
    assert find_credential(SECRET[:-1], credentials) is None and find_credential("", credentials) is None


def test_origins_and_hosts():
    settings = load_http_settings("8080", {"GMAIL_MCP_HTTP_ALLOWED_ORIGINS": "https://app.example.com/"})
    for allowed in ("http://localhost:3000", "https://127.0.0.1", "http://[::1]:6274", "https://APP.example.com"):
        assert origin_allowed(allowed, settings), allowed
    for refused in (
        "http://evil.example",
        "null",
        "http://localhost.evil.example",
        "file://",
        "http://127.0.0.2.nip.io",
    ):
        assert not origin_allowed(refused, settings), refused
    assert host_allowed("localhost:8080", settings) and host_allowed("[::1]:8080", settings)
    assert not host_allowed("evil.example:8080", settings) and not host_allowed("", settings)


def test_failed_authentications_block_a_client_for_the_rest_of_the_window():
    now = [1000.0]
    limiter = FailedAuthLimiter(3, window_s=60, clock=lambda: now[0])
    assert [limiter.fail("a") for _ in range(3)] == [False, False, True]
    assert limiter.blocked_for("a") == 60 and limiter.blocked_for("b") == 0
    now[0] += 59.5
    assert limiter.blocked_for("a") == pytest.approx(0.5)
    now[0] += 1
    assert limiter.blocked_for("a") == 0


async def test_wrong_credentials_get_401_then_429_and_are_logged_without_the_secret(caplog):
    app, inner = guard({"GMAIL_MCP_HTTP_TOKEN": SECRET, "GMAIL_MCP_HTTP_AUTH_FAILURES": "3"})
    caplog.set_level(logging.WARNING, logger="gmail_mcp.http")
    async with client(app) as http:
        wrong = [await http.post("/mcp", headers={"Authorization": f"Bearer {SECRET}x"}) for _ in range(3)]
        blocked = await http.post("/mcp", headers={"Authorization": f"Bearer {SECRET}"})
    async with client(app, "10.0.0.8") as other:
        fine = await other.post("/mcp", headers={"X-API-Key": SECRET})
    assert [answer.status_code for answer in wrong] == [401, 401, 401]
    assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) > 0  # even with the right token
    assert fine.status_code == 200 and fine.text == "inner" and len(inner.seen) == 1
    logged = "\n".join(JsonFormatter().format(record) for record in caplog.records)  # with the extra fields
    assert SECRET not in logged and '"client": "10.0.0.7"' in logged and "client blocked" in logged
    assert logged.count('"reason": "wrong"') == 4  # three failures and the block, each with its reason


async def test_health_and_metrics_rules():
    app, _ = guard({"GMAIL_MCP_HTTP_TOKEN": SECRET, "GMAIL_MCP_HTTP_METRICS": "open"})
    async with client(app) as http:
        assert (await http.get("/healthz")).json() == {"status": "ok"}
        assert (await http.get("/metrics")).text == "metrics 1\n"  # open: no token needed
        app.stop()
        assert (await http.get("/healthz")).status_code == 503
        assert (await http.post("/mcp", headers={"X-API-Key": SECRET})).status_code == 503
    closed, _ = guard({"GMAIL_MCP_HTTP_TOKEN": SECRET, "GMAIL_MCP_HTTP_METRICS": "off"})
    async with client(closed) as http:
        assert (await http.get("/metrics", headers={"X-API-Key": SECRET})).status_code == 404


async def test_posts_beyond_the_concurrency_limit_get_503():
    app, inner = guard({"GMAIL_MCP_HTTP_MAX_CONCURRENT": "1"})
    async with client(app) as http, anyio.create_task_group() as group:
        answers = []

        async def slow() -> None:
            answers.append(await http.post("/slow"))

        group.start_soon(slow)
        while app.in_flight == 0:
            await anyio.sleep(0.01)
        busy = await http.post("/mcp")
        assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
        assert (await http.get("/mcp")).status_code == 200  # streams are not counted
        inner.release.set()
    assert answers[0].status_code == 200 and app.in_flight == 0


async def test_the_credential_reaches_the_app_only_as_a_label_and_its_accounts():
    app, inner = guard({"GMAIL_MCP_HTTP_TOKEN": SECRET})
    async with client(app) as http:
        await http.post("/mcp", headers={"X-API-Key": SECRET})
    (scope,) = inner.seen
    assert scope["user"].access_token.token == "GMAIL_MCP_HTTP_TOKEN" and scope["state"]["gmail_mcp_accounts"] is None
    assert SECRET not in repr(scope["user"].access_token)


async def test_accepted_connections_have_nagle_off():
    """asyncio disables Nagle only on sockets created as TCP (proto IPPROTO_TCP); on a socket made with proto 0
    every response body waited for the client's delayed ACK, ~40 ms per request."""
    import asyncio
    import socket

    from server.protocol.http import bind_socket

    accepted = asyncio.get_running_loop().create_future()

    class Probe(asyncio.Protocol):
        def connection_made(self, transport):
            accepted.set_result(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    listening = bind_socket("127.0.0.1", 0)
    server = await asyncio.get_running_loop().create_server(Probe, sock=listening)
    try:
        _reader, writer = await asyncio.open_connection("127.0.0.1", listening.getsockname()[1])
        assert await asyncio.wait_for(accepted, 5) != 0
        writer.close()
    finally:
        server.close()


async def test_readiness_is_separate_from_liveness():
    app, _ = guard({"GMAIL_MCP_HTTP_TOKEN": SECRET})
    reachable = [True]
    async with client(app) as http:
        assert (await http.get("/readyz")).json() == {"status": "ready"}  # no store: ready while serving
        app.readiness = lambda: reachable[0]  # what --auth oauth sets: the state store answers a ping
        reachable[0] = False
        down = await http.get("/readyz")
        assert down.status_code == 503 and down.json() == {"status": "store_unreachable"}
        assert down.headers["retry-after"] == "5" and (await http.get("/healthz")).status_code == 200
        reachable[0] = True
        assert (await http.get("/readyz")).status_code == 200
        app.stop()
        assert (await http.get("/readyz")).json() == {"status": "stopping"}
