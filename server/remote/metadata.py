"""The discovery documents of the remote mode, as pure functions: what a client fetches before it signs in.

- Protected Resource Metadata (RFC 9728) for the MCP endpoint: `resource` (the URL clients use, the RFC 8707
  resource indicator), the authorization server, the scopes, Bearer in the header only. Served at the path-
  suffixed well-known URL (RFC 9728 3.1: `/.well-known/oauth-protected-resource` inserted between host and path)
  and at the root form, the two places the MCP client tries after `WWW-Authenticate`'s `resource_metadata`.
- Authorization Server Metadata (RFC 8414): authorization code with PKCE S256 only, `iss` in the authorization
  response (RFC 9207: `authorization_response_iss_parameter_supported`), Client ID Metadata Documents
  (`client_id_metadata_document_supported`, the MCP 2025-11-25 and 2026 revisions' preferred registration), dynamic
  registration (RFC 7591) when enabled, revocation (RFC 7009), public clients (`none`: claude.ai requires it when
  a server relies on metadata documents). Served at RFC 8414's well-known URL and at the OpenID Connect discovery
  paths clients also probe (RFC 8414 5; OpenID Connect Discovery 1.0 4); the same document at each, since this
  server issues no ID tokens.
- `www_authenticate` builds the 401/403 challenge (RFC 6750 3, RFC 9728 5.1; `insufficient_scope` with the scope
  needed, the MCP 2025-11-25 incremental consent).

Endpoint paths are fixed here so the routes and the documents cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

AUTHORIZE_PATH = "/authorize"
TOKEN_PATH = "/token"
REGISTER_PATH = "/register"
REVOKE_PATH = "/revoke"
PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
ASM_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"


def _origin_and_path(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.netloc or parts.query or parts.fragment:
        raise ValueError(f"expected an absolute http(s) URL without query or fragment, got {url!r}")
    return f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")


def protected_resource_metadata(
    resource: str, issuer: str, scopes: Iterable[str], *, resource_name: str = "Gmail MCP server"
) -> dict[str, Any]:
    """RFC 9728 2: the document for `resource` (e.g. `https://mail.example.net/mcp`)."""
    _origin_and_path(resource)
    _origin_and_path(issuer)
    return {
        "resource": resource,
        "authorization_servers": [issuer],
        "scopes_supported": list(scopes),
        "bearer_methods_supported": ["header"],
        "resource_name": resource_name,
    }


def protected_resource_metadata_paths(resource: str) -> list[str]:
    """The paths (on the resource's origin) that serve its metadata: the path-suffixed one first (RFC 9728 3.1),
    then the root one (clients fall back to it)."""
    _, path = _origin_and_path(resource)
    return [PRM_WELL_KNOWN + path, PRM_WELL_KNOWN] if path else [PRM_WELL_KNOWN]


def protected_resource_metadata_url(resource: str) -> str:
    """The URL named in `WWW-Authenticate: Bearer resource_metadata=...`."""
    origin, _ = _origin_and_path(resource)
    return origin + protected_resource_metadata_paths(resource)[0]


def authorization_server_metadata(
    issuer: str, scopes: Iterable[str], *, registration: bool = True, service_documentation: str | None = None
) -> dict[str, Any]:
    """RFC 8414 2: the document for `issuer` (an https URL; its endpoints hang below it)."""
    origin, path = _origin_and_path(issuer)
    base = origin + path
    document: dict[str, Any] = {
        "issuer": issuer,
        "authorization_endpoint": base + AUTHORIZE_PATH,
        "token_endpoint": base + TOKEN_PATH,
        "revocation_endpoint": base + REVOKE_PATH,
        "scopes_supported": list(scopes),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        "revocation_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": True,
    }
    if registration:
        document["registration_endpoint"] = base + REGISTER_PATH
    if service_documentation:
        document["service_documentation"] = service_documentation
    return document


def authorization_server_metadata_paths(issuer: str) -> list[str]:
    """Every path (on the issuer's origin) that serves the issuer's metadata: RFC 8414 3.1's, then the OpenID
    Connect discovery forms (path inserted, RFC 8414 5; path appended, OpenID Connect Discovery 1.0 4)."""
    _, path = _origin_and_path(issuer)
    if not path:
        return [ASM_WELL_KNOWN, OIDC_WELL_KNOWN]
    return [ASM_WELL_KNOWN + path, OIDC_WELL_KNOWN + path, path + OIDC_WELL_KNOWN]


def www_authenticate(
    resource: str, *, error: str | None = None, scope: Iterable[str] | None = None, description: str | None = None
) -> str:
    """The `WWW-Authenticate` value for a 401 (no or bad token) or 403 `insufficient_scope` answer."""
    params = [f'resource_metadata="{protected_resource_metadata_url(resource)}"']
    if error:
        params.append(f'error="{_quoted(error)}"')
    if scope is not None:
        params.append(f'scope="{_quoted(" ".join(scope))}"')
    if description:
        params.append(f'error_description="{_quoted(description)}"')
    return "Bearer " + ", ".join(params)


def _quoted(text: str) -> str:
    """RFC 6750 3: the values are quoted strings; these never carry quotes or backslashes, so drop any."""
    return "".join(ch for ch in text if ch not in '"\\' and 0x20 <= ord(ch) < 0x7F)
