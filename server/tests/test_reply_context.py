"""Reply context (pure): recipients, subject, In-Reply-To and References for a reply that stays in its thread."""

from __future__ import annotations

from server.content.message import ParsedMessage, parse_message
from server.content.reply import (
    MAX_REFERENCES,
    base_subject,
    format_address,
    message_id_header,
    normalized_address,
    own_addresses,
    references_header,
    reply_context,
    reply_subject,
)

ME = "me@example.com"


def message(
    message_id: str,
    *,
    sender: str,
    to: str = ME,
    cc: str = "",
    reply_to: str = "",
    subject: str = "Plan",
    labels: tuple[str, ...] = ("INBOX",),
    header_id: str | None = None,
    references: str = "",
    in_reply_to: str = "",
    when: int = 0,
) -> ParsedMessage:
    headers = [
        {"name": "From", "value": sender},
        {"name": "To", "value": to},
        {"name": "Subject", "value": subject},
        {"name": "Message-ID", "value": header_id or f"<{message_id}@mail.example>"},
    ]
    for name, value in (("Cc", cc), ("Reply-To", reply_to), ("References", references), ("In-Reply-To", in_reply_to)):
        if value:
            headers.append({"name": name, "value": value})
    return parse_message(
        {
            "id": message_id,
            "threadId": "t1",
            "labelIds": list(labels),
            "internalDate": str(1_700_000_000_000 + when),
            "payload": {"mimeType": "text/plain", "headers": headers, "body": {"size": 0}},
        }
    )


def test_reply_all_goes_to_the_sender_with_everyone_else_on_cc_minus_the_account():
    thread = [
        message("a", sender="Ann <ann@example.com>", to=f"Me <{ME}>, Bob <bob@example.com>", cc="carol@example.com"),
    ]
    context = reply_context(thread, own_addresses(thread, ME))
    assert [a.email for a in context.to] == ["ann@example.com"]
    assert [a.email for a in context.cc] == ["bob@example.com", "carol@example.com"]
    assert context.subject == "Re: Plan" and context.in_reply_to == "<a@mail.example>"
    assert context.references == "<a@mail.example>" and context.last_from_me is False


def test_reply_to_header_wins_over_from_and_duplicates_collapse():
    thread = [
        message("a", sender="Ann <ann@example.com>", reply_to="team@example.com", to="team@example.com, me@example.com")
    ]
    context = reply_context(thread, own_addresses(thread, ME))
    assert [a.email for a in context.to] == ["team@example.com"] and context.cc == ()


def test_a_reply_to_one_s_own_message_goes_to_its_recipients():
    thread = [
        message("a", sender="Ann <ann@example.com>"),
        message("b", sender=f"Me <{ME}>", to="Ann <ann@example.com>", cc="bob@example.com", labels=("SENT",), when=1),
    ]
    context = reply_context(thread, own_addresses(thread, None))  # the account's address known only from SENT
    assert context.last_from_me is True and context.message_id == "b"
    assert [a.email for a in context.to] == ["ann@example.com"] and [a.email for a in context.cc] == ["bob@example.com"]


def test_drafts_and_trash_are_not_what_a_reply_answers():
    thread = [
        message("a", sender="Ann <ann@example.com>"),
        message("b", sender=f"Me <{ME}>", to="ann@example.com", labels=("DRAFT",), when=1),
        message("c", sender="Spam <x@spam.example>", labels=("TRASH",), when=2),
    ]
    assert reply_context(thread, own_addresses(thread, ME)).message_id == "a"


def test_references_chain_the_parent_s_references_and_message_id_trimmed_to_the_first_and_newest():
    chain = " ".join(f"<m{n}@x>" for n in range(40))
    thread = [message("z", sender="ann@example.com", references=chain, header_id="<z@x>")]
    refs = reply_context(thread, frozenset()).references.split()
    assert len(refs) == MAX_REFERENCES and refs[0] == "<m0@x>" and refs[-1] == "<z@x>" and refs[-2] == "<m39@x>"
    only_in_reply_to = [message("y", sender="ann@example.com", in_reply_to="<p@x>", header_id="<y@x>")]
    assert reply_context(only_in_reply_to, frozenset()).references == "<p@x> <y@x>"


def test_a_note_to_self_is_answered_to_the_account():
    thread = [message("a", sender=f"Me <{ME}>", to=ME, labels=("SENT", "INBOX"))]
    context = reply_context(thread, own_addresses(thread, ME))
    assert [a.email for a in context.to] == [ME]


def test_gmail_addresses_compare_without_dots_plus_tags_and_case():
    assert normalized_address("Jane.Doe+news@GoogleMail.com") == normalized_address("janedoe@gmail.com")
    assert normalized_address("Jane.Doe@example.com") != normalized_address("janedoe@example.com")
    thread = [message("a", sender="ann@example.com", to="J.Doe+x@gmail.com, bob@example.com")]
    context = reply_context(thread, own_addresses(thread, "jdoe@gmail.com"))
    assert [a.email for a in context.cc] == ["bob@example.com"]


def test_subjects_get_one_reply_prefix_in_any_language():
    assert reply_subject("Plan") == "Re: Plan"
    for already in ("Re: Plan", "RE: Plan", "AW: Plan", "SV: Plan", "回复：计划", "Re[2]: Plan"):
        assert reply_subject(already) == already
    assert reply_subject("  Fwd:  Plan ") == "Re: Fwd: Plan"
    assert base_subject("Re: Fwd: AW: Plan") == base_subject("plan") == "plan"


def test_header_values_are_read_defensively():
    assert message_id_header(message("a", sender="x@y.z", header_id="  <a@b>  (comment)")) == "<a@b>"
    assert message_id_header(message("a", sender="x@y.z", header_id="bare@id")) == "<bare@id>"
    assert references_header(message("a", sender="x@y.z", references="<1@x>\n <2@x> junk <1@x>")) == "<1@x> <2@x>"
    assert references_header(message("a", sender="x@y.z")) is None


def test_hostile_recipient_lists_are_bounded():
    many = ", ".join(f"user{n}@example.com" for n in range(5000))
    thread = [message("a", sender="ann@example.com", to=many)]
    context = reply_context(thread, frozenset())
    assert len(context.to) + len(context.cc) == 100 and context.omitted_recipients == 4901


def test_names_that_need_quotes_are_quoted():
    (address,) = message("a", sender='"Doe, Jane" <jane@example.com>').from_
    assert format_address(address) == '"Doe, Jane" <jane@example.com>'
