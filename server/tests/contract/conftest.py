"""The `gmail` fixture of the contract suite: every contract test runs once per target.

- `[emulator]`: a contract emulator of its own over the test mailbox (other tests' emulators never see what the
  contract inserts), with a token held to `gmail.modify`, the scope the live run needs. Part of the default
  `pytest` run.
- `[live]`: marked `live`, so only `pytest -m live` runs it. The target is the one `live_gmail` chooses: the real
  inbox of the token file (skipped, with the reason, when there is none), or with `GMAIL_LIVE_TARGET=emulator` a
  contract emulator over the demo mailbox.

Each test gets its own `ContractGmail` (support/contract.py): a marker word of its own and a ledger of what it
created, cleaned up when the test ends.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httplib2
import pytest
from google_auth_httplib2 import AuthorizedHttp
from googleapiclient.discovery import build

from server.auth import TokenStore
from server.emulator import start_emulator
from server.gmail import scopes
from server.runtime.config import Settings
from server.tests.support.contract import ContractGmail, new_run_id
from server.tests.support.emulator import gmail_service

_TEST_INDEX = itertools.count(1)


@dataclass(frozen=True)
class ContractTarget:
    service: Any
    target: str  # "emulator" or "gmail"
    owner: str


@pytest.fixture(scope="session")
def contract_run_id() -> str:
    return new_run_id()


def _emulator_target(mailbox: Path, directory: Path, **options: Any) -> Iterator[ContractTarget]:
    with start_emulator(mailbox, **options) as emulator:
        token = emulator.write_token(directory / "token.json", scopes=["modify"])
        yield ContractTarget(gmail_service(emulator, token), "emulator", emulator.store.email_address)


def _real_gmail_target(settings: Settings) -> ContractTarget:
    credentials = TokenStore(settings).get()
    granted = scopes.parse_granted(list(credentials.scopes or []))
    if granted is not None and not scopes.covers(granted, scopes.LABELING):
        pytest.skip(
            f"the live contract suite changes labels and trashes its own messages: it needs gmail.modify, and the "
            f"token at {settings.token_path} holds {sorted(granted)}. Authorize with: "
            f"python -m server.auth_cli --scopes modify (or gmail-mcp-auth --scopes modify); see docs/contract-tests.md"
        )
    http = AuthorizedHttp(credentials, http=httplib2.Http(timeout=60))
    service = build("gmail", "v1", http=http, client_options={"api_endpoint": settings.endpoint}, static_discovery=True)
    owner = service.users().getProfile(userId="me").execute()["emailAddress"]
    return ContractTarget(service, "gmail", owner)


@pytest.fixture(scope="session", params=["emulator", pytest.param("live", marks=pytest.mark.live)])
def contract_target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, emulator_mailbox: Path
) -> Iterator[ContractTarget]:
    if request.param == "emulator":
        yield from _emulator_target(emulator_mailbox, tmp_path_factory.mktemp("contract"))
        return
    live = request.getfixturevalue("live_gmail")
    if live.target == "emulator":
        from server.demo import DEMO_MAILBOX

        yield from _emulator_target(DEMO_MAILBOX, tmp_path_factory.mktemp("contract-live"), rebase_dates=True)
        return
    yield _real_gmail_target(live.settings)


@pytest.fixture
def gmail(contract_target: ContractTarget, contract_run_id: str) -> Iterator[ContractGmail]:
    """The target mailbox for one test; what the test created there is removed (messages trashed) afterwards."""
    handle = ContractGmail(
        contract_target.service, contract_target.target, contract_target.owner, contract_run_id, next(_TEST_INDEX)
    )
    yield handle
    handle.cleanup()
