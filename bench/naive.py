"""The baseline the server is measured against: messages.list, then one messages.get per result, in sequence.

It is what a straightforward Gmail MCP server does (several public ones do exactly this), written with the same
google-api-python-client stack and the same keep-alive connection, so the only difference is the strategy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

HEADERS = ["From", "Subject", "Date"]


def naive_service(endpoint: str, token_uri: str, token_path: Path) -> Any:
    import httplib2
    from google.oauth2.credentials import Credentials
    from google_auth_httplib2 import AuthorizedHttp
    from googleapiclient.discovery import build

    credentials = Credentials.from_authorized_user_file(str(token_path)).with_token_uri(token_uri)
    http = AuthorizedHttp(credentials, http=httplib2.Http(timeout=30))
    return build("gmail", "v1", http=http, client_options={"api_endpoint": endpoint}, static_discovery=True)


def naive_search(service: Any, query: str, k: int) -> list[dict[str, Any]]:
    """List, then K sequential metadata gets: K + 1 round trips."""
    messages = service.users().messages()
    listing = messages.list(userId="me", q=query, maxResults=k).execute()
    return [
        messages.get(userId="me", id=ref["id"], format="metadata", metadataHeaders=HEADERS).execute()
        for ref in (listing.get("messages") or [])[:k]
    ]
