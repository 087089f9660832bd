"""Two per-request costs of the HTTP stack under googleapiclient, removed without changing what it does.

- `http.client` reads every answer's headers with the `email` package as if they were a whole message. A batch
  answer is `Content-Type: multipart/mixed; boundary=<unique>`, so the parser goes looking for the parts of a
  body it was never given and compiles a pattern for that boundary first: 0.35 ms of CPU per batch answer (a
  search sends one), and `re`'s cache never helps because every boundary is new. Reading the same block as
  headers only (`headersonly=True`, the `email` package's own switch) gives the same `HTTPMessage` with the
  same headers in the same order, at a fifth of the cost.
- httplib2 passes every request URI through `iri2uri`, which rebuilds it character by character (a Python call
  per character: ~0.1 ms for a search's `messages.list` URI) to percent-encode non-ASCII ones. An ASCII URI has
  none: it gets the same split, IDNA host and rejoin, without the character loop.

`install()` puts both in place for this process (only those two names, in `http.client` and `httplib2`); it is
idempotent, and leaves a library as it was when its internals are not the ones this module knows. Tests
compare each replacement with the original on the same input (test_fast_paths.py).
"""

from __future__ import annotations

import email.parser
import http.client
import threading
import urllib.parse
from typing import Any

_LOCK = threading.Lock()
_original_iri2uri: Any = None


def parse_headers(fp: Any, _class: type[http.client.HTTPMessage] = http.client.HTTPMessage) -> Any:
    """`http.client.parse_headers`, reading the block as headers only (there is no body in it to look at)."""
    lines = http.client._read_headers(fp)  # type: ignore[attr-defined]  # limits and errors as the stdlib's
    text = b"".join(lines).decode("iso-8859-1")
    return email.parser.Parser(_class=_class).parsestr(text, headersonly=True)


def iri2uri(uri: Any) -> Any:
    """httplib2's `iri2uri`, without its per-character pass when there is no character for it to encode."""
    if isinstance(uri, str) and uri.isascii():
        scheme, authority, path, query, fragment = urllib.parse.urlsplit(uri)
        authority = authority.encode("idna").decode("utf-8")
        return urllib.parse.urlunsplit((scheme, authority, path, query, fragment))
    return _original_iri2uri(uri)


def install() -> bool:
    """Puts `parse_headers` in `http.client` and `iri2uri` in httplib2; True when both are in place."""
    global _original_iri2uri
    import httplib2

    with _LOCK:
        if http.client.parse_headers is not parse_headers and callable(getattr(http.client, "_read_headers", None)):
            http.client.parse_headers = parse_headers  # type: ignore[assignment]
        current = getattr(httplib2, "iri2uri", None)
        if current is not iri2uri and getattr(current, "__module__", "") == "httplib2.iri2uri":
            _original_iri2uri = current
            httplib2.iri2uri = iri2uri
        return http.client.parse_headers is parse_headers and httplib2.iri2uri is iri2uri
