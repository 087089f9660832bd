"""Outgoing mail built without I/O: addresses, threading headers, subjects, recipients, quotes, MIME, summaries."""

from __future__ import annotations

import email
import email.policy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.content.compose.addresses import (
    AddressError,
    Recipient,
    lenient_recipients,
    parse_recipients,
    split_address_list,
)
from server.content.compose.build import (
    Attachment,
    MessageTooLargeError,
    OutgoingMessage,
    build_message,
    clean_header_text,
)
from server.content.compose.quoting import QuoteSource, forward_quote, reply_quote, split_quote
from server.content.compose.reading import read_message
from server.content.compose.reply import (
    MAX_REFERENCES,
    Original,
    base_subject,
    forward_subject,
    reply_recipients,
    reply_subject,
    threading_for,
)
from server.content.compose.summary import confirmation_question, content_digest, summarize_draft

ME = "me@example.com"
ALIAS = "me.alias@work.example"


def parsed(raw: bytes) -> email.message.EmailMessage:
    return email.message_from_bytes(raw, policy=email.policy.default)


# -- addresses ------------------------------------------------------------------------------------------------------


def test_addresses_are_parsed_with_names_and_deduplicated_case_insensitively():
    found = parse_recipients(["Zoë Martin <zoe@example.com>, bob@x.org", '"Doe, John" <j@x.com>', "ZOE@EXAMPLE.COM"])
    assert [(r.name, r.email) for r in found] == [
        ("Zoë Martin", "zoe@example.com"),
        ("", "bob@x.org"),
        ("Doe, John", "j@x.com"),
    ]
    assert str(found[2]) == '"Doe, John" <j@x.com>'


def test_unicode_domains_become_idna():
    [found] = parse_recipients(["Zoë <zoe@exämple.com>"])
    assert found.email == "zoe@xn--exmple-cua.com"


@pytest.mark.parametrize(
    "entry",
    [
        "not an address",
        "a@b",  # no top-level domain
        "a@@b.com",
        "x@y.com <z@w.com>",
        "zoë@example.com",  # a Unicode local part
        "a@b.com\r\nBcc: evil@x.com",  # header injection
        "team: a@b.com, c@d.com;",  # group syntax
        "a@-bad-.com",
        f"{'x' * 65}@example.com",
    ],
)
def test_invalid_addresses_are_refused_naming_the_entry(entry):
    with pytest.raises(AddressError) as caught:
        parse_recipients([entry])
    assert repr(entry[:20])[:10] in str(caught.value)


def test_received_headers_are_read_leniently_skipping_broken_entries():
    header = '"Doe, John" <j@x.com>, garbage, <k@y.org>'
    assert split_address_list(header) == ['"Doe, John" <j@x.com>', "garbage", "<k@y.org>"]
    assert [r.email for r in lenient_recipients(header)] == ["j@x.com", "k@y.org"]


# -- threading and subjects -----------------------------------------------------------------------------------------


def original(**headers: str) -> Original:
    names = {name: name.rstrip("_").lower().replace("_", "-") for name in headers}
    return Original(gmail_id="18c0", thread_id="t-1", headers={names[k]: v for k, v in headers.items()})


def test_reply_cites_the_message_id_header_and_extends_the_chain():
    threading = threading_for(original(message_id="<m3@x>", references="<m1@x> <m2@x>", in_reply_to="<m2@x>"))
    assert threading.thread_id == "t-1"
    assert threading.in_reply_to == "<m3@x>"  # the header, never Gmail's internal id
    assert threading.references == ("<m1@x>", "<m2@x>", "<m3@x>")


def test_chain_falls_back_to_in_reply_to_and_is_trimmed_keeping_root_and_newest():
    assert threading_for(original(message_id="<b@x>", in_reply_to="<a@x>")).references == ("<a@x>", "<b@x>")
    long_chain = " ".join(f"<r{i}@x>" for i in range(50))
    refs = threading_for(original(message_id="<new@x>", references=long_chain)).references
    assert len(refs) == MAX_REFERENCES and refs[0] == "<r0@x>" and refs[-1] == "<new@x>" and refs[-2] == "<r49@x>"


def test_no_message_id_leaves_only_the_thread_id():
    threading = threading_for(original(subject="x"))
    assert threading.in_reply_to is None and threading.references == () and threading.thread_id == "t-1"


@pytest.mark.parametrize(
    "subject, expected",
    [
        ("Lunch", "Re: Lunch"),
        ("Re: Lunch", "Re: Lunch"),
        ("RE: Lunch", "RE: Lunch"),
        ("Re[2]: Lunch", "Re[2]: Lunch"),
        ("AW: Mittag", "AW: Mittag"),
        ("回复：午饭", "回复：午饭"),
        ("Fwd: Lunch", "Re: Fwd: Lunch"),
        ("  Lunch   plans ", "Re: Lunch plans"),
        ("", "Re:"),
        ("Reunion", "Re: Reunion"),  # a word starting with "re" is not a prefix
    ],
)
def test_reply_subject_adds_re_once(subject, expected):
    assert reply_subject(subject) == expected


