"""Starting and stopping an emulator in-process: the handle tests, demo mode and benchmarks hold.

`start_emulator(...)` loads the mailbox, binds 127.0.0.1 on an ephemeral port (or the one asked for) and serves
from a daemon thread; the returned `Emulator` knows its URL and token URI, writes token files, and exposes
the control plane as Python methods so tests need no HTTP calls to steer it.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from .app import EmulatorApp
from .drafts import send_as_entry
from .gmail_api import GmailApi
from .history import DEFAULT_RETAINED_RECORDS
from .http_app import EmulatorHTTPServer
from .listing import MessageIndex
from .mailbox_store import MailStore, load_mailbox
from .payloads import PayloadBuilder
from .tokens import TokenAuthority, write_token_file

HOST = "127.0.0.1"


class Emulator:
    """A running emulator. Use as a context manager, or call `stop()`."""

    def __init__(self, server: EmulatorHTTPServer, app: EmulatorApp) -> None:
        self._server = server
        self.app = app
        port = server.server_address[1]
        self.url = f"http://{HOST}:{port}"
        self.token_uri = self.url + "/token"
        self._thread = threading.Thread(
            # stop() waits up to one poll interval for the loop to notice: tests start and stop hundreds of these
            target=server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name=f"gmail-emulator-{port}",
            daemon=True,
        )
        self._stopped = False

    def _start(self) -> Emulator:
        self._thread.start()
        return self

    @property
    def store(self) -> MailStore:
        """The loaded mailbox (ids, labels, subjects, threads) for tests to pick fixtures from."""
        return self.app.api.store

    def write_token(self, path: str | Path, user: str | None = None, *, scopes: Iterable[str] | None = None) -> Path:
        """Writes an authorized-user token file (mode 0600) this emulator accepts, for the primary mailbox's owner
        or for `user` (the owner of a mailbox added with `mailboxes=`); it records the owner's address. With
        `scopes` (short names such as "readonly", "compose", "modify", or URLs) the token is held to them, as
        Google's would be."""
        owner = user or self.store.email_address
        refresh_token = self.app.tokens.refresh_token_of(owner)
        return write_token_file(path, self.token_uri, refresh_token, account=owner, scopes=scopes)

    def web_client_file(self, path: str | Path, *redirect_uris: str) -> Path:
        """Registers `redirect_uris` with the emulator's Google Web client and writes its client JSON (as Cloud
        Console downloads it, mode 0600) for the sign-in in `google_oauth.py`."""
        for uri in redirect_uris:
            self.app.google.register_redirect_uri(uri)
        target = Path(path)
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(self.app.google.client_file(self.url), handle, indent=2)
        return target

    def add_send_as(
        self, address: str, display_name: str = "", signature: str = "", *, verification: str = "accepted"
    ) -> None:
        """Adds a send-as alias of the primary mailbox's owner (settings.sendAs.list lists it after the primary),
        with its HTML signature; the primary's own address sets the primary entry's name and signature instead.
        `verification="pending"` makes an alias Gmail lists but does not let a From name."""
        drafts = self.app.api.drafts
        if address.strip().lower() == self.store.email_address.lower():
            drafts.primary = {"displayName": display_name, "signature": signature}
            return
        drafts.aliases.append(send_as_entry(address.strip(), display_name, signature, verification))

    def add_contact(self, name: str, address: str) -> None:
        """A saved contact of the primary mailbox's owner (what people.searchContacts finds, once warmed up)."""
        self.app.api.people.saved.append((name, address))

    def mailbox(self, user: str) -> MailStore:
        """The mailbox of `user` (the primary one, or one added with `mailboxes=`)."""
        if user.lower() == self.store.email_address.lower():
            return self.store
        return self.app.mailboxes[user.lower()].store

    # ---- control plane, same operations as /_emulator/...
    def add_fault(
        self,
        *,
        status: int | None = None,
        reason: str | None = None,
        message: str | None = None,
        retry_after: str | int | None = None,
        latency_ms: float = 0,
        hang: bool | float = False,
        reset: bool = False,
        invalid_grant: bool = False,
        invalid_rapt: bool = False,
        method: str | None = None,
        path_regex: str | None = None,
        count: int = 1,
    ) -> dict[str, Any]:
        """Injects a fault for the next `count` matching requests; returns it as JSON-shaped dict."""
        spec: dict[str, Any] = {
            "match": {key: value for key, value in (("method", method), ("path_regex", path_regex)) if value},
            "count": count,
            "status": status,
            "reason": reason,
            "message": message,
            "retry_after": retry_after,
            "latency_ms": latency_ms,
            "hang": hang,
            "reset": reset,
            "invalid_grant": invalid_grant,
            "invalid_rapt": invalid_rapt,
        }
        return self.app.faults.add(spec).as_json()

    def faults(self) -> list[dict[str, Any]]:
        return self.app.faults.live()

    def reset(self) -> None:
        """Clears faults, the request log and the concurrency limit; un-revokes the refresh token."""
        self.app.reset()

    def requests(self, since: int = 0) -> list[dict[str, Any]]:
        """The request log (see `/_emulator/requests`)."""
        return self.app.log.entries(since)

    def set_concurrency_limit(self, limit: int | None) -> None:
        self.app.gate.set_limit(limit)

    def revoke_refresh_tokens(self, user: str | None = None) -> None:
        """Revokes every refresh token, or only the one of `user` (an owner's address)."""
        self.app.tokens.revoke_refresh_tokens(user)

    def expire_access_tokens(self) -> None:
        self.app.tokens.expire_access_tokens()

    def info(self) -> dict[str, Any]:
        return self.app.info()

    # ---- changing the mailbox during a test (each change is in the history, like one made through the API)
    def deliver(self, raw: str | None = None, **fields: Any) -> dict[str, Any]:
        """A message arrives: `raw` RFC 822 text, or `from`, `subject`, `body`, `to`, `in_reply_to` fields;
        `labelIds` (default INBOX, UNREAD), `threadId`. Returns `{id, threadId, labelIds, historyId}`."""
        payload = {**fields, "raw": raw} if raw is not None else dict(fields)
        return self.app.api.writes.deliver(payload, self.store.email_address)

    def modify(self, message_id: str, *, add: list[str] | None = None, remove: list[str] | None = None) -> None:
        """What a change made in another client looks like: labels added/removed (read = remove UNREAD)."""
        self.app.api.changes.modify(message_id, add=add or (), remove=remove or ())

    def delete(self, message_id: str) -> None:
        self.app.api.changes.delete(message_id)

    def expire_history(self) -> None:
        """Forgets the mailbox's history: a start id from before now answers 404 in history.list."""
        self.app.api.changes.expire_history()

    # ---- lifecycle
    def stop(self) -> None:
        """Stops serving, interrupts hangs and latencies, and closes kept-alive connections. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        self.app.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._server.close_connections()
        self._thread.join(timeout=5)

    def __enter__(self) -> Emulator:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"Emulator({self.url!r}, messages={len(self.store.messages)})"


def start_emulator(
    mailbox_path: str | Path,
    *,
    port: int = 0,
    latency_ms: float = 0,
    body_charset: str = "utf8",
    header_values: str = "decoded",
    rebase_dates: bool = False,
    token_ttl_s: float = 3600,
    email: str | None = None,
    mailboxes: Mapping[str, str | Path] | None = None,
    page_token_key: bytes | None = None,
    history_limit: int = DEFAULT_RETAINED_RECORDS,
    clock: Callable[[], float] | None = None,
) -> Emulator:
    """Loads the mailbox and serves it on 127.0.0.1 from a background thread; returns once it accepts.

    `mailboxes` adds further mailboxes, `{owner address: path}`, each reached only by its owner's tokens
    (`write_token(path, user=owner)`), as several Google accounts would be.
    Page tokens are signed with a fresh random key unless `page_token_key` is given: demo mode derives one from the
    mailbox, so a page token printed by one run is still good in the next (real Gmail tokens are opaque too).
    `history_limit`: history records retained (in each mailbox); a start id older than them answers 404 in
    history.list. `clock` (epoch seconds) is the mailbox's "now" for `newer_than:` and for new mail; demo mode
    keeps the mailbox's own dates and sets the clock to them instead of rebasing.
    `body_charset` / `header_values`: text bodies converted to UTF-8 ("utf8") or as sent
    ("declared"); header values decoded as Gmail serves them ("decoded") or as written ("raw").
    """

    def mailbox_api(path: str | Path, owner: str | None) -> GmailApi:
        store = load_mailbox(path, rebase_dates=rebase_dates, email_address=owner)
        index = MessageIndex(store, key=page_token_key)
        timing = {"clock": clock} if clock is not None else {}
        builder = PayloadBuilder(body_charset, header_values=header_values)
        return GmailApi(store, builder, index, history_limit=history_limit, **timing)

    app = EmulatorApp(mailbox_api(mailbox_path, email), TokenAuthority(ttl_s=token_ttl_s), latency_ms=latency_ms)
    for owner, path in (mailboxes or {}).items():
        app.add_mailbox(mailbox_api(path, owner))
    server = EmulatorHTTPServer((HOST, port), app)
    return Emulator(server, app)._start()
