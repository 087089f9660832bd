"""Client ID Metadata Documents (CIMD): fetch, check and cache the document a URL-shaped `client_id` names.

The MCP authorization spec's preferred client registration (2025-11-25: recommended; 2026-07-28: SHOULD); the rules
follow draft-ietf-oauth-client-id-metadata-document-02:
- the fetch (5): GET the client id URL through the SSRF guard (`address_guard.py`: https, public addresses only,
  connected to the checked address), no redirects followed and nothing but 200 accepted, `max_bytes` at most
  (8.7 suggests 5 KB) within `timeout_s` per socket operation and `deadline_s` in all;
- the document (4, 8.1): a JSON object whose `client_id` is exactly the URL, with `redirect_uris`; no shared
  secret (`client_secret`, `client_secret_expires_at`, `client_secret_*` authentication methods are refused);
- caching (5.2): kept in the state store for the HTTP cache lifetime (`Cache-Control: max-age`), bounded to
  [`min_cache_s`, `max_cache_s`]; `no-store` or `no-cache` keeps it for the minimum only.

`redirect_uri_allowed` matches a requested redirect URI against the document: exactly, or for a loopback IP
literal with any port (RFC 8252 7.3; OAuth 2.1 8.4.2: native clients pick a free port at run time).
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import ssl
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from .address_guard import Resolver, UnsafeURL, check_client_id_url, safe_addresses, system_resolver
from .store import CLIENT, StateStore

FORBIDDEN_FIELDS = ("client_secret", "client_secret_expires_at")
SHARED_SECRET_METHODS = ("client_secret_post", "client_secret_basic", "client_secret_jwt")
LOOPBACK_HOSTS = ("127.0.0.1", "[::1]", "localhost")
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)\"?\s*(?:,|$)", re.IGNORECASE)


class ClientMetadataError(Exception):
    """The client id's document cannot be used; the message is safe to show the person signing in."""


