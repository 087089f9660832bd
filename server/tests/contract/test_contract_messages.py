"""Contract: what messages.batchModify, trash and untrash do, and which mail a list leaves out, as real Gmail does
it. Every check runs against the emulator (`pytest`) and a real inbox (`pytest -m live`); it only touches messages
it inserted itself.
"""

from __future__ import annotations

import pytest
from googleapiclient.errors import HttpError

from server.tests.support.contract import ContractGmail, error_of, status_of


def made_up_id(gmail: ContractGmail) -> str:
    """A well-formed id (16 hex digits) that the mailbox must not hold; checked before anything is sent with it."""
    made_up = "0" * 6 + gmail.run_id.encode().hex()[:10]
    with pytest.raises(HttpError) as caught:
        gmail.get(made_up, format="minimal")
    assert error_of(caught.value)[0] == 404, f"{made_up} exists in this mailbox: refusing to touch it"
    return made_up


def test_batch_modify_ignores_an_unknown_id_and_answers_204(gmail: ContractGmail) -> None:
    """messages.batchModify with a made-up id among real ones answers 204 with an empty body, changes the real
    ones, and the made-up id stays unknown.

    Evidence: Nango integration-templates tests/batch-modify-messages.test.json (2026, Workspace): 204, empty body
    (the recorded call names one id; that unknown ids are skipped, not refused, is the field reports' finding
    listed in docs/contract-tests.md, which this check settles on a real inbox).
    """
    ours = gmail.insert(gmail.compose("batchModify contract"))["id"]
    made_up = made_up_id(gmail)

    request = gmail.users.messages().batchModify(
        userId="me", body={"ids": [made_up, ours], "addLabelIds": ["STARRED"], "removeLabelIds": ["UNREAD"]}
    )
    status, content = status_of(request)
    assert (status, content.strip()) == (204, b"")
    alone = gmail.users.messages().batchModify(userId="me", body={"ids": [made_up], "addLabelIds": ["STARRED"]})
    assert status_of(alone)[0] == 204

    labels = set(gmail.get(ours, format="minimal")["labelIds"])
    assert "STARRED" in labels and "UNREAD" not in labels
    with pytest.raises(HttpError) as caught:
        gmail.get(made_up, format="minimal")
    assert error_of(caught.value)[0] == 404


def test_trash_removes_inbox_and_untrash_removes_only_trash(gmail: ContractGmail) -> None:
    """messages.trash adds TRASH and takes INBOX away; messages.untrash takes TRASH away and does not put INBOX
    back (the message lands in All Mail). Other labels (here SENT: mail to oneself is INBOX and SENT) stay.

    Evidence: Nango tests/trash-message.test.json (TRASH added, SENT kept) and tests/untrash-message.test.json
    (TRASH gone, nothing else restored) (2026, Workspace); gauteh/lieer #35 (trash is an action of its own, not
    just a label).
    """
    ours = gmail.insert(gmail.compose("trash contract"), label_ids=["INBOX", "UNREAD", "SENT"])["id"]

    trashed = gmail.users.messages().trash(userId="me", id=ours).execute()
    for labels in (set(trashed["labelIds"]), set(gmail.get(ours, format="minimal")["labelIds"])):
        assert "TRASH" in labels and "INBOX" not in labels and "SENT" in labels, labels

    restored = gmail.users.messages().untrash(userId="me", id=ours).execute()
    for labels in (set(restored["labelIds"]), set(gmail.get(ours, format="minimal")["labelIds"])):
        assert "TRASH" not in labels and "INBOX" not in labels and "SENT" in labels, labels


def test_spam_and_trash_are_left_out_unless_asked_for(gmail: ContractGmail) -> None:
    """messages.list leaves SPAM and TRASH out unless includeSpamTrash=true or the query says in:spam / in:trash.

    Evidence: Gmail API reference, users.messages.list `includeSpamTrash` ("Include messages from SPAM and TRASH
    in the results", default false); gauteh/lieer #35 (SPAM and TRASH are not listed without asking).
    """
    spam = gmail.insert(gmail.compose("spam contract"), label_ids=["SPAM"])["id"]
    trash = gmail.insert(gmail.compose("trash list contract"))["id"]
    gmail.users.messages().trash(userId="me", id=trash).execute()
    inbox = gmail.insert(gmail.compose("inbox contract"))["id"]
    everything = {spam, trash, inbox}

    assert gmail.search_until(everything.issubset, q=gmail.marker, includeSpamTrash=True) >= everything
    assert gmail.list_ids(q=gmail.marker) == {inbox}
    assert gmail.search_until(lambda ids: spam in ids, q=f"in:spam {gmail.marker}") == {spam}
    assert gmail.search_until(lambda ids: trash in ids, q=f"in:trash {gmail.marker}") == {trash}
