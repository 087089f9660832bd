"""`--demo --http --auth oauth`: the whole remote sign-in on loopback, the demo's Gmail emulator standing in for Google.

The emulator already serves the demo mailbox (`demo_mode.py`); it also plays Google's Web client sign-in
(`/o/oauth2/v2/auth` with auto-consent for the address the sign-in names, the token endpoint, the ID token keys).
This writes what an operator would configure, into the demo's temporary folder: the Web client's JSON with this
server's callback registered, the state folder, a freshly generated vault key (loopback demo only: it dies with the
process), and the demo person as the only one allowed to sign in. No Google Cloud project is involved.
"""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

from server.runtime.config import Settings


def demo_oauth_env(settings: Settings, public_url: str, folder: Path) -> dict[str, str]:
    """The GMAIL_MCP_* variables of the remote mode for the demo emulator at `settings.api_endpoint`."""
    from cryptography.fernet import Fernet

    from server.emulator.google_oauth import AUTH_PATH, WEB_CLIENT_ID, WEB_CLIENT_SECRET

    emulator = settings.endpoint
    origin = public_url.rsplit("/", 1)[0]
    callback = origin + "/oauth/google/callback"
    _control(emulator, "oauth/redirect-uris", {"uri": callback})
    with urllib.request.urlopen(emulator + "/_emulator/info", timeout=10) as answer:
        owner = json.loads(answer.read())["email"]
    client = {
        "web": {
            "client_id": WEB_CLIENT_ID,
            "client_secret": WEB_CLIENT_SECRET,
            "auth_uri": emulator + AUTH_PATH,
            "token_uri": emulator + "/token",
            "redirect_uris": [callback],
        }
    }
    client_file = folder / "demo-web-client.json"
    descriptor = os.open(client_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(client, handle)
    return {
        "GMAIL_MCP_PUBLIC_URL": public_url,
        "GMAIL_MCP_GOOGLE_CLIENT_FILE": str(client_file),
        "GMAIL_MCP_ALLOWED_USERS": os.environ.get("GMAIL_MCP_ALLOWED_USERS", "").strip() or owner,
        "GMAIL_MCP_STATE_DIR": str(folder / "remote-state"),
        "GMAIL_MCP_TOKEN_KEY": Fernet.generate_key().decode("ascii"),
    }


def _control(emulator: str, name: str, payload: dict[str, str]) -> None:
    request = urllib.request.Request(
        f"{emulator}/_emulator/{name}",
        data=json.dumps(payload).encode("utf-8"),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10):
        pass
