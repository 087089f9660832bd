"""A local Gmail API emulator: the real google-api-python-client talks to it over loopback HTTP.

It serves a mailbox (a directory of .eml / .mbox files, or a Google Takeout export) through the Gmail v1 REST
surface (messages list/get, attachments, threads, labels, profile, history; insert, import, modify,
batchModify, delete, each recorded in the mailbox's history; settings.filters, `filters.py`), the People API
searches answered from the mailbox's correspondents (`people.py`: other contacts, saved contacts added with
`add_contact`, the directory), batch requests, the OAuth refresh grant and Google's
sign-in for a Web client (`google_oauth.py`: authorization endpoint, code grant with PKCE, ID tokens, userinfo,
revocation; one Google user per mailbox owner), with a control plane for fault injection, a request log, and
changes to the mailbox during a test. It is the test backbone for the project (nobody can touch a real inbox
from CI) and the engine of demo mode.

In-process::

    with start_emulator("mailbox/") as emulator:
        token_file = emulator.write_token(tmp / "token.json")
        # GMAIL_API_ENDPOINT=emulator.url, GMAIL_TOKEN_URI=emulator.token_uri, GMAIL_TOKEN_PATH=token_file

Several mailboxes (several Google accounts): `start_emulator(path, mailboxes={"ada@work.example": path2})`;
`write_token(file, user="ada@work.example")` writes that owner's token, and each token reaches its owner's
mailbox only (`users/me` is the token's owner).

Command line: `python -m server.emulator --mailbox PATH` prints its base URL on one stdout line.

Control plane (JSON in and out; never under Gmail's paths; the same operations are methods on `Emulator`):

    POST /_emulator/faults             {"match": {"method"?, "path_regex"?}, "count"?: 1, "status"?, "reason"?,
                                        "message"?, "retry_after"?, "latency_ms"?, "hang"?: true | seconds,
                                        "reset"?: true, "invalid_grant"?: true}  -> {"fault": {...}}
    GET  /_emulator/faults             -> {"faults": [...]}           (live faults with "remaining")
    GET  /_emulator/requests?since=N   -> {"requests": [{"seq", "method", "path", "query", "status",
                                           "batch_parts", "parts": [{"method", "path", "status"}], "fault",
                                           "started_at", "duration_ms"}]}
    POST /_emulator/concurrency-limit  {"limit": N | null}  -> {"limit": N | null}
    POST /_emulator/reset | /revoke | /expire-tokens  -> {"ok": true}   (reset keeps the mailbox as it is;
                                                                          /revoke {"user": address} revokes one
                                                                          owner's refresh token only)
    POST /_emulator/deliver            {"raw": "<RFC 822>"} | {"from", "subject"?, "body"?, "to"?, "in_reply_to"?}
                                       + "labelIds"? (default INBOX, UNREAD), "threadId"?
                                       -> {"message": {"id", "threadId", "labelIds", "historyId"}}
    POST /_emulator/expire-history     -> {"ok": true}   (older start ids now answer 404 in history.list)
    POST /_emulator/oauth/redirect-uris {"uri": URL}  -> {"ok": true}   (registered with the Google Web client)
    POST /_emulator/oauth/decline      {"user": address}  -> {"ok": true}   (that person's next sign-in: denied)
    GET  /_emulator/info               -> {"email", "messages", "threads", "history_id", "concurrency_limit",
                                           "in_flight", "peak_in_flight", "connections_accepted"}

Standard library only, but for signing ID tokens (PyJWT on `cryptography`).
"""

from .errors import ApiError
from .faults import Fault
from .mailbox_store import MailStore, StoredMessage, load_mailbox
from .runner import Emulator, start_emulator
from .tokens import CLIENT_ID, CLIENT_SECRET, READONLY_SCOPE, REFRESH_TOKEN

__all__ = [
    "CLIENT_ID",
    "CLIENT_SECRET",
    "READONLY_SCOPE",
    "REFRESH_TOKEN",
    "ApiError",
    "Emulator",
    "Fault",
    "MailStore",
    "StoredMessage",
    "load_mailbox",
    "start_emulator",
]
