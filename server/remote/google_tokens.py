"""A person's Google account as Gmail credentials: the sealed refresh token of their grant, refreshed by google-auth.

`GrantCredentials` is the `CredentialSource` a `GmailClient` asks before each request (`get()`), in place of the
token file of the local mode. It builds google-auth `Credentials` from the refresh token kept sealed in the state
store (`Records.google_account`), the operator's Web client id and secret and its token URI (Google's, or the
emulator's), and refreshes them through google-auth with one attempt per request (`single_attempt_request`, as the
local mode does). A refresh token Google rotated is sealed back at once.

A refresh that Google refuses for good (`invalid_grant`: revoked, expired; `invalid_rapt`: the organisation wants
a fresh sign-in) is an `AuthError` for the call, and is reported to `on_dead(email, refresh_token)`: the remote
side then answers the person's next request with 401, so the client signs in again (`mailboxes.py`). The refresh
token is read from the store on every refresh, so a fresh sign-in that saved a new one is used without a restart.

The access token kept with the grant (the code exchange's, `GoogleAccount.access_token`) is used as long as
google-auth deems it valid (its expiry, less google-auth's refresh margin): the first call after signing in costs no
token request.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httplib2
from google.auth import exceptions as google_exceptions
from google.oauth2.credentials import Credentials

from server.errors import AuthError, ReauthRequiredError, TransientError
from server.gmail.errors import describe_refresh_failure
from server.gmail.token_endpoint import single_attempt_request
from server.remote.google_upstream import GoogleWebClient
from server.remote.records import Records
from server.runtime.observability import get_logger

log = get_logger("remote")
TIMEOUT_S = 20.0


class GrantCredentials:
    """Valid credentials for one Google account of one person. Thread-safe; one refresh at a time."""

    def __init__(
        self,
        records: Records,
        subject: str,
        email: str,
        client: GoogleWebClient,
        *,
        on_dead: Callable[[str, str], None] = lambda email, token: None,
        http_factory: Callable[[], Any] | None = None,
    ) -> None:
        self.records = records
        self.subject = subject
        self.email = email
        self.client = client
        self.on_dead = on_dead
        self._http_factory = http_factory or (lambda: httplib2.Http(timeout=TIMEOUT_S))
        self._lock = threading.Lock()
        self._credentials: Any = None

    def get(self) -> Any:
        with self._lock:
            if self._credentials is not None and self._credentials.valid:
                return self._credentials
            account = self.records.google_account(self.subject, self.email)
            if account is None:
                raise AuthError(
                    f"The Google account {self.email} is no longer connected.",
                    hint="Connect it again from the link this server gives (gmail_list_labels names it), or leave "
                    "account out to use the signed-in account.",
                )
            credentials = Credentials(
                account.access_token or None,
                refresh_token=account.refresh_token,
                token_uri=self.client.token_uri,
                client_id=self.client.client_id,
                client_secret=self.client.client_secret,
                scopes=sorted(account.scopes),
                expiry=_naive_utc(account.access_expires_at) if account.access_token else None,
            )
            if credentials.token and credentials.expiry is not None and credentials.valid:
                self._credentials = credentials
                return credentials
            try:
                credentials.refresh(single_attempt_request(self._http_factory()))
            except (google_exceptions.RefreshError, google_exceptions.TransportError, OSError) as exc:
                error = describe_refresh_failure(exc)
                if isinstance(error, ReauthRequiredError) or (
                    isinstance(error, AuthError) and "invalid_grant" in error.message
                ):
                    self.on_dead(self.email, account.refresh_token)
                    raise sign_in_again(self.email) from None
                raise error from None
            except (TypeError, ValueError, KeyError):
                raise TransientError("Google's token endpoint answered with something that is not OAuth.") from None
            rotated = credentials.refresh_token
            if rotated and rotated != account.refresh_token:
                self.records.save_google_account(self.subject, replace(account, refresh_token=rotated))
                log.info("google refresh token rotated and sealed")
            self._credentials = credentials
            return credentials


def _naive_utc(epoch_s: float) -> datetime.datetime:
    """google-auth's expiry form: a naive datetime in UTC."""
    return datetime.datetime.fromtimestamp(epoch_s, datetime.timezone.utc).replace(tzinfo=None)


def sign_in_again(email: str) -> AuthError:
    """The remote form of a dead grant: the person signs in again through their client, no command to run."""
    return AuthError(
        f"Google no longer accepts the sign-in of {email} (revoked, expired, or the organisation wants a fresh "
        "sign-in).",
        hint="Do not retry: the client will ask the person to sign in again on its next request to this server.",
    )
