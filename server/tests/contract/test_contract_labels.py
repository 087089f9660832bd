"""Contract: labels as real Gmail lists, applies, filters by and deletes them. Runs against the emulator
(`pytest`) and a real inbox (`pytest -m live`); the labels are the run's own (`gmail-mcp-contract-<run id>...`).
"""

from __future__ import annotations

import pytest
from googleapiclient.errors import HttpError

from server.tests.support.contract import LABEL_PREFIX, ContractGmail, error_of

# System labels listed without visibility fields, and those listed hidden (2024 gmail.com and 2026 Workspace alike).
WITHOUT_VISIBILITY = ("INBOX", "SENT", "DRAFT", "STARRED", "UNREAD")
HIDDEN = ("TRASH", "SPAM", "IMPORTANT", "CHAT")


@pytest.mark.parametrize("name", [" Q&A (test)", ' say "hi" | {x}', "/nested (a&b)"])
def test_a_label_with_special_characters_is_created_applied_found_and_deleted(gmail: ContractGmail, name: str) -> None:
    """A label whose name holds `& ( ) " | { } /` keeps its name exactly, filters messages.list by labelIds, and
    once deleted is gone from labels.list and from the message.

    Evidence: Nango tests/create-label.test.json and tests/delete-label.test.json (2026, Workspace: the name comes
    back as given; delete answers 204).
    """
    label = gmail.create_label(name)
    assert label["name"].endswith(name)
    assert gmail.users.labels().get(userId="me", id=label["id"]).execute()["name"] == label["name"]
    ours = gmail.insert(gmail.compose("label contract"))["id"]
    other = gmail.insert(gmail.compose("unlabelled contract"))["id"]
    gmail.users.messages().modify(userId="me", id=ours, body={"addLabelIds": [label["id"]]}).execute()

    found = gmail.search_until(lambda ids: ours in ids, labelIds=[label["id"]])
    assert found == {ours} and other not in found

    gmail.users.labels().delete(userId="me", id=label["id"]).execute()
    listed = {item["id"] for item in gmail.users.labels().list(userId="me").execute()["labels"]}
    assert label["id"] not in listed
    assert label["id"] not in gmail.get(ours, format="minimal")["labelIds"]


@pytest.mark.parametrize("value", ["missing", "UNREAD,INBOX"])
def test_an_unknown_label_id_is_400_invalid_label(gmail: ContractGmail, value: str) -> None:
    """messages.list with a labelIds value that is no label's id answers 400 `Invalid label: <value>` (a comma
    joined pair is one unknown value, not two labels).

    Evidence: n8n-io/n8n #902 (real Gmail: `Gmail error response [400]: Invalid label: UNREAD,INBOX`).
    """
    unknown = f"{LABEL_PREFIX}{gmail.run_id}-{value}" if value == "missing" else value
    with pytest.raises(HttpError) as caught:
        gmail.users.messages().list(userId="me", labelIds=[unknown], maxResults=1).execute()
    assert error_of(caught.value) == (400, f"Invalid label: {unknown}")


def test_system_labels_carry_visibility_fields_as_gmail_lists_them(gmail: ContractGmail) -> None:
    """labels.list: INBOX, SENT, DRAFT, STARRED and UNREAD have no messageListVisibility / labelListVisibility;
    TRASH, SPAM, IMPORTANT, CHAT and every CATEGORY_* are `hide` / `labelHide`. All are type `system`.

    Evidence: Nango tests/list-labels.test.json and tests/labels.test.json (2026, Workspace) and the 2024 mock
    mocks/nango/get/proxy/gmail/v1/users/me/labels (gmail.com): the same fields in both.
    """
    labels = {item["id"]: item for item in gmail.users.labels().list(userId="me").execute()["labels"]}
    for label_id in WITHOUT_VISIBILITY:
        assert label_id in labels, label_id
        assert labels[label_id]["type"] == "system"
        assert "messageListVisibility" not in labels[label_id] and "labelListVisibility" not in labels[label_id]
    hidden = [label_id for label_id in labels if label_id in HIDDEN or label_id.startswith("CATEGORY_")]
    assert {"TRASH", "SPAM", "IMPORTANT"} <= set(hidden)
    for label_id in hidden:
        item = labels[label_id]
        assert (item["type"], item.get("messageListVisibility"), item.get("labelListVisibility")) == (
            "system",
            "hide",
            "labelHide",
        ), item
