"""The official MCP client's OAuth (`mcp.client.auth.OAuthClientProvider`) as the tests and the sign-in bench set it
up: the token storage in memory, and the metadata of a public client (PKCE, no secret, refresh tokens) whose
redirect URI is oauth_browser.py's APP_REDIRECT (never listened on: the browser hands the code to the client)."""

from __future__ import annotations

from typing import Any

from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from server.tests.support.oauth_browser import APP_REDIRECT


class Memory:
    """The client's token storage (`mcp.client.auth.TokenStorage`), in memory; `client` when already registered."""

    def __init__(self, client: OAuthClientInformationFull | None = None) -> None:
        self.tokens: OAuthToken | None = None
        self.client = client

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def public_client(client_name: str, **extra: Any) -> OAuthClientMetadata:
    """A public client's metadata (`token_endpoint_auth_method` none) for the code flow with refresh; `extra`
    adds fields (`scope`)."""
    return OAuthClientMetadata(
        client_name=client_name,
        redirect_uris=[APP_REDIRECT],  # type: ignore[list-item]  # pydantic coerces the URL
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        **extra,
    )
