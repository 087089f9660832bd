"""`--demo`: the real server code path against the bundled demo mailbox, served by an in-process Gmail emulator.

Same client, same HTTP, same tools; only the endpoint, the token endpoint and the token file point at loopback.

`--demo --http --auth oauth` (`demo_oauth_env`): the emulator also plays Google's Web client sign-in
(`/o/oauth2/v2/auth`, the token endpoint, the ID token keys), so the whole remote sign-in runs on loopback with no
Google Cloud project. What an operator would configure is written into the demo's temporary folder: the Web
client's JSON with this server's callback registered, the state folder, a freshly generated vault key (loopback
demo only: it dies with the process), and the demo person as the only one allowed to sign in.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from server.runtime.config import Settings
from server.runtime.observability import get_logger

log = get_logger("demo")
DEMO_CHOOSER_PATH = "/oauth/demo/choose-account"  # stands in for Google's account chooser in the oauth demo


def mailbox_clock() -> Callable[[], float]:
    """The demo mailbox's own "now" (an hour after its newest message), running on from there: its dates then
    agree with its text ("see you Thursday", the quoted "On Tue, Nov 17 ... wrote:"), and `newer_than:7d` still
    finds the last week of it."""
    from server.demo import NEWEST_DATE

    start, origin = time.monotonic(), NEWEST_DATE.timestamp() + 3600
    return lambda: origin + (time.monotonic() - start)


@contextmanager
def demo_settings(settings: Settings, scratch: list[Path] | None = None) -> Iterator[Settings]:
    """The settings that point at the demo; `scratch` collects the temporary folder, for a forced exit to remove."""
    from server.demo import DEMO_MAILBOX
    from server.emulator import start_emulator

    # Page tokens signed with a key of the mailbox itself: `More: call again with page_token=...` printed by one
    # run (the terminal client starts a server per command) still works in the next.
    key = hashlib.sha256(b"gmail-mcp demo page tokens\0" + DEMO_MAILBOX.read_bytes()).digest()
    with tempfile.TemporaryDirectory(prefix="gmail-mcp-demo-") as folder:
        if scratch is not None:
            scratch.append(Path(folder))
        with start_emulator(DEMO_MAILBOX, clock=mailbox_clock(), page_token_key=key) as emulator:
            # With write tools enabled, the demo token is granted what they need, as `auth_cli.py --scopes` would be.
            scopes = ["readonly", "compose", "modify"] if settings.write_tools else None
            token_path = emulator.write_token(Path(folder) / "demo-token.json", scopes=scopes)
            log.warning(
                "DEMO MODE: serving the bundled demo mailbox from a local Gmail emulator; no Google account is used",
                extra={"emulator": emulator.url, "mailbox": str(DEMO_MAILBOX)},
            )
            yield settings.with_overrides(
                api_endpoint=emulator.url, token_uri=emulator.token_uri, token_path=token_path
            )


def demo_oauth_env(settings: Settings, public_url: str, folder: Path) -> tuple[dict[str, str], str]:
    """The GMAIL_MCP_* variables of the remote mode for the demo emulator at `settings.api_endpoint`, and the demo
    person's address. Google's account chooser is this server's `DEMO_CHOOSER_PATH` (`oauth_app.py`): it picks
    the demo person and hands on to the emulator's authorization endpoint, which consents for the named person."""
    from cryptography.fernet import Fernet

    from server.emulator.google_oauth import WEB_CLIENT_ID, WEB_CLIENT_SECRET

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
            "auth_uri": origin + DEMO_CHOOSER_PATH,
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
    }, owner


def _control(emulator: str, name: str, payload: dict[str, str]) -> None:
    request = urllib.request.Request(
        f"{emulator}/_emulator/{name}",
        data=json.dumps(payload).encode("utf-8"),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10):
        pass
