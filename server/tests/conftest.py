"""Shared fixtures. The `live` suites run against a real inbox (token from auth_cli.py) or, with
`GMAIL_LIVE_TARGET=emulator`, against the local Gmail emulator serving the bundled demo mailbox.

Hypothesis profiles are registered here and nowhere else: `ci` (derandomized: the same examples every run; chosen
when the CI variable is set), `dev` (random; the local default), their `-slow` forms for `pytest -m slow` (twice
the examples) and `deep` (random, thirty times the examples).
`HYPOTHESIS_PROFILE=deep` picks one explicitly. Tests never fix their own example counts; one that needs a
different count scales the profile's (`server.tests.support.properties.examples`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from server.auth import TokenStore
from server.emulator import Emulator, start_emulator
from server.gmail_client import GmailClient
from server.runtime.config import PROJECT_ROOT, Settings, load_settings
from server.runtime.observability import Metrics
from server.tests.support.emulator import build_mailbox, emulator_settings

# pytest rewrites each test module's asserts when it imports it, after this conftest (about 4 s of the quick run per
# worker); where PYTHONDONTWRITEBYTECODE is set it would redo that on every run. The rewritten modules are cached in
# __pycache__ (git-ignored) like the server's own bytecode, which setup_env writes for the same reason.
sys.dont_write_bytecode = False

# Hypothesis's own default, 100 examples per property, keeps the default run under a minute on two cores (300 took
# it to 77 s). The slow tier (`pytest -m slow`: the fuzz suites) runs twice as many, the `deep` profile
# (HYPOTHESIS_PROFILE=deep, random seeds) 30 times as many, to hunt for new counterexamples.
PROFILE_EXAMPLES = 100
SLOW_TIER_SCALE = 2
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
for _base in ("dev", "ci"):
    hypothesis_settings.register_profile(
        f"{_base}-slow", hypothesis_settings.get_profile(_base), max_examples=SLOW_TIER_SCALE * PROFILE_EXAMPLES
    )
hypothesis_settings.register_profile("deep", hypothesis_settings.get_profile("dev"), max_examples=30 * PROFILE_EXAMPLES)
pytest_plugins = ["server.tests.support.remote_state"]  # `clock` and `store` for the remote/ tests

BASE_PROFILE = "ci" if "CI" in os.environ else "dev"
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or BASE_PROFILE)


def pytest_configure(config: pytest.Config) -> None:
    """The slow tier's property tests run with the `-slow` profile (unless HYPOTHESIS_PROFILE names one)."""
    if config.getoption("markexpr") == "slow" and not os.environ.get("HYPOTHESIS_PROFILE"):
        hypothesis_settings.load_profile(f"{BASE_PROFILE}-slow")


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


LIVE_SKIP_REASON = pytest.StashKey[str]()


def authorize_command() -> str:
    """The command that creates the token, with the absolute interpreter and script (any working directory)."""
    return f"{sys.executable} {PROJECT_ROOT / 'server' / 'auth_cli.py'}"


