"""Connections to Gmail for `gmail_client.GmailClient`: a pool of sessions, each one thread's at a time.

httplib2.Http is not thread-safe and tool calls run in worker threads, so each call checks out a session (an
`AuthorizedHttp` plus the service and resource objects built on it) that no other thread holds, and hands it
back afterwards. Sessions outlive threads on purpose: anyio ends a worker thread after 10 s idle, and a session
per thread would then reconnect (TCP + TLS to Google) on most calls of a conversation. The discovery document
ships inside the library and is parsed once per process; resource objects are built once per session
(building `users().messages()` costs more CPU than sending the request).

The Google client stack is imported with this module, before the server answers `initialize`: a first tool call
sent the moment `tools/list` is answered then waits for nothing the warm-up is still importing (it used to wait
about 0.3 s for these imports, started by the warm-up in the background).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Protocol

import httplib2
from google_auth_httplib2 import AuthorizedHttp
from googleapiclient.discovery import build_from_document
from googleapiclient.discovery_cache import get_static_doc

from server.gmail.batch import TEMPLATE_ID, is_compatible, requests_per_id
from server.gmail.token_endpoint import single_attempt_request
from server.runtime.config import GOOGLE_API_ENDPOINT

PEOPLE_API_ENDPOINT = "https://people.googleapis.com"

# Kept for reuse, up to as many as calls can run at once (anyio runs 40 worker threads): a shared HTTP server
# answering bursts of concurrent calls would otherwise rebuild (and reconnect) most sessions on every burst;
# more exist only while that many calls run at once.
IDLE_SESSIONS = 40
_BUILD_LOCK = threading.Lock()
MAX_PART_TEMPLATES = 16  # shapes are few (metadata headers of a search, a thread, label counts)


class CredentialSource(Protocol):
    def get(self) -> Any: ...


@lru_cache(maxsize=1)
def gmail_discovery() -> dict[str, Any]:

    document: dict[str, Any] = json.loads(get_static_doc("gmail", "v1"))
    return document


@lru_cache(maxsize=1)
def people_discovery() -> dict[str, Any]:
    """The People API's document (the contacts tool's searches), shipped with the library like Gmail's."""
    document: dict[str, Any] = json.loads(get_static_doc("people", "v1"))
    return document


def people_endpoint(gmail_endpoint: str) -> str:
    """Where People API requests go: Google's own host beside Gmail's, or the same base as a configured endpoint
    (the local emulator serves both APIs at one address)."""
    return PEOPLE_API_ENDPOINT if gmail_endpoint.rstrip("/") == GOOGLE_API_ENDPOINT else gmail_endpoint


def default_http(timeout_s: float) -> Any:

    return httplib2.Http(timeout=timeout_s)


def prepare_stack() -> None:
    """Parses the discovery document and checks the batch's library hooks (what a first call would wait for)."""
    gmail_discovery()
    is_compatible()


class Session:
    """A kept-alive connection and the resource objects on it, tied to the credentials object it was built for."""

    def __init__(self, credentials: Any, http: Any, endpoint: str) -> None:

        self.credentials = credentials
        # The one-shot token request (see auth.py): batches are handed it (`refresh_request`), and AuthorizedHttp's
        # own refresh-after-401 uses it too, through its private `_request` (it takes no parameter for it), so
        # neither runs google-auth's sleeping retry loop (allowed in tests/test_dependency_patches.py).
        self.refresh_request = single_attempt_request(http)
        self.http = AuthorizedHttp(credentials, http=http)
        self.http._request = self.refresh_request
        with _BUILD_LOCK:  # build_from_document adds keys to the shared, cached discovery document as it goes
            self.service = build_from_document(
                gmail_discovery(), http=self.http, client_options={"api_endpoint": endpoint}
            )
        self.endpoint = endpoint
        self.users = self.service.users()
        self.messages = self.users.messages()
        self.history = self.users.history()
        self._resources: dict[str, Any] = {}
        self._part_templates: dict[Hashable, Any] = {}  # see requests_for
        self.broken = False  # set after a network failure: the connection is not handed out again

    @property
    def threads(self) -> Any:
        return self._resource("threads", lambda: self.users.threads())

    @property
    def labels(self) -> Any:
        return self._resource("labels", lambda: self.users.labels())

    @property
    def attachments(self) -> Any:
        return self._resource("attachments", lambda: self.messages.attachments())

    @property
    def people(self) -> Any:
        """The People API service on the same connection (built on first use, by the contacts tool only)."""

        def build() -> Any:
            with _BUILD_LOCK:
                return build_from_document(
                    people_discovery(), http=self.http, client_options={"api_endpoint": people_endpoint(self.endpoint)}
                )

        return self._resource("people", build)

    def requests_for(self, shape: Hashable, build: Callable[[str], Any], ids: Sequence[str]) -> list[Any]:
        """`build(id)` for each id, from one template per part shape kept for the session's life (a search sends
        the same shape of batch every time: building its template costs ~0.13 ms of discovery machinery)."""

        template = self._part_templates.get(shape)
        if template is None:
            template = build(TEMPLATE_ID)
            if len(self._part_templates) < MAX_PART_TEMPLATES:
                self._part_templates[shape] = template
        return requests_per_id(build, ids, template=template)

    def _resource(self, name: str, build: Callable[[], Any]) -> Any:
        # Built on first use: a session that only searches never pays for the others.
        if name not in self._resources:
            self._resources[name] = build()
        return self._resources[name]


class SessionPool:
    """Idle sessions of one account, most recently used last; a thread checks one out for each request."""

    def __init__(self, credentials: CredentialSource, http_factory: Callable[[], Any], endpoint: str) -> None:
        self._credentials = credentials
        self._http_factory = http_factory
        self._endpoint = endpoint
        self._idle: list[Session] = []
        self._lock = threading.Lock()
        self._local = threading.local()  # the session this thread has checked out (see discard_current)

    @contextmanager
    def checkout(self) -> Iterator[Session]:
        """An idle session (the most recently used: its connection is the likeliest still open), or a new one."""
        credentials = self._credentials.get()  # raises AuthError with guidance; refreshes an expired token
        with self._lock:
            # Sessions built for credentials the token store has since replaced are dropped, never reused.
            self._idle = [idle for idle in self._idle if idle.credentials is credentials]
            session = self._idle.pop() if self._idle else None
        if session is None:
            session = Session(credentials, self._http_factory(), self._endpoint)
        self._local.session = session
        try:
            yield session
        finally:
            self._local.session = None
            if not session.broken:
                with self._lock:
                    if len(self._idle) < IDLE_SESSIONS:
                        self._idle.append(session)

    def discard_current(self) -> None:
        """After a network failure, this thread's session is not reused, so the next attempt reconnects cleanly."""
        session: Session | None = getattr(self._local, "session", None)
        if session is not None:
            session.broken = True
