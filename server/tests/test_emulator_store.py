"""Mailbox loading: stable ids, Takeout labels, threads, dates, rebasing (pure, no HTTP)."""

from __future__ import annotations

from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest

from server.emulator import load_mailbox
from server.emulator.labels import classify, split_label_header, user_label_id
from server.emulator.mailbox_store import HOUR_MS
from server.tests.support.emulator import FILLER_COUNT, OWNER, build_mailbox


@pytest.fixture(scope="module")
def mailbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_mailbox(tmp_path_factory.mktemp("store") / "mail")


def test_loads_eml_and_mbox_recursively(mailbox: Path) -> None:
    store = load_mailbox(mailbox)
    assert len(store.messages) == 10 + FILLER_COUNT
    assert {m.subject for m in store.messages} >= {"No labels header", "Bulk note 00", "中文测试", "Café weekly"}


def test_ids_are_stable_16_hex_and_unique(mailbox: Path) -> None:
    first, second = load_mailbox(mailbox), load_mailbox(mailbox)
    assert [m.id for m in first.messages] == [m.id for m in second.messages]
    assert [m.thread_id for m in first.messages] == [m.thread_id for m in second.messages]
    assert all(len(m.id) == 16 and int(m.id, 16) >= 0 and m.id == m.id.lower() for m in first.messages)
    assert len({m.id for m in first.messages}) == len(first.messages)


def test_identical_copies_get_distinct_ids(tmp_path: Path) -> None:
    raw = b"From: a@x\r\nSubject: twin\r\nDate: Mon, 01 Jan 2024 00:00:00 +0000\r\n\r\nhi\r\n"
    (tmp_path / "a.eml").write_bytes(raw)
    (tmp_path / "b.eml").write_bytes(raw)
    store = load_mailbox(tmp_path)
    assert len({m.id for m in store.messages}) == 2


def test_single_mbox_file_and_missing_path(mailbox: Path, tmp_path: Path) -> None:
    store = load_mailbox(mailbox / "takeout" / "All mail Including Spam and Trash.mbox")
    assert len(store.messages) == FILLER_COUNT
    with pytest.raises(FileNotFoundError):
        load_mailbox(tmp_path / "nope")


def test_takeout_labels_map_to_api_ids(mailbox: Path) -> None:
    store = load_mailbox(mailbox)
    report = store.find("Quarterly report")[-1]
    assert report.label_ids == ("INBOX", "UNREAD", "IMPORTANT", user_label_id("Work"))
    assert store.find("Re: Quarterly")[0].label_ids == ("SENT",)  # "Opened" is not a label
    assert store.find("Café")[0].label_ids == ("INBOX", "CATEGORY_PROMOTIONS")
    assert store.find("No labels header")[0].label_ids == ("INBOX",)  # no header: inbox
    assert store.find("Bulk note 00")[0].label_ids == ()  # Takeout "Archived": no INBOX
    names = {label.name: label for label in store.labels.values()}
    assert names["Receipts/2024"].type == "user" and names["Receipts"].type == "user"  # parent implied
    assert names["INBOX"].type == "system" and "CATEGORY_UPDATES" in store.labels
    assert store.label_id("work") == user_label_id("Work")


def test_label_header_parsing() -> None:
    assert split_label_header('Inbox,"Clients, big",Opened') == ["Inbox", "Clients, big", "Opened"]
    assert classify("Category Social") == ("CATEGORY_SOCIAL", "CATEGORY_SOCIAL")
    assert classify("starred") == ("STARRED", "STARRED")
    assert classify("CATEGORY_UPDATES") == ("CATEGORY_UPDATES", "CATEGORY_UPDATES")
    assert classify("Opened") is None
    label_id, name = classify("Travel") or ("", "")
    assert label_id.startswith("Label_") and label_id[6:].isdigit() and name == "Travel"


def test_threads_from_references_and_takeout_thrid(mailbox: Path) -> None:
    store = load_mailbox(mailbox)
    report, reply = store.find("Quarterly report")[-1], store.find("Re: Quarterly")[0]
    assert reply.thread_id == report.thread_id == report.id  # root message's id
    assert [m.id for m in store.threads[report.id]] == [report.id, reply.id]  # oldest first
    bulk = [store.find(f"Bulk note {i:02d}")[0] for i in range(4)]
    assert bulk[0].thread_id == bulk[1].thread_id == bulk[2].thread_id == format(1790000000000000001, "x")
    assert bulk[3].thread_id != bulk[0].thread_id
    lonely = store.find("No labels header")[0]
    assert lonely.thread_id == lonely.id


def test_internal_date_and_order(mailbox: Path) -> None:
    store = load_mailbox(mailbox)
    report = store.find("Quarterly report")[-1]
    assert report.internal_date == int(parsedate_to_datetime("Fri, 01 Mar 2024 09:00:00 +0000").timestamp() * 1000)
    dates = [m.internal_date for m in store.messages]
    assert dates == sorted(dates, reverse=True)  # newest first
    assert store.email_address == OWNER  # guessed from Delivered-To


def test_rebase_dates_moves_newest_to_one_hour_ago(mailbox: Path) -> None:
    plain = load_mailbox(mailbox)
    now_ms = 1_900_000_000_000
    rebased = load_mailbox(mailbox, rebase_dates=True, now_ms=now_ms)
    assert rebased.messages[0].internal_date == now_ms - HOUR_MS
    shift = rebased.messages[0].internal_date - plain.messages[0].internal_date
    for before, after in zip(plain.messages, rebased.messages, strict=True):
        assert after.id == before.id  # ids come from the original bytes
        assert after.internal_date - before.internal_date == shift
        header = after.message["Date"]
        assert int(parsedate_to_datetime(str(header)).timestamp() * 1000) == after.internal_date
    chinese = rebased.find("中文")[0]
    assert str(chinese.message["Date"]).endswith("+0800")  # time zone kept
