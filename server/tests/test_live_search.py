"""Live search suite of the design document (10 cases). Needs a token (`python server/auth_cli.py`), or runs
against the demo mailbox with GMAIL_LIVE_TARGET=emulator. Test data (a subject, a sender) is discovered from the
inbox itself, never hard-coded.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest

from server.toolsets.messages.search import SearchMessagesInput, search_messages

pytestmark = pytest.mark.live


def run(live_gmail, **arguments):
    return search_messages(live_gmail.context(), SearchMessagesInput(**arguments))


@pytest.fixture(scope="module")
def inbox_sample(live_gmail):
    """A few enriched inbox messages to take test data from."""
    result = search_messages(live_gmail.context(), SearchMessagesInput(query="in:inbox", max_results=10))
    usable = [m for m in result.messages if m.subject and m.from_email]
    if not usable:
        pytest.skip("the inbox has no message with both a subject and a sender to take test data from")
    return usable


def distinctive_word(subject: str) -> str | None:
    words = [w for w in re.findall(r"[A-Za-z]{5,}", subject) if w.lower() not in {"re", "fwd", "hello"}]
    return max(words, key=len) if words else None


def test_basic_search_is_reachable(live_gmail):
    result = run(live_gmail, query="in:inbox", max_results=5)
    assert 1 <= result.result_count <= 5
    for item in result.messages:
        assert item.id and item.thread_id and item.snippet is not None
    assert any(m.from_email for m in result.messages) and any(m.subject for m in result.messages)


def test_subject_search_finds_the_subject(live_gmail, inbox_sample):
    word = next((w for m in inbox_sample if (w := distinctive_word(m.subject))), None)
    if word is None:
        pytest.skip("no inbox subject with a distinctive word")
    result = run(live_gmail, query=f"subject:{word}", max_results=5)
    assert result.messages, f"subject:{word} found nothing"
    assert word.lower() in (result.messages[0].subject or "").lower()


def test_from_filter_only_returns_that_sender(live_gmail, inbox_sample):
    sender = inbox_sample[0].from_email
    result = run(live_gmail, query=f"from:{sender}", max_results=10)
    assert result.messages
    assert all(sender.lower() in (m.from_email or "").lower() for m in result.messages)


def test_newer_than_days_limits_dates(live_gmail):
    recent = run(live_gmail, query="", newer_than_days=3, max_results=10)
    cutoff = datetime.now(timezone.utc) - timedelta(days=3, hours=1)
    for item in recent.messages:
        assert datetime.fromisoformat(item.date) >= cutoff, item
    everything = run(live_gmail, query="", newer_than_days=9999, max_results=50)
    assert everything.result_count >= recent.result_count


def test_label_ids_filter(live_gmail):
    inbox = run(live_gmail, query="", label_ids=["INBOX"], max_results=10)
    assert inbox.messages
    starred = run(live_gmail, query="", label_ids=["STARRED"], max_results=10)
    if not starred.messages:
        pytest.skip("no starred messages to compare with")
    assert {m.id for m in starred.messages} != {m.id for m in inbox.messages}


def test_pagination_respects_max_results_and_prefixes(live_gmail):
    many = run(live_gmail, query="in:anywhere", max_results=25)
    few = run(live_gmail, query="in:anywhere", max_results=5)
    assert many.result_count <= 25 and few.result_count <= 5
    assert [m.id for m in few.messages] == [m.id for m in many.messages][: few.result_count]


def test_results_are_unique(live_gmail):
    result = run(live_gmail, query="in:anywhere", max_results=50)
    ids = [m.id for m in result.messages]
    assert len(ids) == len(set(ids))


def test_empty_result_is_not_an_error(live_gmail):
    result = run(live_gmail, query="from:nonexistent_z9x8y7@fakeemail.test")
    assert result.messages == [] and result.hint


def test_compound_query(live_gmail, inbox_sample):
    candidate = next(((m, w) for m in inbox_sample if (w := distinctive_word(m.subject))), None)
    if candidate is None:
        pytest.skip("no inbox subject with a distinctive word")
    message, word = candidate
    result = run(live_gmail, query=f"from:{message.from_email} subject:{word} newer_than:3650d", max_results=10)
    assert result.messages
    for item in result.messages:
        assert message.from_email.lower() in (item.from_email or "").lower()
        assert word.lower() in (item.subject or "").lower()


def test_max_results_boundaries(live_gmail):
    assert run(live_gmail, query="in:anywhere", max_results=1).result_count == 1
    assert run(live_gmail, query="in:anywhere", max_results=50).result_count <= 50
