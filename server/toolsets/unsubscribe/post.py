"""The RFC 8058 one-click POST, and the guard on where it may go (SSRF).

A `List-Unsubscribe` URL is chosen by whoever sent the mail, so posting to it is posting wherever a stranger
says. The rules (the same as `server/remote/address_guard.py`'s for client-id documents; that module sits in a
higher layer, so the few lines of address judgement are repeated here rather than imported upward):

- https only; a host; no user or password in the URL;
- every address the host resolves to must be a global unicast one (not private, loopback, link-local, multicast,
  unspecified, reserved, shared 100.64/10, documentation; an IPv4 address inside IPv6 judged as itself); a name
  with one bad address among good ones is refused whole;
- the connection goes to the address checked (pinned), with TLS verified for the host name, so a DNS answer that
  changes between check and connect (rebinding) changes nothing;
- exactly `POST` with body `List-Unsubscribe=One-Click`, `Content-Type: application/x-www-form-urlencoded`, no
  cookies, no credentials, no Referer; a redirect is never followed (reported as it is); a short timeout.

`allow_private` (GMAIL_MCP_UNSUBSCRIBE_ALLOW_PRIVATE=1, tests only) lets loopback addresses and plain http through,
nothing else.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from server.content.unsubscribe import ONE_CLICK_BODY

TIMEOUT_S = 10.0
MAX_ANSWER_BYTES = 16_384
Resolver = Callable[[str, int], list[str]]


class RefusedTarget(ValueError):
    """The URL, or where it leads, is not one this server posts to; the message says which rule."""


@dataclass(frozen=True)
class Posted:
    status: int
    location: str | None = None  # a redirect's target, never followed


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour or (address.teredo[1] if address.teredo else None)
        if embedded is not None:
            return embedded
    return address


def is_public(text: str) -> bool:
    address = _address(text)
    return (
        address is not None
        and address.is_global
        and not (address.is_multicast or address.is_reserved or address.is_unspecified)
    )


def is_loopback(text: str) -> bool:
    address = _address(text)
    return address is not None and address.is_loopback


def system_resolver(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError) as error:
        raise RefusedTarget(f"the host {host!r} does not resolve ({error})") from None
    return sorted({str(info[4][0]) for info in infos})


def check_url(url: str, *, allow_private: bool = False) -> tuple[str, str, int, str]:
    """(scheme, host, port, path with query) of a URL one-click may post to; RefusedTarget otherwise. No DNS."""
    parts = urlsplit(url)
    schemes = ("https", "http") if allow_private else ("https",)
    if parts.scheme.lower() not in schemes:
        raise RefusedTarget(f"one-click unsubscribe goes only to https addresses, not {parts.scheme or 'none'!r}")
    if not parts.hostname:
        raise RefusedTarget("the unsubscribe address names no host")
    if parts.username is not None or parts.password is not None:
        raise RefusedTarget("the unsubscribe address carries a user name or password")
    try:
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    except ValueError:
        raise RefusedTarget("the unsubscribe address has an invalid port") from None
    host = parts.hostname
    if _address(host) is not None:
        _judge(host, host, allow_private)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme.lower(), host, port, path


def _judge(host: str, address: str, allow_private: bool) -> None:
    if is_public(address) or (allow_private and is_loopback(address)):
        return
    raise RefusedTarget(
        f"the unsubscribe host {host!r} is at {address}, a private, loopback or link-local address: refused (SSRF)"
    )


def safe_address(host: str, port: int, resolver: Resolver, *, allow_private: bool = False) -> str:
    """The address to connect to: the first of the host's, all of which must be allowed."""
    addresses = resolver(host, port)
    if not addresses:
        raise RefusedTarget(f"the host {host!r} does not resolve")
    for address in addresses:
        _judge(host, address, allow_private)
    return addresses[0]


class _PinnedHTTPS(http.client.HTTPSConnection):
    """HTTPS to a checked address, with SNI and certificate verification for the host name."""

    def __init__(self, host: str, address: str, port: int, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._pinned = address

    def connect(self) -> None:
        sock = socket.create_connection((self._pinned, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


def post_one_click(
    url: str, *, allow_private: bool = False, resolver: Resolver = system_resolver, timeout_s: float = TIMEOUT_S
) -> Posted:
    """One POST of `List-Unsubscribe=One-Click` to `url`; RefusedTarget before any connection when not allowed,
    OSError / http.client.HTTPException when the connection or the answer fails."""
    scheme, host, port, path = check_url(url, allow_private=allow_private)
    address = safe_address(host, port, resolver, allow_private=allow_private)
    connection: http.client.HTTPConnection
    if scheme == "https":
        connection = _PinnedHTTPS(host, address, port, timeout_s)
    else:  # plain http: only with allow_private, and then only to loopback (checked above)
        connection = http.client.HTTPConnection(address, port, timeout=timeout_s)
    default_port = 443 if scheme == "https" else 80
    headers = {
        "Host": host if port == default_port else f"{host}:{port}",
        "Content-Type": "application/x-www-form-urlencoded",
        "User-Agent": "gmail-mcp one-click unsubscribe (RFC 8058)",
        "Accept": "*/*",
    }
    try:
        connection.request("POST", path, body=ONE_CLICK_BODY.encode("ascii"), headers=headers)
        answer = connection.getresponse()
        answer.read(MAX_ANSWER_BYTES)
        location = answer.getheader("Location") if 300 <= answer.status < 400 else None
        return Posted(answer.status, location[:500] if location else None)
    finally:
        connection.close()
