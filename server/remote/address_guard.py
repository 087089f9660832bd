"""Where the server may fetch from: the SSRF guard for Client ID Metadata Documents (and any URL a client names).

A client id that is a URL makes this server fetch whatever the client chose; without a guard that reaches the
cloud metadata service, the admin port on localhost, or anything else on the private network (CIMD draft -02,
8.6 "Server Side Request Forgery"). Rules, all as pure functions:

- the URL: https only, a host, a path other than `/`, no user or password, no fragment, no `.`/`..` segments
  (CIMD draft -02, 3);
- the addresses: every address the host resolves to must be a global unicast one: not private, loopback,
  link-local, multicast, unspecified, reserved, shared (100.64/10), documentation or benchmarking ranges, and an
  IPv4 address hidden in IPv6 (mapped, 6to4, Teredo) is judged as the IPv4 address. The fetch then connects to an
  address checked here, so a DNS answer that changes between check and connect (rebinding) changes nothing.

Tests get one explicit allowance, `allow_loopback_http`, which lets http and loopback through: nothing else does.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from urllib.parse import SplitResult, urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]


class UnsafeURL(ValueError):
    """The URL or its addresses are not ones this server fetches from; the message says which rule."""


def check_client_id_url(url: str, *, allow_loopback_http: bool = False) -> SplitResult:
    """The URL split, if it may be a client id document's URL; raises UnsafeURL otherwise."""
    parts = urlsplit(url)
    allowed_schemes = ("https", "http") if allow_loopback_http else ("https",)
    if parts.scheme not in allowed_schemes:
        raise UnsafeURL(f"a client id URL must use https, not {parts.scheme or 'no scheme'!r}")
    if not parts.hostname:
        raise UnsafeURL("a client id URL must name a host")
    if parts.username is not None or parts.password is not None:
        raise UnsafeURL("a client id URL must not carry a user name or password")
    if parts.fragment or url.endswith("#"):
        raise UnsafeURL("a client id URL must not have a fragment")
    if parts.path in ("", "/"):
        raise UnsafeURL("a client id URL must have a path")
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        raise UnsafeURL("a client id URL must not contain . or .. path segments")
    return parts


def embedded_ipv4(address: Address) -> Address:
    """The IPv4 address an IPv6 one carries (IPv4-mapped, 6to4, Teredo's client), else the address itself."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address.sixtofour is not None:
            return address.sixtofour
        if address.teredo is not None:
            return address.teredo[1]
    return address


def is_public_address(text: str) -> bool:
    """Whether an address (text, IPv4 or IPv6, an IPv6 zone allowed) is one the server may connect to."""
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return False
    candidate = embedded_ipv4(address)  # a wrapped IPv4 address is judged as itself
    return not (not candidate.is_global or candidate.is_multicast or candidate.is_reserved or candidate.is_unspecified)


def is_loopback_address(text: str) -> bool:
    try:
        return embedded_ipv4(ipaddress.ip_address(text.split("%", 1)[0])).is_loopback
    except ValueError:
        return False


def system_resolver(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (TCP), as text; raises UnsafeURL when it resolves to nothing."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise UnsafeURL(f"the host {host!r} does not resolve ({error})") from None
    return sorted({str(info[4][0]) for info in infos})


def safe_addresses(host: str, port: int, resolver: Resolver, *, allow_loopback_http: bool = False) -> list[str]:
    """The addresses to connect to: all of the host's, each allowed; raises UnsafeURL if any is not (a name with
    one private address among public ones is refused whole: the connection could land on either)."""
    addresses = resolver(host, port)
    if not addresses:
        raise UnsafeURL(f"the host {host!r} does not resolve")
    for address in addresses:
        if is_public_address(address) or (allow_loopback_http and is_loopback_address(address)):
            continue
        raise UnsafeURL(f"the host {host!r} resolves to {address}, which is not a public address")
    return addresses
