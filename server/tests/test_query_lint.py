"""The query lint (`server/gmail/query_lint.py`): pure, plain asserts and hypothesis.

Evidence for what Gmail accepts: Gmail Help answer 7190 (search operators: after:/before: as YYYY/MM/DD or
MM/DD/YYYY, newer_than: in d/m/y, the is:/in:/has:/category: values incl. has:yellow-star, has:blue-info,
is:muted, in:snoozed, category:reservations); amd/gaia #2161 (`after:July 1` is searched as words, count 0).
"""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.gmail.query_lint import KNOWN_VALUES, gmail_label_term, lint_query

TODAY = date(2026, 11, 26)
LABELS = [
    {"id": "INBOX", "name": "INBOX", "type": "system"},
    {"id": "Label_1", "name": "Q&A (2024)", "type": "user"},
    {"id": "Label_2", "name": "Family/Kids", "type": "user"},
    {"id": "Label_3", "name": "Project Phoenix", "type": "user"},
    {"id": "Label_4", "name": "Receipts", "type": "user"},
]


@pytest.mark.parametrize(
    ("query", "corrected"),
    [
        ("after:July 1 before:July 8", "after:2026/07/01 before:2026/07/08"),  # amd/gaia #2161, word for word
        ("after:2024-07-01", "after:2024/07/01"),
        ('before:"July 1, 2024" from:bob', "before:2024/07/01 from:bob"),
        ('after:"1 July 2024"', "after:2024/07/01"),
        ("after:31.12.2023", "after:2023/12/31"),
        ("-after:yesterday", "-after:2026/11/25"),
        ("newer_than:7days", "newer_than:7d"),
        ("newer_than:7 days is:unread", "newer_than:7d is:unread"),
        ("older_than:2w", "older_than:14d"),
        ("newer_than:3months", "newer_than:3m"),
        ("newer_than:12h", "newer_than:1d"),
        ("newer_than:7", "newer_than:7d"),
        ("is:archived", "in:archive"),
        ("in:primary", "category:primary"),
        ("has:attachments", "has:attachment"),
        ("has:pdf", "filename:pdf"),
        ("category:promotion", "category:promotions"),
        ("label:Q&A-(2024)", "label:Q-A-2024"),
        ("label:famly-kids", "label:Family-Kids"),
        ("(label:recepts OR label:inbox)", "(label:Receipts OR label:inbox)"),
        ('subject:"weekly report', 'subject:"weekly report"'),
        ("(from:a OR from:b", "(from:a OR from:b)"),
        ("from:a)", "from:a"),
    ],
)
def test_mistakes_are_named_and_corrected(query: str, corrected: str) -> None:
    result = lint_query(query, LABELS, TODAY)
    assert result and result.corrected == corrected
    assert all(problem.problem.endswith((".", "?")) for problem in result.problems)
    assert not lint_query(corrected, LABELS, TODAY)  # the corrected form is clean


def test_problems_say_what_gmail_does_and_suggest_labels() -> None:
    (dated,) = lint_query("after:July 1", today=TODAY).problems
    assert "YYYY/MM/DD" in dated.problem and "plain words" in dated.problem and dated.term == "after:July 1"
    (label,) = lint_query("label:famly", LABELS).problems
    assert "'Family/Kids'" in label.problem and label.fix == "label:Family-Kids"
    (unknown,) = lint_query("label:zzzz", LABELS).problems
    assert unknown.fix is None and "gmail_list_labels" in unknown.problem
    (keyword,) = lint_query("is:bogus", LABELS).problems
    assert keyword.fix is None and "unread" in keyword.problem


def test_without_today_or_labels_nothing_is_guessed() -> None:
    (problem,) = lint_query("after:July 1").problems
    assert problem.fix is None and lint_query("after:July 1").corrected is None
    assert not lint_query("label:anything in:anything is:whatever")  # no label list: could be a label