@pytest.fixture(scope="session")
def live_gmail(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> LiveGmail:
    target = os.environ.get("GMAIL_LIVE_TARGET", "gmail").strip().lower()
    if target == "emulator":
        demo = request.getfixturevalue("demo_emulator")
        return LiveGmail(emulator_settings(demo, tmp_path_factory.mktemp("live")), "emulator")
    settings = load_settings()
    if not settings.token_path.exists():
        reason = (
            f"no Gmail token at {settings.token_path}. Authorize once: {authorize_command()} "
            "(or run them against the local emulator: GMAIL_LIVE_TARGET=emulator)"
        )
        request.config.stash[LIVE_SKIP_REASON] = reason
        pytest.skip(f"live tests need a Gmail token: {reason}")
    return LiveGmail(settings, "gmail")


# The slow tier (fuzzing, multi-megabyte mail, subprocesses) is marked where the tests are: `pytestmark =
# pytest.mark.slow` in the module or `@pytest.mark.slow` on the test. `pytest` leaves it out; `pytest -m slow` runs it.
DEFAULT_MARKEXPR = "not live and not slow and not packaging"  # pyproject's addopts


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` (pyproject's addopts) spreads the whole quick run and the whole slow tier over the cores (xdist's
    own count; files stay whole on one worker, `--dist loadfile`). A run of chosen files stays in one process (one
    file is quicker without starting workers), and so does the live tier, whose skip reason the summary reports."""
    whole_tier = config.getoption("markexpr") in (DEFAULT_MARKEXPR, "slow")
    return None if whole_tier and config.args_source == pytest.Config.ArgsSource.TESTPATHS else 0


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Says why the live tests were skipped and how to fix it, without `-rs`."""
    reason = config.stash.get(LIVE_SKIP_REASON, None)
    if reason is None:
        return
    skipped = [report for report in terminalreporter.stats.get("skipped", []) if "live" in report.keywords]
    terminalreporter.write_line(f"{len(skipped)} live tests skipped: {reason}", yellow=True)


@pytest.fixture
def live_token_copy(live_gmail: LiveGmail, tmp_path: Path) -> Path:
    """A copy of the live token file, so auth tests can break it without touching the user's real one."""
    copy = tmp_path / "token-copy.json"
    copy.write_bytes(live_gmail.settings.token_path.read_bytes())
    return copy


# -- the emulator fixture family ------------------------------------------------------------------------------------
# `emulator` is what most tests want. Point a server at any of them with `emulator_env` / `emulator_settings`
# (server/tests/support/emulator.py).


@pytest.fixture(scope="session")
def emulator_mailbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test mailbox (support/emulator.py `build_mailbox`), written once per session."""
    return build_mailbox(tmp_path_factory.mktemp("emulator") / "mail")


@pytest.fixture(scope="session")
def gmail_emulator(emulator_mailbox: Path) -> Iterator[Emulator]:
    """One emulator per session over the test mailbox, for session- and module-scoped fixtures. Tests take
    `emulator`, which is this one cleaned up around the test."""
    with start_emulator(emulator_mailbox) as running:
        yield running


@pytest.fixture
def emulator(gmail_emulator: Emulator) -> Iterator[Emulator]:
    """The session emulator, clean: no faults, no concurrency limit, refresh token valid, empty request log;
    afterwards it waits for the test's requests to finish (a hang noticing its client left) and cleans again, so
    nothing a test started can land in the next test's log."""
    gmail_emulator.reset()
    yield gmail_emulator
    _wait_until_idle(gmail_emulator)
    gmail_emulator.reset()


def _wait_until_idle(emulator: Emulator, timeout_s: float = 5.0) -> None:
    """Until every logged request has finished (its duration is known), for at most `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while any(entry["duration_ms"] is None for entry in emulator.requests()) and time.monotonic() < deadline:
        time.sleep(0.01)


@pytest.fixture
def make_emulator(emulator_mailbox: Path) -> Iterator[Callable[..., Emulator]]:
    """Starts emulators of the test's own: `make_emulator(mailbox=None, **options)` takes `start_emulator`'s
    options (`latency_ms`, `token_ttl_s`, `body_charset`, ...) over the test mailbox or another one. All are
    stopped when the test ends."""
    started: list[Emulator] = []

    def make(mailbox: Path | None = None, **options: Any) -> Emulator:
        started.append(start_emulator(mailbox or emulator_mailbox, **options))
        return started[-1]

    yield make
    for running in started:
        running.stop()


@pytest.fixture(scope="session")
def demo_emulator() -> Iterator[Emulator]:
    """One emulator per session over the bundled demo mailbox with dates rebased to now, as demo mode serves it.
    Shared as is: tests that inject faults use `emulator` or `make_emulator` instead."""
    from server.demo import DEMO_MAILBOX

    with start_emulator(DEMO_MAILBOX, rebase_dates=True) as running:
        yield running