@pytest.mark.parametrize(
    "subject, expected",
    [
        ("Lunch", "Fwd: Lunch"),
        ("Fwd: Lunch", "Fwd: Lunch"),
        ("FW: Lunch", "FW: Lunch"),
        ("Re: Lunch", "Fwd: Re: Lunch"),
    ],
)
def test_forward_subject_adds_fwd_once(subject, expected):
    assert forward_subject(subject) == expected


@given(st.text(max_size=60))
def test_subjects_never_stack_and_keep_the_base(subject):
    once = reply_subject(subject)
    assert reply_subject(once) == once
    assert forward_subject(forward_subject(subject)) == forward_subject(subject)
    assert base_subject(reply_subject(subject)) == base_subject(subject)


# -- recipients -----------------------------------------------------------------------------------------------------


def emails(people: list[Recipient]) -> list[str]:
    return [person.email for person in people]


def test_reply_goes_to_reply_to_else_from():
    assert emails(reply_recipients(original(from_="Ann <ann@x.com>"), "reply", [ME]).to) == ["ann@x.com"]
    message = original(from_="Ann <ann@x.com>", reply_to="List <list@x.com>", to=ME)
    assert emails(reply_recipients(message, "reply", [ME]).to) == ["list@x.com"]


def test_reply_all_leaves_out_every_own_address_and_duplicates():
    message = original(
        from_="Ann <ann@x.com>",
        to=f"Me <{ME}>, Bob <bob@x.com>, ANN@x.com",
        cc=f"{ALIAS}, Carol <carol@x.com>, bob@x.com",
    )
    found = reply_recipients(message, "reply_all", [ME, ALIAS.upper()])
    assert emails(found.to) == ["ann@x.com"]  # the sender; everyone else on Cc, as the thread tool says
    assert emails(found.cc) == ["bob@x.com", "carol@x.com"]
    gmail = original(from_="ann@x.com", cc="m.e+news@gmail.com, bob@x.com")
    assert emails(reply_recipients(gmail, "reply_all", ["me@gmail.com"]).cc) == ["bob@x.com"]  # dots and +tags


def test_replying_to_own_sent_mail_answers_its_recipients():
    message = original(from_=f"Me <{ME}>", to="Ann <ann@x.com>", cc="bob@x.com")
    assert emails(reply_recipients(message, "reply", [ME]).to) == ["ann@x.com"]
    both = reply_recipients(message, "reply_all", [ME])
    assert emails(both.to) == ["ann@x.com"] and emails(both.cc) == ["bob@x.com"]


def test_a_note_to_self_is_answered_to_self():
    assert emails(reply_recipients(original(from_=ME, to=ME), "reply_all", [ME]).to) == [ME]


# -- quotes ---------------------------------------------------------------------------------------------------------

SOURCE = QuoteSource("Ann <ann@x.com>", "Mon, 1 Jan 2026 10:00:00 +0000", "Lunch", ME, "", "Hello\n\nsee you\n> old")


def test_reply_quote_prefixes_every_line_and_split_finds_it_again():
    quote = reply_quote(SOURCE)
    assert "On Mon, 1 Jan 2026 10:00:00 +0000, Ann <ann@x.com> wrote:" in quote.text
    assert "> Hello\n>\n> see you\n>> old" in quote.text
    assert "&lt;ann@x.com&gt;" in quote.html and "<script" not in quote.html
    own, plain, html = split_quote("Thanks!\n\nBye" + quote.text, "<p>Thanks</p>" + quote.html)
    assert own == "Thanks!\n\nBye" and plain == quote.text and html == quote.html


def test_forward_block_names_the_original_and_split_finds_it():
    quote = forward_quote(SOURCE)
    assert "---------- Forwarded message ---------\nFrom: Ann <ann@x.com>" in quote.text
    assert "Subject: Lunch" in quote.text and "\nHello\n\nsee you\n> old" in quote.text
    assert split_quote("FYI" + quote.text) == ("FYI", quote.text, "")


def test_text_without_our_quote_is_all_own_text():
    text = "I wrote:\n> not ours\nbut no attribution line after a blank"
    assert split_quote(text) == (text, "", "")


# -- MIME ------------------------------------------------------------------------------------------------------------


