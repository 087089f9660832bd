"""Content fidelity: every corpus message (server/tests/data) read through the emulator with the real
google-api-python-client, parsed, and checked against its hand-written expectations, in both body-charset modes
(Gmail re-encoding text parts to UTF-8, or keeping the declared bytes); `raw` must give the same message. The
demo mailbox's legacy-charset messages are checked the same way (through the emulator's payloads, no HTTP).

Regenerate the corpus with `.venv/bin/python -m server.tests.data.make_corpus` after changing a case.
"""

from __future__ import annotations

import base64
import time

import pytest

from server.content.message import parse_message, parse_raw_message
from server.demo import DEMO_MAILBOX
from server.demo.generator.content import CHARSET_CASES, build_mails
from server.demo.generator.make_mailbox import build
from server.emulator import load_mailbox
from server.emulator.payloads import PayloadBuilder
from server.tests.data.corpus_mime import PDF
from server.tests.data.corpus_structure import LARGE_END
from server.tests.data.make_corpus import all_cases, stale_files
from server.tests.support.corpus_served import LARGE, MODES, Served, corpus_mailbox, entries, problems, serve

ENTRIES = entries()
# Where the emulator's stand-in for Gmail's UTF-8 conversion loses characters, only declared bytes can match.
LOSSY_IN_UTF8 = {entry["case"] for entry in ENTRIES if entry["expect"].get("contains_declared")}
# Kinds of mail the issue lists; each must have at least one case (names as in corpus_*.py).
REQUIRED = [
    *("utf8-8bit", "gb2312-gbk-chars", "gbk-qp", "gb18030-4byte", "big5", "iso-2022-jp", "shift-jis", "euc-kr"),
    *("windows-1252", "wrong-label-gbk-as-utf8", "header-b-and-q", "header-mixed-folded", "header-folded-long"),
    *("rfc2231-filenames", "quoted-printable", "base64-crlf", "alternative-in-mixed", "related-inline-images"),
    *("forward-inline", "html-newsletter", "calendar-invite", "pgp-signed", "smime-signed", "pgp-encrypted"),
    *("smime-encrypted", "no-content-type", "empty-body", "nameless-attachments", "nesting-60", "invalid-base64"),
    *("unknown-charset-utf8", "unknown-charset-latin"),
]


@pytest.fixture(scope="module")
def mailbox(tmp_path_factory: pytest.TempPathFactory):
    return corpus_mailbox(tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="module", params=MODES)
def served(request: pytest.FixtureRequest, mailbox, tmp_path_factory: pytest.TempPathFactory):
    with serve(mailbox, request.param, tmp_path_factory.mktemp("token")) as running:
        yield running


def test_corpus_is_complete_and_regenerates_byte_identically() -> None:
    assert stale_files() == [], "run: .venv/bin/python -m server.tests.data.make_corpus"
    names = [case.name for case in all_cases()]
    assert len(names) >= 40 and not set(REQUIRED) - set(names)
    assert [entry["case"] for entry in ENTRIES] == names


@pytest.mark.parametrize("entry", ENTRIES, ids=[entry["case"] for entry in ENTRIES])
def test_full_format_meets_expectations(served: Served, entry: dict) -> None:
    assert problems(served.full(entry["case"]), entry["expect"], served.mode) == []


@pytest.mark.parametrize("entry", ENTRIES, ids=[entry["case"] for entry in ENTRIES])
def test_raw_format_gives_the_same_message(served: Served, entry: dict) -> None:
    raw = parse_raw_message(served.client.get_message(served.ids[entry["case"]], fmt="raw"))
    full = served.full(entry["case"])
    assert problems(raw, entry["expect"], "raw") == []
    if served.mode == "declared" or entry["case"] not in LOSSY_IN_UTF8:
        assert raw.body_text == full.body_text
    assert [(a.filename, a.mime_type, a.size, a.inline) for a in raw.attachments] == [
        (a.filename, a.mime_type, a.size, a.inline) for a in full.attachments
    ]
    assert (raw.subject, raw.from_, raw.to, raw.date_iso) == (full.subject, full.from_, full.to, full.date_iso)
    assert raw.body_source == full.body_source


def test_five_megabyte_body_is_read_whole(served: Served) -> None:
    started = time.perf_counter()
    resource = served.client.get_message(served.ids[LARGE.name], fmt="full")
    fetched = time.perf_counter()
    parsed = parse_message(resource)
    parse_s = time.perf_counter() - fetched
    assert problems(parsed, LARGE.expect, served.mode) == []
    assert parsed.body_text is not None and parsed.body_text.endswith(LARGE_END)
    # Generous bound (the bench measures ~0.1 s): catches a quadratic step, not a slow machine.
    assert parse_s < 5, f"parsing 5 MB took {parse_s:.2f} s (fetch {fetched - started:.2f} s)"


def test_forwarded_message_has_gmails_part_tree(served: Served) -> None:
    """message/rfc822 comes as one child part carrying the inner message's headers and its own parts."""
    resource = served.client.get_message(served.ids["forward-inline"], fmt="full")
    forwarded = resource["payload"]["parts"][1]
    assert forwarded["mimeType"] == "message/rfc822" and forwarded["body"]["size"] > 0
    (inner,) = forwarded["parts"]
    assert inner["partId"] == "1.0" and inner["mimeType"] == "multipart/mixed"
    assert {"name": "Subject", "value": "Budget approved"} in inner["headers"]
    assert [part["partId"] for part in inner["parts"]] == ["1.0.0", "1.0.1"]
    pdf = served.full("forward-inline").attachments[0]
    assert pdf.part_id == "1.0.1" and pdf.attachment_id
    stored = served.emulator.store.by_id[served.ids["forward-inline"]]
    fetched = served.emulator.app.api.payloads.attachment(stored, pdf.attachment_id)
    assert base64.urlsafe_b64decode(fetched["data"]) == PDF


def test_named_forward_is_an_attachment_and_readable(served: Served) -> None:
    resource = served.client.get_message(served.ids["forward-attached-jis"], fmt="full")
    forwarded = resource["payload"]["parts"][1]
    assert forwarded["filename"] == "original.eml" and forwarded["body"]["attachmentId"]
    stored = served.emulator.store.by_id[served.ids["forward-attached-jis"]]
    eml = served.emulator.app.api.payloads.attachment(stored, forwarded["body"]["attachmentId"])
    assert b"X-Corpus-Case: inner-2" in base64.urlsafe_b64decode(eml["data"])


@pytest.fixture(scope="module")
def demo_by_key():
    """The demo mailbox's stored messages by content key (the demo's legacy-charset cases live there)."""
    store = load_mailbox(DEMO_MAILBOX)
    by_message_id = {str(m.message["Message-ID"]): m for m in store.messages}
    return {item.mail.key: by_message_id[item.message_id] for item in build(build_mails())}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CHARSET_CASES, ids=[case.key for case in CHARSET_CASES])
def test_demo_mailbox_charsets_parse_to_the_intended_text(demo_by_key, case, mode: str) -> None:
    stored = demo_by_key[case.key]
    parsed = parse_message(PayloadBuilder(mode).message(stored, "", "full"))
    assert parsed.subject == case.subject
    assert case.body_snippet in (parsed.body_text or "")
    assert parse_raw_message(PayloadBuilder(mode).message(stored, "", "raw")).body_text == parsed.body_text