class ClientMetadataFetcher:
    """Fetches, validates and caches client id documents. `allow_loopback_http` is for tests only."""

    def __init__(
        self,
        store: StateStore,
        *,
        resolver: Resolver = system_resolver,
        max_bytes: int = 5 * 1024,
        timeout_s: float = 5.0,
        deadline_s: float = 10.0,
        min_cache_s: float = 300.0,
        max_cache_s: float = 24 * 3600.0,
        allow_loopback_http: bool = False,
        tls: ssl.SSLContext | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.resolver = resolver
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s
        self.deadline_s = deadline_s
        self.min_cache_s = min_cache_s
        self.max_cache_s = max_cache_s
        self.allow_loopback_http = allow_loopback_http
        self.tls = tls or ssl.create_default_context()
        self._monotonic = monotonic

    def fetch(self, client_id: str) -> dict[str, Any]:
        """The checked document for `client_id` (from the cache while it is fresh); raises ClientMetadataError."""
        cached = self.store.get(CLIENT, _cache_key(client_id))
        if cached is not None:
            return dict(cached["document"])
        try:
            body, max_age = self._download(client_id)
        except UnsafeURL as error:
            raise ClientMetadataError(f"The client id {client_id} cannot be fetched: {error}.") from None
        document = validate_document(client_id, body)
        ttl = min(max(max_age, self.min_cache_s), self.max_cache_s)
        self.store.put(CLIENT, _cache_key(client_id), {"document": document}, ttl)
        return document

    def _download(self, url: str) -> tuple[bytes, float]:
        parts = check_client_id_url(url, allow_loopback_http=self.allow_loopback_http)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        addresses = safe_addresses(host, port, self.resolver, allow_loopback_http=self.allow_loopback_http)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        if parts.scheme == "https":
            connection: http.client.HTTPConnection = _PinnedHTTPS(host, port, addresses[0], self.timeout_s, self.tls)
        else:
            connection = _PinnedHTTP(host, port, addresses[0], self.timeout_s)
        started = self._monotonic()
        try:
            connection.request("GET", target, headers={"Accept": "application/json", "User-Agent": "gmail-mcp"})
            response = connection.getresponse()
            if response.status != 200:
                raise ClientMetadataError(
                    f"The client id {url} answered HTTP {response.status}; a metadata document must be served "
                    "directly with 200 (redirects are not followed)."
                )
            declared = response.getheader("Content-Length")
            if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
                raise ClientMetadataError(f"The client id document at {url} is larger than {self.max_bytes} bytes.")
            body = b""
            while len(body) <= self.max_bytes:
                if self._monotonic() - started > self.deadline_s:
                    raise ClientMetadataError(f"The client id document at {url} took too long to arrive.")
                chunk = response.read1(self.max_bytes + 1 - len(body))
                if not chunk:
                    break
                body += chunk
            if len(body) > self.max_bytes:
                raise ClientMetadataError(f"The client id document at {url} is larger than {self.max_bytes} bytes.")
            return body, _max_age(response.getheader("Cache-Control") or "")
        except (OSError, http.client.HTTPException) as error:
            raise ClientMetadataError(f"The client id document at {url} could not be fetched ({error}).") from None
        finally:
            connection.close()


class _PinnedHTTP(http.client.HTTPConnection):
    """Connects to an address the guard checked, whatever the name resolves to by now (no DNS rebinding)."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.pinned = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.pinned, self.port), self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    """The https twin: TCP to the checked address, TLS with SNI and certificate checks for the host name."""

    def __init__(self, host: str, port: int, address: str, timeout: float, tls: ssl.SSLContext) -> None:
        super().__init__(host, port, timeout=timeout, context=tls)
        self.pinned = address
        self.tls = tls

    def connect(self) -> None:
        raw = socket.create_connection((self.pinned, self.port), self.timeout)
        self.sock = self.tls.wrap_socket(raw, server_hostname=self.host)


def validate_document(client_id: str, body: bytes) -> dict[str, Any]:
    """The document as a dict if it may stand for `client_id`; raises ClientMetadataError saying why not."""
    try:
        document = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ClientMetadataError(f"The client id document at {client_id} is not JSON.") from None
    if not isinstance(document, dict):
        raise ClientMetadataError(f"The client id document at {client_id} is not a JSON object.")
    if document.get("client_id") != client_id:
        raise ClientMetadataError(f"The document at {client_id} names another client_id; it must name its own URL.")
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(uri, str) and _absolute(uri) for uri in uris):
        raise ClientMetadataError(f"The client id document at {client_id} lists no valid redirect_uris.")
    if any(name in document for name in FORBIDDEN_FIELDS):
        raise ClientMetadataError(f"The client id document at {client_id} carries a client secret; it must not.")
    if document.get("token_endpoint_auth_method") in SHARED_SECRET_METHODS:
        raise ClientMetadataError(
            f"The client id document at {client_id} asks for a shared-secret authentication method; a metadata "
            "document client authenticates with none or private_key_jwt."
        )
    return document


def redirect_uri_allowed(document: dict[str, Any], redirect_uri: str) -> bool:
    """Whether `redirect_uri` is one of the document's (exactly, or a loopback one on another port)."""
    registered = [uri for uri in document.get("redirect_uris", []) if isinstance(uri, str)]
    if redirect_uri in registered:
        return True
    asked = urlsplit(redirect_uri)
    if asked.scheme != "http" or asked.hostname is None or _host(asked) not in LOOPBACK_HOSTS:
        return False
    for uri in registered:
        known = urlsplit(uri)
        same = (known.scheme, _host(known), known.path, known.query) == ("http", _host(asked), asked.path, asked.query)
        if same:
            return True
    return False


def _host(parts: Any) -> str:
    host = parts.hostname or ""
    return f"[{host}]" if ":" in host else host


def _absolute(uri: str) -> bool:
    parts = urlsplit(uri)
    if parts.scheme in SCRIPT_SCHEMES:  # a browser would run or render it: never a callback
        return False
    return bool(parts.scheme) and not parts.fragment and (bool(parts.netloc) or parts.scheme not in ("http", "https"))


SCRIPT_SCHEMES = frozenset({"javascript", "data", "vbscript", "file", "blob", "about"})


def _max_age(cache_control: str) -> float:
    lowered = cache_control.lower()
    if "no-store" in lowered or "no-cache" in lowered:
        return 0.0
    match = _MAX_AGE.search(cache_control)
    return float(match.group(1)) if match else 3600.0


def _cache_key(client_id: str) -> str:
    return "cimd " + client_id
