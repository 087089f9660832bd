"""strip_quoted_reply (server/content/text/quotes.py): quoted history goes, the author's own text never does."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from server.content.message import strip_quoted_reply
from server.content.text import body_slice, quotes
from server.tests.data.quote_cases import QuoteCase
from server.tests.data.quote_cases_blocks import QUOTE_CASES


def test_the_old_import_paths_still_work() -> None:
    assert body_slice.strip_quoted_reply is quotes.strip_quoted_reply is strip_quoted_reply


def test_there_are_enough_cases_across_languages() -> None:
    assert len(QUOTE_CASES) >= 30
    assert len({case.name.split("-")[0] for case in QUOTE_CASES}) >= 15


@pytest.mark.parametrize("case", QUOTE_CASES, ids=[case.name for case in QUOTE_CASES])
def test_history_goes_and_the_author_text_stays_whole(case: QuoteCase) -> None:
    stripped = strip_quoted_reply(case.text)
    assert stripped == case.author
    assert [sentence for sentence in case.quoted if sentence in stripped] == []


@pytest.mark.parametrize("case", QUOTE_CASES, ids=[case.name for case in QUOTE_CASES])
def test_crlf_bodies_strip_the_same(case: QuoteCase) -> None:
    assert strip_quoted_reply(case.text.replace("\n", "\r\n")).replace("\r\n", "\n") == case.author


# -- the author's own text ------------------------------------------------------------------------------------

AUTHOR_ONLY = [
    "I wrote: the deadline is Friday, not Thursday.",
    "As Carol wrote: we should ship it.\n\nThanks,\nAnna",
    "Here is what the customer wrote:\nThe parcel arrived damaged and the box was open.\nPlease advise.",
    "On Monday, the team wrote:\nwe need two more days for testing.",
    "On 4 March 2024 the board wrote: budgets are frozen until May.",
    "From: the warehouse in Milan, the pallets leave on Monday.\nTo: be confirmed by the carrier.",
    "Flight details\nFrom: Berlin\nTo: Paris\nDate: 4 March 2024, 09:15\nSeat: 12A",
    "Please use this template:\nFrom: your name\nDate: today\nSubject: leave request",
    "Q: When is the launch?\nA: Tuesday at 10:00.\nQ: Where?\nA: Room 4.",
    "---- Agenda ----\n1. Budget\n2. Hiring",
    "Thanks!\n\n______________\nAnna Smith\nHead of Sales",
    "Try this in the console:\n>>> total = sum(values)\nand tell me what it prints.",
    "Subject: the new budget is approved.\nDate: we still need one for the offsite.",
    "Il giorno dopo ha scritto a tutti: nessuno ha risposto.",
    "Ich schrieb ihm gestern: keine Antwort bisher.",
    "Meeting moved to 10:30, call me at +1 555 0100 or mail anna@example.com:\nI am in the office all day.",
    "Le client a écrit : le colis est arrivé abîmé.",
    "Forwarding policy: see the wiki.\nOriginal message size: 2 MB.",
    "Ask Carol <carol@example.com> if she wrote the summary:\nit is missing the totals.",
]


@pytest.mark.parametrize("text", AUTHOR_ONLY)
def test_the_authors_text_alone_is_never_touched(text: str) -> None:
    assert strip_quoted_reply(text) == text


@pytest.mark.parametrize("text", AUTHOR_ONLY)
@pytest.mark.parametrize("case", QUOTE_CASES[::7], ids=[case.name for case in QUOTE_CASES[::7]])
def test_the_authors_tricky_lines_survive_above_real_history(text: str, case: QuoteCase) -> None:
    if case.body is not None:
        return
    assert strip_quoted_reply(f"{text}\n\n{case.history}\n") == text


# Last lines of an author's text that sit right above the attribution when HTML is turned into text (no blank line
# between): none may be taken for part of a wrapped attribution.
LAST_LINES = [
    "Anna",
    "Thanks,",
    "Sent from my iPhone",
    "Anna Kowalska | Senior Account Manager | ACME Corporation Poland",
    "Let me know if 10:30 works for you and the whole team tomorrow",
    "Best regards, Anna Smith (anna@example.com)",
    "Call me at 10:30 tomorrow, Carol Smith <carol@example.com>",
]


@pytest.mark.parametrize("last", LAST_LINES)
def test_author_lines_right_above_the_attribution_survive(last: str) -> None:
    failures = []
    for case in QUOTE_CASES:
        if case.body is None:
            author = f"{case.author}\n{last}"
            if strip_quoted_reply(f"{author}\n{case.history}\n") != author:
                failures.append(case.name)
    assert failures == []


_TRICKY_LINES = [line for text in AUTHOR_ONLY for line in text.split("\n") if line.strip()]
_WORDS = st.text(alphabet="abcdefghij klmnop ABCDE,.!?:;-0123456789éßж中", min_size=1, max_size=60)
_AUTHOR_LINE = st.one_of(st.sampled_from(_TRICKY_LINES), _WORDS.filter(lambda s: not s.lstrip().startswith(">")))
_HISTORIES = [case.history for case in QUOTE_CASES if case.body is None]


@given(st.lists(_AUTHOR_LINE, min_size=1, max_size=12), st.sampled_from(_HISTORIES))
@settings(deadline=None)
def test_property_author_lines_survive_any_history(lines: list[str], history: str) -> None:
    author = "\n".join(line.rstrip() for line in lines).strip()
    # A rule line ("______") right above an Outlook header block belongs to the block.
    assume(author and not set(author.split("\n")[-1]) <= set("_-= "))
    assert strip_quoted_reply(f"{author}\n\n{history}\n") == author


@given(st.lists(_AUTHOR_LINE, min_size=1, max_size=12))
@settings(deadline=None)
def test_property_text_without_history_is_unchanged(lines: list[str]) -> None:
    # Signed off: a ">" line at the very end would be a trailing quote, which does go.
    text = "\n".join(line.rstrip() for line in lines).strip() + "\nAnna"
    assert strip_quoted_reply(text) == text


# -- forwards and edges ---------------------------------------------------------------------------------------

FORWARDS = [
    "FYI\n\n---------- Forwarded message ---------\nFrom: Carol <carol@example.com>\n"
    "Date: Mon, Mar 4, 2024 at 9:12 AM\nSubject: Plan\nTo: Anna <anna@example.com>\n\nDoes Thursday work?",
    "Zur Info\n\n---------- Weitergeleitete Nachricht ---------\nVon: Hans Müller <hans@example.de>\n"
    "Date: Mo., 4. März 2024 um 09:12 Uhr\nSubject: Angebot\nTo: <anna@example.com>\n\nanbei unser Angebot.",
    "Voir ci-dessous.\n\nDébut du message réexpédié :\n\nDe: Sophie Martin <sophie@example.fr>\n"
    "Objet: Devis\nDate: 4 mars 2024 à 09:12:00 UTC+1\nÀ: Anna <anna@example.com>\n\nNotre proposition.",
    "See below\n\nBegin forwarded message:\n\nFrom: Carol <carol@example.com>\nSubject: Plan\n"
    "Date: March 4, 2024 at 9:12:00 AM GMT+1\nTo: Anna <anna@example.com>\n\n"
    "On Sun, Mar 3, 2024 at 8:00 PM Dave <dave@example.com> wrote:\n> older thread text",
    "-------- Forwarded Message --------\nSubject: Plan\nDate: Mon, 4 Mar 2024 09:12:00 +0100\n"
    "From: Carol <carol@example.com>\nTo: Anna <anna@example.com>\n\nDoes Thursday work?",
]


@pytest.mark.parametrize("text", FORWARDS)
def test_forwarded_messages_are_content_and_kept_whole(text: str) -> None:
    assert strip_quoted_reply(text) == text


def test_a_reply_above_a_forward_still_loses_its_quote() -> None:
    text = (
        "Thanks, will do.\n\nOn Mon, Mar 4, 2024 at 9:12 AM Carol <carol@example.com> wrote:\n\n> FYI\n>\n"
        "> ---------- Forwarded message ---------\n> From: Dave <dave@example.com>\n> Subject: Plan\n"
    )
    assert strip_quoted_reply(text) == "Thanks, will do."


def test_edges() -> None:
    assert strip_quoted_reply("") == "" and strip_quoted_reply("no quotes") == "no quotes"
    only_quote = "On Mon, Mar 4, 2024 at 9:12 AM Carol <carol@example.com> wrote:\n> everything\n> is quoted"
    assert strip_quoted_reply(only_quote) == only_quote  # nothing would be left: unchanged
    assert strip_quoted_reply("New text\n\n> old\n>> older\n") == "New text"
    assert strip_quoted_reply(None) == ""  # type: ignore[arg-type]
    long_line = "x" * 5000 + " wrote:"
    assert strip_quoted_reply(f"Hi\n{long_line}\n> q") == f"Hi\n{long_line}"


def test_hostile_sizes_stay_fast() -> None:
    import time

    text = ("On Mon, Mar 4, 2024 at 9:12 AM, " + "a " * 200 + "wrote:\n" + "From: x\n" * 30) * 300
    started = time.process_time()  # CPU time: a shared machine's load does not count against it
    strip_quoted_reply(text)
    assert time.process_time() - started < 5
