"""`--demo`: the real server code path against the bundled demo mailbox, served by an in-process Gmail emulator.

Same client, same HTTP, same tools; only the endpoint, the token endpoint and the token file point at loopback.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from server.runtime.config import Settings
from server.runtime.observability import get_logger

log = get_logger("demo")


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
