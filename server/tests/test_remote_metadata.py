"""The discovery documents (RFC 9728, RFC 8414 and the OpenID discovery paths) are what the official MCP client
expects: parsed with the SDK's own models, found at the URLs its discovery builds, issuer checked its way."""

from __future__ import annotations

import re

import pytest
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    should_use_client_metadata_url,
    validate_metadata_issuer,
)
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata

from server.remote.metadata import (
    authorization_server_metadata,
    authorization_server_metadata_paths,
    protected_resource_metadata,
    protected_resource_metadata_paths,
    protected_resource_metadata_url,
    www_authenticate,
)

SCOPES = ["gmail.read", "gmail.write"]


@pytest.mark.parametrize(
    ("resource", "issuer"),
    [
        ("https://mail.example.net/mcp", "https://mail.example.net"),
        ("https://example.net/gmail/mcp", "https://example.net/gmail"),
        ("http://127.0.0.1:8765/mcp", "http://127.0.0.1:8765"),
    ],
)
def test_the_sdk_client_finds_and_accepts_both_documents(resource: str, issuer: str) -> None:
    origin = re.match(r"^https?://[^/]+", resource).group(0)
    served_prm = {origin + path for path in protected_resource_metadata_paths(resource)}
    assert set(build_protected_resource_metadata_discovery_urls(None, resource)) <= served_prm
    prm = ProtectedResourceMetadata.model_validate(protected_resource_metadata(resource, issuer, SCOPES))
    assert str(prm.resource).rstrip("/") == resource and prm.scopes_supported == SCOPES

    auth_server_url = str(prm.authorization_servers[0])  # as the client holds it (pydantic-normalised)
    served_asm = {origin + path for path in authorization_server_metadata_paths(issuer)}
    assert set(build_oauth_authorization_server_metadata_discovery_urls(auth_server_url, resource)) <= served_asm
    asm = OAuthMetadata.model_validate(authorization_server_metadata(issuer, SCOPES))
    validate_metadata_issuer(asm, auth_server_url)  # raises on a mismatch
    assert should_use_client_metadata_url(asm, "https://vscode.dev/oauth/client-metadata.json")
    assert asm.code_challenge_methods_supported == ["S256"]
    assert asm.authorization_response_iss_parameter_supported is True
    assert "none" in asm.token_endpoint_auth_methods_supported
    assert str(asm.token_endpoint) == issuer + "/token" and str(asm.registration_endpoint) == issuer + "/register"


def test_registration_can_be_left_out() -> None:
    document = authorization_server_metadata("https://mail.example.net", SCOPES, registration=False)
    assert "registration_endpoint" not in document and document["client_id_metadata_document_supported"] is True


def test_the_root_resource_has_one_metadata_path() -> None:
    assert protected_resource_metadata_paths("https://mail.example.net") == ["/.well-known/oauth-protected-resource"]
    assert protected_resource_metadata_url("https://mail.example.net/mcp/") == (
        "https://mail.example.net/.well-known/oauth-protected-resource/mcp"
    )


@pytest.mark.parametrize("bad", ["mail.example.net/mcp", "ftp://h/mcp", "https://h/mcp?x=1", "https://h/mcp#f"])
def test_urls_must_be_plain_absolute_http_urls(bad: str) -> None:
    with pytest.raises(ValueError):
        protected_resource_metadata(bad, "https://h", SCOPES)


def test_challenges_name_the_metadata_and_the_missing_scope() -> None:
    resource = "https://mail.example.net/mcp"
    assert www_authenticate(resource) == (
        'Bearer resource_metadata="https://mail.example.net/.well-known/oauth-protected-resource/mcp"'
    )
    challenge = www_authenticate(
        resource, error="insufficient_scope", scope=["gmail.read", "gmail.write"], description='needs "write"'
    )
    assert 'error="insufficient_scope"' in challenge and 'scope="gmail.read gmail.write"' in challenge
    assert 'error_description="needs write"' in challenge