@pytest.mark.parametrize(
    "query",
    [
        "after:2024/07/01 before:2024/7/8",
        "after:07/01/2024 before:7/8/2024",
        "after:1719792000",
        'after:"2024/07/01"',
        "newer_than:2d older_than:1Y newer_than:3m",
        "has:yellow-star OR has:blue-info OR has:purple-question",
        "is:muted is:snoozed in:snoozed in:anywhere in:archive in:chats",
        "category:reservations category:purchases category:primary",
        'label:family-kids label:Family/Kids label:q-a-2024 label:inbox label:"Project Phoenix"',
        "in:receipts is:receipts",  # a label name after in:
        "label:Label_4",  # a label's id: never claimed wrong
        "label:(receipts OR inbox)",
        'foo:bar http://x.example -{a b} "a (b" ',
        "",
    ],
)
def test_what_gmail_accepts_is_never_flagged(query: str) -> None:
    assert lint_query(query, LABELS, TODAY).problems == ()


# ---- properties

WORDS = st.sampled_from(["invoice", "alice@x.com", "report", "会议", "+word", "-spam", "AROUND", "x-y", "$5"])
ACCEPTED_TERMS = st.one_of(
    WORDS,
    st.builds(lambda op, value: f"{op}:{value}", st.sampled_from(sorted(KNOWN_VALUES)), st.just("")).filter(bool),
    *(
        st.builds(lambda value, op=op: f"{op}:{value}", st.sampled_from(sorted(values)))
        for op, values in KNOWN_VALUES.items()
    ),
    st.builds(
        lambda op, y, m, d, form: f"{op}:" + [f"{y}/{m}/{d}", f"{y}/{m:02d}/{d:02d}", f"{m}/{d}/{y}"][form],
        st.sampled_from(["after", "before", "older", "newer"]),
        st.integers(1990, 2100),
        st.integers(1, 12),
        st.integers(1, 28),
        st.integers(0, 2),
    ),
    st.builds(lambda op, n: f"{op}:{n}", st.sampled_from(["after", "before"]), st.integers(0, 10**10)),
    st.builds(
        lambda op, n, unit: f"{op}:{n}{unit}",
        st.sampled_from(["newer_than", "older_than"]),
        st.integers(0, 999),
        st.sampled_from("dmyDMY"),
    ),
    st.builds(lambda label: gmail_label_term(label["name"]), st.sampled_from(LABELS)),
    st.builds(lambda label: f'label:"{label["name"]}"', st.sampled_from(LABELS[2:])),
    st.builds(lambda text: f'"{text}"', st.text(alphabet=st.characters(blacklist_characters='"'), max_size=12)),
)


def _queries(depth: int) -> st.SearchStrategy[str]:
    terms = ACCEPTED_TERMS if depth == 0 else st.one_of(ACCEPTED_TERMS, _queries(depth - 1).map(lambda q: f"({q})"))
    negated = st.tuples(st.booleans(), terms).map(lambda pair: ("-" if pair[0] else "") + pair[1])
    joiner = st.sampled_from([" ", " OR ", "  "])
    return st.lists(st.tuples(negated, joiner), min_size=1, max_size=5).map(
        lambda parts: "".join(term + sep for term, sep in parts[:-1]) + parts[-1][0]
    )


@given(query=_queries(2))
def test_queries_gmail_accepts_are_never_flagged(query: str) -> None:
    """The lint must never claim a query Gmail accepts is wrong (answer 7190's forms, balanced structure)."""
    assert lint_query(query, LABELS, TODAY).problems == ()


@given(query=st.text(max_size=80), labels=st.sampled_from([None, LABELS]))
def test_any_text_lints_without_error_and_corrections_are_balanced(query: str, labels) -> None:
    result = lint_query(query, labels, TODAY)
    assert result.corrected is None or result.problems
    if result.corrected is not None:
        assert result.corrected.count('"') % 2 == 0
        assert not [p for p in lint_query(result.corrected, labels, TODAY).problems if p.term in '"(){}']
