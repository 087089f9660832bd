"""Shared fixtures. The `live` suites run against a real inbox (token from auth_cli.py) or, with
`GMAIL_LIVE_TARGET=emulator`, against the local Gmail emulator serving the bundled demo mailbox.

Hypothesis profiles are registered here and nowhere else: `ci` (derandomized: the same examples every run; chosen
when the CI variable is set), `dev` (random; the local default) and `deep` (random, ten times the examples).
`HYPOTHESIS_PROFILE=deep` picks one explicitly. Tests never fix their own example counts; one that needs a
different count scales the profile's (`server.tests.support.properties.examples`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from server.auth import TokenStore
from server.gmail_client import GmailClient
from server.runtime.config import Settings, load_settings
from server.runtime.observability import Metrics

PROFILE_EXAMPLES = 300
# No deadline and no too_slow check: both measure wall time, which on two shared cores is noise, not a bug. No
# example database: nothing is written into the tree; a failure prints the blob that reproduces it.
hypothesis_settings.register_profile(
    "dev",
    max_examples=PROFILE_EXAMPLES,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
hypothesis_settings.register_profile("ci", hypothesis_settings.get_profile("dev"), derandomize=True)
hypothesis_settings.register_profile("deep", hypothesis_settings.get_profile("dev"), max_examples=10 * PROFILE_EXAMPLES)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if "CI" in os.environ else "dev"))


@dataclass
class LiveGmail:
    """A real client stack pointed at the live target."""

    settings: Settings
    target: str  # "gmail" or "emulator"

    def client(self) -> GmailClient:
        return GmailClient(self.settings, TokenStore(self.settings))

    def context(self, top_k: int = 10):
        from server.tools import ToolContext

        metrics = Metrics()
        client = GmailClient(self.settings, TokenStore(self.settings), metrics=metrics)
        return ToolContext(gmail=client, enrich_top_k=top_k, metrics=metrics)


@pytest.fixture(scope="session")
def live_gmail(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveGmail]:
    target = os.environ.get("GMAIL_LIVE_TARGET", "gmail").strip().lower()
    if target == "emulator":
        from server.demo import DEMO_MAILBOX
        from server.emulator import start_emulator

        with start_emulator(DEMO_MAILBOX, rebase_dates=True) as emulator:
            token = emulator.write_token(tmp_path_factory.mktemp("live") / "token.json")
            base = load_settings(env={}, dotenv=False)
            settings = base.with_overrides(api_endpoint=emulator.url, token_uri=emulator.token_uri, token_path=token)
            yield LiveGmail(settings, "emulator")
        return
    settings = load_settings()
    if not settings.token_path.exists():
        pytest.skip(
            f"live tests need a Gmail token at {settings.token_path}: run `python server/auth_cli.py` first "
            "(or run them against the local emulator with GMAIL_LIVE_TARGET=emulator)"
        )
    yield LiveGmail(settings, "gmail")


@pytest.fixture
def live_token_copy(live_gmail: LiveGmail, tmp_path: Path) -> Path:
    """A copy of the live token file, so auth tests can break it without touching the user's real one."""
    copy = tmp_path / "token-copy.json"
    copy.write_bytes(live_gmail.settings.token_path.read_bytes())
    return copy


@pytest.fixture(scope="session")
def gmail_emulator(tmp_path_factory: pytest.TempPathFactory):
    """One emulator per test session over a small mailbox built by the tests (see emulator_helpers.py)."""
    from server.emulator import start_emulator
    from server.tests.support.emulator import build_mailbox

    with start_emulator(build_mailbox(tmp_path_factory.mktemp("emulator") / "mail")) as emulator:
        yield emulator


@pytest.fixture
def emulator(gmail_emulator):
    """The session emulator with faults, limits and the request log cleared before and after the test."""
    gmail_emulator.reset()
    yield gmail_emulator
    gmail_emulator.reset()
