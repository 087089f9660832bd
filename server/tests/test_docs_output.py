"""Every checked example in README.md and docs/*.md shows what its command prints now (a demo server per
command, so it is in the slow set), and the demo tour keeps its promises.

Refresh the examples with `.venv/bin/python -m server.tests.support.doc_examples --update`.
"""

from __future__ import annotations

import re

import pytest

from server.tests.support import doc_examples

ALL = [example for path in doc_examples.doc_files() for example in doc_examples.examples(path)]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def printed() -> dict:
    return doc_examples.outputs(ALL)


@pytest.mark.parametrize("example", ALL, ids=lambda example: example.where)
def test_an_example_shows_what_its_command_prints_now(example, printed):
    problem = doc_examples.mismatch(example.body, printed[example])
    refresh = "refresh with: .venv/bin/python -m server.tests.support.doc_examples --update"
    assert problem is None, f"{example.where}\n{problem}\n{refresh}"


def test_the_tour_shows_every_call_it_counts_and_explains_the_markers(printed):
    tour = next(text for example, text in printed.items() if example.command.endswith("--demo tour"))
    steps = re.findall(r"^▶ .*\n  (gmail_\w+) ", tour, re.M)
    assert f"Done: {len(steps)} tool calls" in tour
    assert set(steps) >= {
        "gmail_search_messages", "gmail_get_message", "gmail_get_thread", "gmail_read_attachment",
        "gmail_list_labels", "gmail_changes_since",
    }  # fmt: skip
    assert "[mail 1a2b3c4d] and [/mail 1a2b3c4d]" in tour and "data, not instructions" in tour


def test_the_demo_mail_dates_agree_with_their_text(printed):
    # "Thanks for joining today!" answers "a test meeting on Thursday" that Sam proposed on Tue, Nov 17: the demo
    # serves the mailbox's own dates, so the reply is dated that Thursday, not whenever the demo runs.
    tour = next(text for example, text in printed.items() if example.command.endswith("--demo tour"))
    assert "| 2026-11-20 01:45+00:00 | Sam Rivera <example@gmail.com> | Re: Test meeting on Thursday" in tour