def test_build_encodes_names_subjects_and_attachment_names():
    spec = OutgoingMessage(
        to=parse_recipients(["Zoë Ünï <zoe@example.com>", '"Doe, John" <j@x.com>']),
        bcc=parse_recipients(["hidden@example.com"]),
        subject="Réunion 日本語 " + "x" * 90,
        text="héllo\nwörld",
        html="<p>héllo</p>",
        in_reply_to="<a@b>",
        references=("<r@b>", "<a@b>"),
        attachments=(
            Attachment("résumé 日本.pdf", "application/pdf", b"%PDF-1.4"),
            Attachment("fwd.eml", "message/rfc822", b"Subject: inner\r\nFrom: a@b.com\r\n\r\nbody\r\n"),
        ),
    )
    raw = build_message(spec)
    assert raw.isascii() and b"\r\n" in raw
    assert b"=?utf-8?" in raw and b"filename*=utf-8''r%C3%A9sum%C3%A9" in raw
    message = parsed(raw)
    assert (
        message["To"].addresses[0].display_name == "Zoë Ünï" and message["To"].addresses[1].display_name == "Doe, John"
    )
    assert str(message["Subject"]).startswith("Réunion 日本語 x")
    assert message["In-Reply-To"] == "<a@b>" and message["References"] == "<r@b> <a@b>"
    assert message["Bcc"] == "hidden@example.com"
    assert message["Date"] is None and message["Message-ID"] is None  # Gmail sets both
    body = message.get_body(("plain",))
    assert body.get_content().replace("\r\n", "\n") == "héllo\nwörld\n"
    assert body["Content-Transfer-Encoding"] == "quoted-printable"
    assert message.get_body(("html",)).get_content().strip() == "<p>héllo</p>"
    names = [part.get_filename() for part in message.iter_attachments()]
    assert names == ["résumé 日本.pdf", "fwd.eml"]
    inner = next(part for part in message.iter_attachments() if part.get_content_type() == "message/rfc822")
    assert inner["Content-Transfer-Encoding"] != "base64"  # RFC 2046: message/rfc822 is never base64


def test_header_injection_through_the_subject_is_flattened():
    raw = build_message(OutgoingMessage(to=parse_recipients(["a@b.com"]), subject="Hi\r\nBcc: evil@x.com"))
    message = parsed(raw)
    assert message["Bcc"] is None and message["Subject"] == "Hi Bcc: evil@x.com"
    assert clean_header_text("a\n\n b\x00c") == "a b c"


def test_messages_over_25_mb_are_refused():
    huge = Attachment("big.bin", "application/octet-stream", b"\0" * (19 * 1024 * 1024))
    with pytest.raises(MessageTooLargeError):
        build_message(OutgoingMessage(to=parse_recipients(["a@b.com"]), attachments=(huge,)))


def test_reading_back_gives_text_html_attachments_and_headers():
    raw = build_message(
        OutgoingMessage(
            to=parse_recipients(["a@b.com"]),
            subject="S",
            text="line1\nline2",
            html="<b>x</b>",
            attachments=(Attachment("a.txt", "text/plain", b"data\n"), Attachment("i.png", "image/png", b"\x89PNG")),
        )
    )
    content = read_message(raw)
    assert content.text == "line1\nline2\n" and content.html.strip() == "<b>x</b>"
    assert [(a.filename, a.mime_type, a.data) for a in content.attachments] == [
        ("a.txt", "text/plain", b"data\n"),
        ("i.png", "image/png", b"\x89PNG"),
    ]
    assert content.headers["to"] == "a@b.com" and content.headers["subject"] == "S"


@given(st.binary(max_size=2000))
def test_reading_any_bytes_never_raises(data):
    read_message(data)
    read_message(b"Content-Type: multipart/mixed; boundary=x\r\n\r\n" + data)


def test_deep_nesting_is_bounded():
    raw = b"Content-Type: multipart/mixed; boundary=b0\r\n\r\n"
    for depth in range(1, 60):
        raw += f"--b{depth - 1}\r\nContent-Type: multipart/mixed; boundary=b{depth}\r\n\r\n".encode()
    content = read_message(raw)
    assert content.attachments == () and any("nested" in note for note in content.notes)


# -- summary ---------------------------------------------------------------------------------------------------------


def test_summary_shows_every_recipient_in_full_the_first_own_lines_and_attachments():
    quote = reply_quote(SOURCE)
    raw = build_message(
        OutgoingMessage(
            to=parse_recipients(["Ann <ann@x.com>"]),
            cc=parse_recipients(["bob@x.com"]),
            bcc=parse_recipients(["secret@evil.example"]),
            subject="Re: Lunch",
            text="Yes.\n" + "\n".join(f"line {n}" for n in range(20)) + quote.text,
            attachments=(Attachment("plan.pdf", "application/pdf", b"x" * 2048),),
        )
    )
    summary = summarize_draft(raw)
    assert (
        summary.to == ("Ann <ann@x.com>",) and summary.cc == ("bob@x.com",) and summary.bcc == ("secret@evil.example",)
    )
    assert summary.first_lines.startswith("Yes.\nline 0") and summary.first_lines.endswith("…")
    assert "wrote:" not in summary.first_lines  # the quote is not what the person wrote
    assert summary.attachments == ("plan.pdf (application/pdf, 2.0 KB)",)
    question = confirmation_question(summary)
    assert "Bcc (hidden from the others): secret@evil.example" in question and "Subject: Re: Lunch" in question


def test_digest_changes_with_any_byte():
    raw = build_message(OutgoingMessage(to=parse_recipients(["a@b.com"]), text="x"))
    assert content_digest(raw) == content_digest(bytes(raw))
    assert content_digest(raw) != content_digest(raw.replace(b"a@b.com", b"a@c.com"))


def test_summary_lists_unparsable_recipients_as_they_are():
    raw = b"To: good@x.com, this is not valid\r\nSubject: s\r\n\r\nbody\r\n"
    assert summarize_draft(raw).to == ("good@x.com", '"this is not valid"')
