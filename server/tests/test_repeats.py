"""Quoted history found by content (pure): a reply's tail that repeats what the thread already said is dropped,
whatever language or program introduced it; new words, interleaved answers and repeated own sentences stay."""

from __future__ import annotations

import textwrap

import pytest

from server.content.message import strip_quoted_reply
from server.content.text.repeats import (
    MAX_LINES,
    MAX_REMEMBERED,
    MAX_TEXT_CHARS,
    MAX_TOKENS,
    drop_dangling_lead_in,
    drop_repeated_tail,
    own_words,
    remember,
)

FIRST = (
    "Proposal for the offsite: Thursday and Friday at Casa do Largo, ten minutes from the hotel.\n"
    "The budget is 7,620 EUR for six people, under the cap; please book flights before December 1.\n"
    "What would you like on the agenda?\n\nAna\n"
)


def seen_from(*texts: str) -> set[int]:
    seen: set[int] = set()
    for text in texts:
        remember(text, seen)
    return seen


def test_a_rewrapped_quote_under_an_unknown_attribution_is_dropped():
    rewrapped = textwrap.fill(FIRST.replace("\n", " "), 50)
    reply = "Sounds good to me, I will book tomorrow.\n\nOn 3/11, Ana Souza escribió algo así:\n" + rewrapped
    assert drop_repeated_tail(reply, seen_from(FIRST)) == "Sounds good to me, I will book tomorrow."


def test_an_outlook_block_without_quote_marks_is_dropped_with_its_header_lines_kept_out():
    reply = (
        "Fine by me.\n\n________________________________\nDe : Ana Souza\nEnvoyé : lundi 2 novembre\n"
        "Objet : Offsite\n\n" + FIRST
    )
    kept = drop_repeated_tail(reply, seen_from(FIRST))
    assert "Proposal for the offsite" not in kept and kept.startswith("Fine by me.")


def test_interleaved_answers_keep_their_new_lines():
    reply = (
        "> Proposal for the offsite: Thursday and Friday at Casa do Largo, ten minutes from the hotel.\n"
        "Thursday works, Friday I have to leave at noon for the airport.\n"
        "> The budget is 7,620 EUR for six people, under the cap; please book flights before December 1.\n"
        "Booked mine already, it came in at 380 EUR.\n"
    )
    assert drop_repeated_tail(reply, seen_from(FIRST)) == reply


def test_a_sentence_the_author_repeats_before_new_words_is_not_taken_for_a_quote():
    reply = (
        "The budget is 7,620 EUR for six people, under the cap; please book flights before December 1.\n"
        "That is my last reminder, after that the prices double.\n"
    )
    assert drop_repeated_tail(reply, seen_from(FIRST)) == reply


def test_chinese_quotes_compare_character_by_character():
    original = "关于第三季度的订单，我们已经安排生产，预计十二月中旬发货。请您确认一下收货地址和联系人是否有变化。\n"
    reply = "地址没有变化，谢谢。\n\n王经理在某日来信：\n" + "\n".join(
        original[i : i + 17] for i in range(0, len(original), 17)
    )
    assert drop_repeated_tail(reply, seen_from(original)) == "地址没有变化，谢谢。"


def test_own_words_run_over_a_thread_in_order():
    second = "Add a budget review on Friday morning please, forty-five minutes should do.\n"
    third = "Agreed, the budget review goes on Friday at nine.\n"
    texts = [
        FIRST,
        second + "\nOn Mon, Ana wrote:\n" + "".join(f"> {line}\n" for line in FIRST.splitlines()),
        third + "\nLe lundi, François a écrit :\n> " + second + "> \n> Ana said:\n> > " + FIRST.splitlines()[0],
    ]
    words = own_words(texts, strip_quoted_reply)
    assert words == [FIRST.strip(), second.strip(), third.strip()]


def test_bounded_work_on_hostile_input():
    huge = "x y z w\n" * (MAX_LINES + 1)
    assert drop_repeated_tail(huge, seen_from(huge)) == huge  # too many lines: left to the marker stripper
    assert drop_repeated_tail("anything at all here", set()) == "anything at all here"


def test_a_lead_in_left_hanging_over_removed_quote_lines_goes_but_a_closing_colon_stays():
    original = "Fine by me.\n\nQuoth the raven, at dawn:\n> Nevermore, nevermore.\n> Again."
    assert drop_dangling_lead_in(original, "Fine by me.\n\nQuoth the raven, at dawn:") == "Fine by me."
    own = "Here are the numbers:"
    assert drop_dangling_lead_in(own + "\n", own) == own  # nothing quoted follows: the author's own words
    assert drop_dangling_lead_in("Only:\n> quoted", "Only:") == "Only:"  # never leaves a message empty


@pytest.mark.slow  # multi-megabyte: the slow tier
def test_memory_stays_bounded_over_a_thread_of_huge_bodies():
    body = "\n".join(f"line {n} with a few distinct words number {n} here" for n in range(4_000))
    seen: set[int] = set()
    for _ in range(40):
        remember(body, seen)
    assert len(seen) <= MAX_REMEMBERED + MAX_TOKENS
    huge = "words " * (MAX_TEXT_CHARS // 6 + 10)
    assert drop_repeated_tail(huge, seen_from(huge)) == huge  # past the bound: the marker stripper alone
