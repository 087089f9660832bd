"""The pure decisions behind the caches: folding history records, and whether a change can alter a search."""

from __future__ import annotations

import pytest

from server.gmail import history
from server.gmail.history import affects_search, depends_on_labels, is_time_relative, likely_new_matches, summarize


def message(message_id: str, *labels: str) -> dict:
    return {"id": message_id, "threadId": "t" + message_id, "labelIds": list(labels)}


def record(record_id: int, **entries: list) -> dict:
    ids = [entry["message"]["id"] for kind in entries.values() for entry in kind]
    return {"id": str(record_id), "messages": [{"id": i} for i in ids], **entries}


def delta_of(*records: dict, complete: bool = True, current: int = 200) -> history.HistoryDelta:
    return summarize(100, [{"history": list(records), "historyId": str(current)}], complete=complete)


def test_summarize_folds_records_per_message_with_net_label_changes():
    delta = delta_of(
        record(101, messagesAdded=[{"message": message("a", "INBOX", "UNREAD")}]),
        record(102, labelsRemoved=[{"message": message("b", "INBOX"), "labelIds": ["UNREAD"]}]),
        record(103, labelsAdded=[{"message": message("b", "INBOX", "UNREAD"), "labelIds": ["UNREAD"]}]),
        record(104, labelsAdded=[{"message": message("c", "STARRED"), "labelIds": ["STARRED"]}]),
        record(104, labelsRemoved=[{"message": message("c", "STARRED"), "labelIds": ["INBOX"]}]),
        record(105, messagesDeleted=[{"message": message("d")}]),
        {"id": "106", "messages": [{"id": "e", "threadId": "te"}]},
    )
    a, b, c, d, e = (delta.changes[key] for key in "abcde")
    assert a.added and a.label_ids == ("INBOX", "UNREAD") and not a.relabeled
    assert not b.relabeled  # read, then unread again: no net change
    assert c.labels_added == ["STARRED"] and c.labels_removed == ["INBOX"]
    assert d.deleted and e.touched and not e.relabeled
    assert (delta.history_id, delta.records, delta.last_record_id, delta.start) == (200, 7, 106, 100)


def test_summarize_tolerates_junk():
    delta = summarize(5, [{"history": [{"id": "x", "messagesAdded": [{"message": None}, "junk"]}]}])
    assert delta.changes == {} and delta.history_id == 5 and delta.last_record_id == 0


@pytest.mark.parametrize(
    "query, dependent",
    [
        ("is:unread", True),
        ("from:alice -in:inbox", True),
        ("label:work", True),
        ("{category:promotions from:x}", True),
        ("has:userlabels", True),
        ("has:yellow-star", True),
        ("L:receipts", True),
        ('subject:"is:unread"', True),  # conservative: the text looks like an operator
        ("has:attachment filename:pdf", False),
        ("from:alice subject:(lunch plans)", False),
        ("alice@inbox.example", False),  # an address is not the in: operator
        ("newer_than:2d", False),
        ("", False),
    ],
)
def test_which_queries_depend_on_labels(query, dependent):
    assert depends_on_labels(query) is dependent


def test_relative_dates_are_spotted():
    assert is_time_relative("is:unread newer_than:2d") and is_time_relative("OLDER_THAN:1y")
    assert not is_time_relative("after:2024/01/01 before:2024/02/01")


ADDED = record(101, messagesAdded=[{"message": message("new", "INBOX")}])
READ_MEMBER = record(102, labelsRemoved=[{"message": message("m1", "INBOX"), "labelIds": ["UNREAD"]}])
READ_OTHER = record(103, labelsRemoved=[{"message": message("x", "INBOX"), "labelIds": ["UNREAD"]}])
TRASHED_OTHER = record(104, labelsAdded=[{"message": message("x", "TRASH"), "labelIds": ["TRASH"]}])
DELETED_MEMBER = record(105, messagesDeleted=[{"message": message("m2")}])
DELETED_OTHER = record(106, messagesDeleted=[{"message": message("x")}])
MEMBERS = frozenset({"m1", "m2"})


@pytest.mark.parametrize(
    "records, query, paged, affects",
    [
        ((), "anything", False, False),
        ((ADDED,), "from:nobody-matches-this", False, True),  # cannot tell without searching
        ((READ_MEMBER,), "is:unread", False, True),
        ((READ_OTHER,), "is:unread", False, True),  # may now match (or not): labels are in the query
        ((READ_MEMBER,), "subject:report", False, False),  # content never changes; labels are not asked
        ((TRASHED_OTHER,), "subject:report", False, True),  # trash leaves every default search
        ((TRASHED_OTHER,), "subject:report in:anywhere", False, True),  # labels in the query: conservative
        ((DELETED_MEMBER,), "subject:report", False, True),
        ((DELETED_OTHER,), "subject:report", False, False),  # not listed, first page: nothing moves
        ((DELETED_OTHER,), "subject:report", True, True),  # a later page shifts
        (({"id": "107", "messages": [{"id": "m1"}]},), "subject:report", False, True),  # unknown change, listed
        (({"id": "107", "messages": [{"id": "x"}]},), "subject:report", False, False),
    ],
)
def test_affects_search(records, query, paged, affects):
    assert affects_search(delta_of(*records), query=query, result_ids=MEMBERS, paged=paged) is affects


def test_an_incomplete_history_counts_as_a_change():
    assert affects_search(delta_of(complete=False), query="x", result_ids=MEMBERS, paged=False)


def test_likely_new_matches_newest_first_without_deleted_or_hidden():
    delta = delta_of(
        record(101, messagesAdded=[{"message": message("old", "INBOX")}]),
        record(102, messagesAdded=[{"message": message("spam", "SPAM")}]),
        record(103, messagesAdded=[{"message": message("gone", "INBOX")}]),
        record(104, messagesDeleted=[{"message": message("gone")}]),
        READ_OTHER,
        record(105, messagesAdded=[{"message": message("newest", "INBOX")}]),
    )
    assert likely_new_matches(delta, query="from:x", limit=10) == ["newest", "old"]
    assert likely_new_matches(delta, query="is:read", limit=10) == ["newest", "x", "old"]
    assert likely_new_matches(delta, query="in:spam", limit=10) == ["newest", "x", "spam", "old"]
    assert likely_new_matches(delta, query="from:x", limit=1) == ["newest"]
