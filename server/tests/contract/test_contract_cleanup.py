"""The contract harness's own promises (support/contract.py), checked against a private emulator: cleanup removes
what a test created and writes to nothing else, a failed cleanup step is reported, never swallowed, and nothing
without the test's marker word is ever inserted.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from server.emulator import Emulator
from server.tests.support.contract import ContractGmail
from server.tests.support.emulator import gmail_service


@pytest.fixture
def harness(make_emulator: Callable[..., Emulator], tmp_path: Path) -> tuple[ContractGmail, Emulator]:
    emulator = make_emulator()
    service = gmail_service(emulator, emulator.write_token(tmp_path / "token.json", scopes=["modify"]))
    return ContractGmail(service, "emulator", emulator.store.email_address, "harnesscheck", 7), emulator


def test_cleanup_trashes_the_messages_deletes_the_drafts_and_writes_nothing_else(harness) -> None:
    gmail, emulator = harness
    ours = gmail.insert(gmail.compose("cleanup"))["id"]
    draft = gmail.create_draft(gmail.compose("cleanup draft").as_bytes())["id"]
    since = emulator.requests()[-1]["seq"]

    gmail.cleanup()

    writes = [(entry["method"], entry["path"]) for entry in emulator.requests(since) if entry["method"] != "GET"]
    assert writes == [
        ("DELETE", f"/gmail/v1/users/me/drafts/{draft}"),
        ("POST", f"/gmail/v1/users/me/messages/{ours}/trash"),
    ]
    assert "TRASH" in gmail.get(ours, format="minimal")["labelIds"]


def test_a_failed_cleanup_step_is_reported_and_the_others_still_run(harness) -> None:
    gmail, emulator = harness
    first = gmail.insert(gmail.compose("kept"))["id"]
    second = gmail.insert(gmail.compose("trashed"))["id"]
    emulator.add_fault(status=500, reason="backendError", method="POST", path_regex=f"{first}/trash$")

    with pytest.raises(AssertionError, match=f"message {first} \\(500 "):
        gmail.cleanup()
    assert "TRASH" in gmail.get(second, format="minimal")["labelIds"]


def test_nothing_without_the_marker_word_is_inserted(harness) -> None:
    gmail, emulator = harness
    before = len(emulator.store.messages)
    stranger = gmail.compose("no marker")
    stranger.replace_header("Subject", "no marker")
    stranger.set_content("no marker here\n")

    with pytest.raises(ValueError, match="marker"):
        gmail.insert(stranger)
    assert len(emulator.store.messages) == before and gmail.messages == []
