"""Client ID Metadata Documents: the SSRF guard as pure functions, and the fetch against a local HTTP server that
only the explicit test allowance (`allow_loopback_http`) lets the fetcher reach.

Evidence: draft-ietf-oauth-client-id-metadata-document-02 (3 client id URL rules, 4 and 8.1 the document and its
redirect URIs, 5 no redirects and 200 only, 5.2 caching, 8.6 SSRF, 8.7 response size); RFC 8252 7.3 (loopback
redirect URIs on any port).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from server.remote.address_guard import UnsafeURL, check_client_id_url, is_public_address, safe_addresses
from server.remote.client_metadata import (
    ClientMetadataError,
    ClientMetadataFetcher,
    redirect_uri_allowed,
    validate_document,
)
from server.remote.sqlite_store import SQLiteStore
from server.tests.support.remote_state import Clock
from server.tests.support.tls import self_signed


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "127.0.0.1",
        "127.8.8.8",
        "169.254.169.254",  # the cloud metadata service
        "0.0.0.0",
        "100.64.0.1",  # carrier-grade NAT (shared)
        "192.0.2.7",  # documentation
        "224.0.0.251",
        "239.1.1.1",
        "255.255.255.255",
        "240.0.0.1",
        "::1",
        "::",
        "fe80::1%eth0",
        "fc00::1",
        "fd12:3456::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "2002:0a00:0001::1",  # 6to4 around 10.0.0.1
        "2001:db8::1",
        "not-an-address",
    ],
)
def test_private_and_special_addresses_are_refused(address: str) -> None:
    assert is_public_address(address) is False


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_global_unicast_addresses_are_allowed(address: str) -> None:
    assert is_public_address(address) is True


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        ("http://claude.ai/oauth/client.json", "https"),
        ("https:///client.json", "host"),
        ("https://user:pw@claude.ai/client.json", "password"),
        ("https://claude.ai/client.json#x", "fragment"),
        ("https://claude.ai/", "path"),
        ("https://claude.ai", "path"),
        ("https://claude.ai/a/../client.json", "segments"),
    ],
)
def test_client_id_urls_follow_the_drafts_rules(url: str, rule: str) -> None:
    with pytest.raises(UnsafeURL, match=rule):
        check_client_id_url(url)


def test_a_name_with_any_private_address_is_refused_whole() -> None:
    assert safe_addresses("ok.example", 443, lambda host, port: ["8.8.8.8", "2606:4700::1"]) == [
        "8.8.8.8",
        "2606:4700::1",
    ]
    with pytest.raises(UnsafeURL, match=r"10\.1\.2\.3"):
        safe_addresses("mixed.example", 443, lambda host, port: ["8.8.8.8", "10.1.2.3"])
    with pytest.raises(UnsafeURL, match="does not resolve"):
        safe_addresses("nothing.example", 443, lambda host, port: [])
    with pytest.raises(UnsafeURL):
        safe_addresses("loop.example", 443, lambda host, port: ["127.0.0.1"])
    assert safe_addresses("loop.example", 80, lambda h, p: ["127.0.0.1"], allow_loopback_http=True) == ["127.0.0.1"]


def test_redirect_uris_match_exactly_or_on_any_loopback_port() -> None:
    document = {"redirect_uris": ["https://claude.ai/api/mcp/auth_callback", "http://127.0.0.1/callback"]}
    assert redirect_uri_allowed(document, "https://claude.ai/api/mcp/auth_callback")
    assert redirect_uri_allowed(document, "http://127.0.0.1:53682/callback")
    assert not redirect_uri_allowed(document, "https://claude.ai/api/mcp/auth_callback/evil")
    assert not redirect_uri_allowed(document, "https://claude.ai:444/api/mcp/auth_callback")
    assert not redirect_uri_allowed(document, "http://127.0.0.1:53682/other")
    assert not redirect_uri_allowed(document, "http://localhost:53682/callback")  # another host, even if local
    assert not redirect_uri_allowed(document, "http://evil.example/callback")


# ---- the fetch, against a local server


class DocumentServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), DocumentHandler)
        self.routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.hits: list[str] = []
        self.release = threading.Event()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def serve_document(self, path: str, document: dict[str, Any] | None = None, **headers: str) -> str:
        url = self.base + path
        body = json.dumps({"client_id": url, "redirect_uris": ["https://app.example/cb"]} | (document or {}))
        self.routes[path] = (200, {"Content-Type": "application/json", **headers}, body.encode())
        return url


class DocumentHandler(BaseHTTPRequestHandler):
    server: DocumentServer

    def do_GET(self) -> None:
        self.server.hits.append(self.path)
        if self.path == "/slow":
            self.server.release.wait(10)
            return
        if self.path == "/endless":  # no Content-Length: the body ends when the connection does
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"[" + b"1," * 10_000 + b"1]")
            return
        status, headers, body = self.server.routes.get(self.path.split("?")[0], (404, {}, b"{}"))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[DocumentServer]:
    running = DocumentServer()
    thread = threading.Thread(target=running.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield running
    running.release.set()
    running.shutdown()
    running.server_close()


def fetcher(store: SQLiteStore, **options: Any) -> ClientMetadataFetcher:
    return ClientMetadataFetcher(store, allow_loopback_http=True, **options)


def test_a_document_is_fetched_checked_and_cached(server: DocumentServer, store: SQLiteStore, clock: Clock) -> None:
    url = server.serve_document("/client.json", {"client_name": "VS Code"}, **{"Cache-Control": "max-age=900"})
    assert fetcher(store).fetch(url)["client_name"] == "VS Code"
    assert fetcher(store).fetch(url)["client_name"] == "VS Code"
    assert server.hits == ["/client.json"]  # the second came from the state store
    clock.now += 900
    fetcher(store).fetch(url)
    assert server.hits == ["/client.json", "/client.json"]


def test_cache_lifetimes_are_bounded(server: DocumentServer, store: SQLiteStore, clock: Clock) -> None:
    url = server.serve_document("/nostore.json", **{"Cache-Control": "no-store"})
    fetcher(store, min_cache_s=60).fetch(url)
    clock.now += 59
    fetcher(store, min_cache_s=60).fetch(url)
    assert len(server.hits) == 1
    long = server.serve_document("/year.json", **{"Cache-Control": "public, max-age=31536000"})
    fetcher(store, max_cache_s=3600).fetch(long)
    clock.now += 3600
    fetcher(store, max_cache_s=3600).fetch(long)
    assert server.hits.count("/year.json") == 2


def test_without_the_test_allowance_nothing_local_is_fetched(server: DocumentServer, store: SQLiteStore) -> None:
    url = server.serve_document("/client.json")
    with pytest.raises(ClientMetadataError, match="https"):
        ClientMetadataFetcher(store).fetch(url)
    disguised = "https://metadata.example/client.json"
    for address in ("127.0.0.1", "169.254.169.254", "10.0.0.8", "::1"):
        guarded = ClientMetadataFetcher(store, resolver=lambda host, port, a=address: [a])
        with pytest.raises(ClientMetadataError, match="not a public address"):
            guarded.fetch(disguised)
    assert server.hits == []  # refused before any connection


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"client_id": "https://someone.else/client.json"}, "another client_id"),
        ({"redirect_uris": []}, "redirect_uris"),
        ({"redirect_uris": ["/relative"]}, "redirect_uris"),
        ({"redirect_uris": ["https://app.example/cb", "javascript:alert(document.cookie)"]}, "redirect_uris"),
        ({"redirect_uris": ["data:text/html,<script>alert(1)</script>"]}, "redirect_uris"),
        ({"redirect_uris": "https://app.example/cb"}, "redirect_uris"),
        ({"client_secret": "s3cret"}, "secret"),
        ({"token_endpoint_auth_method": "client_secret_basic"}, "shared-secret"),
    ],
)
def test_documents_that_cannot_stand_for_their_url_are_refused(
    server: DocumentServer, store: SQLiteStore, document: dict[str, Any], message: str
) -> None:
    url = server.serve_document("/bad.json", document)
    with pytest.raises(ClientMetadataError, match=message):
        fetcher(store).fetch(url)
    with pytest.raises(ClientMetadataError, match="another client_id"):
        fetcher(store).fetch(server.serve_document("/other.json") + "?v=2")  # the URL is compared exactly


def test_not_json_or_not_an_object_is_refused() -> None:
    for body in (b"<html>", b"[1, 2]", b"\xff\xfe"):
        with pytest.raises(ClientMetadataError, match="JSON"):
            validate_document("https://app.example/client.json", body)


def test_redirects_and_errors_are_not_followed(server: DocumentServer, store: SQLiteStore) -> None:
    target = server.serve_document("/real.json")
    server.routes["/moved.json"] = (302, {"Location": target}, b"")
    with pytest.raises(ClientMetadataError, match="302"):
        fetcher(store).fetch(server.base + "/moved.json")
    with pytest.raises(ClientMetadataError, match="404"):
        fetcher(store).fetch(server.base + "/missing.json")
    assert "/real.json" not in server.hits


def test_large_documents_are_refused_with_or_without_a_length(server: DocumentServer, store: SQLiteStore) -> None:
    url = server.serve_document("/big.json", {"padding": "x" * 6000})
    with pytest.raises(ClientMetadataError, match="larger than 5120 bytes"):
        fetcher(store).fetch(url)
    with pytest.raises(ClientMetadataError, match="larger than 5120 bytes"):
        fetcher(store).fetch(server.base + "/endless")


def test_a_server_that_does_not_answer_is_given_up_on(server: DocumentServer, store: SQLiteStore) -> None:
    with pytest.raises(ClientMetadataError, match="could not be fetched"):
        fetcher(store, timeout_s=0.2).fetch(server.base + "/slow")


def test_https_connects_to_the_checked_address_and_verifies_the_host_name(
    server: DocumentServer, store: SQLiteStore, tmp_path: Path
) -> None:
    """The name resolves (through the test's resolver) to loopback; TCP goes to that address, TLS checks the
    certificate against the name: the document is fetched, and a certificate for another name is refused."""
    import ssl

    cert, key = self_signed(tmp_path, "cimd.test")
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(cert, key)
    server.socket = server_tls.wrap_socket(server.socket, server_side=True)
    port = server.server_address[1]
    url = f"https://cimd.test:{port}/client.json"
    server.routes["/client.json"] = (
        200,
        {},
        json.dumps({"client_id": url, "redirect_uris": ["https://a/cb"]}).encode(),
    )
    trusting = ssl.create_default_context(cafile=str(cert))
    resolver = lambda host, port: ["127.0.0.1"]  # noqa: E731
    fetched = ClientMetadataFetcher(store, resolver=resolver, allow_loopback_http=True, tls=trusting).fetch(url)
    assert fetched["client_id"] == url
    other = f"https://other.test:{port}/client.json"
    with pytest.raises(ClientMetadataError, match=r"could not be fetched .*(?i:certificate|hostname)"):
        ClientMetadataFetcher(store, resolver=resolver, allow_loopback_http=True, tls=trusting).fetch(other)
