"""The mistakes models make in Gmail queries, found before Gmail silently reads them as words. Pure.

Gmail never answers `Invalid query`: an operator value it cannot parse becomes plain words and the search comes
back empty (amd/gaia #2161: `after:July 1` searched as text, count 0, "no messages in that range"). So when a
search comes back empty, `lint_query` says what Gmail did not understand and `LintResult.corrected` shows the
query as Gmail would read it. Checked (Gmail Help answer 7190 is the reference for what Gmail accepts):

- `after:` / `before:` (and `newer:` / `older:`) dates other than YYYY/MM/DD (YYYY/M/D), MM/DD/YYYY or epoch
  seconds; `2024-07-01`, `July 1, 2024`, `1.7.2024`, `yesterday` are rewritten when their meaning is clear
  (a date without a year, or a relative word, only with `today` given).
- `newer_than:` / `older_than:` units other than d, m, y (`7days`, `2w`, `12h`, a bare `7`).
- `is:` / `in:` / `has:` / `category:` values Gmail does not document (an existing label name is fine after
  `in:` and `is:`: the two are lenient in Gmail).
- Unbalanced quotes, parentheses or braces.
- `label:` names that name no label (only when the label list is given): the closest names are suggested.

It never flags what Gmail accepts: anything it does not recognise as one of these mistakes passes.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from server.gmail.label_match import Label, close_matches, label_key
from server.gmail.query import label as gmail_label_term

__all__ = ["LintResult", "QueryProblem", "gmail_label_term", "lint_query", "needs_labels"]


@dataclass(frozen=True)
class QueryProblem:
    term: str  # as written in the query
    problem: str  # a plain sentence
    fix: str | None  # the term as Gmail reads it, or None when there is no sure correction


@dataclass(frozen=True)
class LintResult:
    problems: tuple[QueryProblem, ...]
    corrected: str | None  # the whole query with every fix applied; None when nothing could be fixed

    def __bool__(self) -> bool:
        return bool(self.problems)


DATE_OPERATORS = frozenset({"after", "before", "newer", "older"})
RELATIVE_OPERATORS = frozenset({"newer_than", "older_than"})
_STARS = ("yellow", "orange", "red", "purple", "blue", "green")
_MARKS = ("red-bang", "orange-guillemet", "yellow-bang", "green-check", "blue-info", "purple-question")
_LOCATIONS = {
    *("inbox", "sent", "draft", "drafts", "spam", "trash", "starred", "important", "unread", "read"),
    *("chat", "chats", "snoozed", "muted", "scheduled", "anywhere", "archive", "all", "sent-mail"),
}
KNOWN_VALUES: dict[str, frozenset[str]] = {
    "is": frozenset(_LOCATIONS),
    "in": frozenset(_LOCATIONS),
    "has": frozenset(
        {"attachment", "drive", "document", "spreadsheet", "presentation", "youtube", "userlabels", "nouserlabels"}
        | {f"{colour}-star" for colour in _STARS}
        | set(_MARKS)
    ),
    "category": frozenset(
        {"primary", "personal", "social", "promotions", "updates", "forums", "reservations", "purchases"}
    ),
}
# What models write for a documented value; a whole term where the operator itself is the mistake.
_SYNONYMS = {
    ("in", "archived"): "in:archive",
    ("is", "archived"): "in:archive",
    ("in", "all-mail"): "in:anywhere",
    ("in", "allmail"): "in:anywhere",
    ("is", "flagged"): "is:starred",
    ("is", "new"): "is:unread",
    ("is", "seen"): "is:read",
    ("is", "unseen"): "is:unread",
    ("has", "attachments"): "has:attachment",
    ("has", "file"): "has:attachment",
    ("has", "files"): "has:attachment",
    ("has", "pdf"): "filename:pdf",
    ("has", "star"): "is:starred",
    ("has", "label"): "has:userlabels",
    ("has", "labels"): "has:userlabels",
    **{(op, name): f"category:{name}" for op in ("in", "is", "label") for name in ("primary", "social")},
    **{(op, name): f"category:{name}" for op in ("in", "is") for name in ("promotions", "updates", "forums")},
}
_SYSTEM_LABEL_NAMES = _LOCATIONS | {"sent mail", "category_personal", "category_social", "category_promotions"}
_SYSTEM_LABEL_NAMES |= {"category_updates", "category_forums", "important", "draft"}

_TERM_RE = re.compile(r'(?P<neg>-?)(?P<op>[A-Za-z_]+):(?P<val>"[^"]*"|[^\s(){}"]*)|"[^"]*"|[^\s"(){}]+|["(){}]')
_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        1,
    )
    for name in names
}
_GMAIL_DATE = re.compile(r"[0-9]{4}/[0-9]{1,2}/[0-9]{1,2}|[0-9]{1,2}/[0-9]{1,2}/[0-9]{4}|[0-9]+")
_GMAIL_AGE = re.compile(r"[0-9]+[dmy]", re.IGNORECASE)
_YEAR_FIRST = re.compile(r"([0-9]{4})[-._]([0-9]{1,2})[-._]([0-9]{1,2})(?:T[0-9:.]+Z?)?")
_YEAR_LAST = re.compile(r"([0-9]{1,2})([-.])([0-9]{1,2})\2([0-9]{4})")
_NAMED = re.compile(
    r"([a-z]+)\.? ?([0-9]{1,2})(?:st|nd|rd|th)?,? ?([0-9]{4})?|([0-9]{1,2})(?:st|nd|rd|th)? ?([a-z]+)\.?,? ?([0-9]{4})?"
)
_AGE = re.compile(r"([0-9]+) ?([a-z]*)")
_AGE_UNITS = {
    **dict.fromkeys(("", "d", "day", "days"), ("d", 1)),
    **dict.fromkeys(("w", "wk", "wks", "week", "weeks"), ("d", 7)),
    **dict.fromkeys(("mo", "mon", "month", "months"), ("m", 1)),
    **dict.fromkeys(("y", "yr", "yrs", "year", "years"), ("y", 1)),
}
_UNDER_A_DAY = frozenset({"h", "hr", "hrs", "hour", "hours", "min", "mins", "minute", "minutes", "s", "sec"})


def lint_query(query: str, labels: Sequence[Label] | None = None, today: date | None = None) -> LintResult:
    """What in `query` Gmail would read as words rather than as the operator meant; empty when nothing.

    Args:
        query: The query as sent to Gmail.
        labels: labels.list's labels, to check `label:` names (and `in:` / `is:` values); None skips those.
        today: To rewrite dates without a year and words such as `yesterday`; None leaves them unfixed.
    """
    terms = list(_TERM_RE.finditer(query))
    problems: list[QueryProblem] = []
    edits: list[tuple[int, int, str]] = []
    skip_until = 0
    for index, match in enumerate(terms):
        if match.start() < skip_until or not match["op"]:
            continue
        op, raw = match["op"].lower(), match["val"]
        value, end = raw.strip('"'), match.end()
        if op == "label" and not raw.startswith('"'):  # `label:Q&A-(2024)`: the brackets cut the term short
            value = _label_run(query[match.start("val") :])
            end = match.start("val") + len(value)
        following = [t[0] for t in terms[index + 1 : index + 3]]
        found = _check(op, value, raw.startswith('"'), following, labels, today)
        if found is None:
            continue
        problem, fix, used = found
        end = terms[index + used].end() if used else end
        term = query[match.start() : end]
        fixed = f"{match['neg']}{fix}" if fix is not None else None
        problems.append(QueryProblem(term, problem, fixed))
        if fixed is not None:
            edits.append((match.start(), end, fixed))
        skip_until = end
    corrected = query
    for start, end, text in reversed(edits):
        corrected = corrected[:start] + text + corrected[end:]
    balanced, structural = _balance(corrected)
    problems.extend(structural)
    if not problems:
        return LintResult((), None)
    return LintResult(tuple(problems), balanced if balanced != query else None)


def _label_run(text: str) -> str:
    """A label: value up to the next space, without the closing brackets of a group around the term."""
    run = re.match(r"\S*", text)[0]  # type: ignore[index]
    while run and run[-1] in ")}" and run.count(run[-1]) > run.count({")": "(", "}": "{"}[run[-1]]):
        run = run[:-1]
    return run


def _check(
    op: str, value: str, quoted: bool, following: list[str], labels: Sequence[Label] | None, today: date | None
) -> tuple[str, str | None, int] | None:
    """(problem, fixed term, how many following terms the fix takes in), or None when the term is fine."""
    if op in DATE_OPERATORS:
        return _check_date(op, value, quoted, following, today)
    if op in RELATIVE_OPERATORS:
        return _check_age(op, value, quoted, following)
    if op in KNOWN_VALUES:
        return _check_keyword(op, value, labels)
    if op == "label" and labels is not None and value:
        return _check_label(value, labels)
    return None


def _check_date(
    op: str, value: str, quoted: bool, following: list[str], today: date | None
) -> tuple[str, str | None, int] | None:
    if not value or _GMAIL_DATE.fullmatch(value):
        return None
    used = 0
    text = value.lower()
    if not quoted:  # `after:July 1, 2024`: the day and year are the next terms
        for word in following:
            if not re.fullmatch(r"[0-9]{1,4}(?:st|nd|rd|th)?,?", word):
                break
            text, used = f"{text} {word.lower()}", used + 1
    day = _read_date(text.strip(), today)
    problem = (
        f"Gmail reads {op}: dates only as YYYY/MM/DD, MM/DD/YYYY or epoch seconds: {op}:{value!s} is "
        "searched as plain words, which is why nothing matched"
    )
    if day is None:
        return problem + ".", None, 0
    return problem + ".", f"{op}:{day.year:04d}/{day.month:02d}/{day.day:02d}", used


def _read_date(text: str, today: date | None) -> date | None:
    try:
        if m := _YEAR_FIRST.fullmatch(text):
            return date(int(m[1]), int(m[2]), int(m[3]))
        if m := _YEAR_LAST.fullmatch(text):
            first, second, year = int(m[1]), int(m[3]), int(m[4])
            day_first = m[2] == "." if first <= 12 and second <= 12 else first > 12
            return date(year, second, first) if day_first else date(year, first, second)
        if today is not None and text in ("today", "yesterday", "tomorrow"):
            return today + timedelta(days={"today": 0, "yesterday": -1, "tomorrow": 1}[text])
        if m := _NAMED.fullmatch(text):
            month_name, day, year = (m[1], m[2], m[3]) if m[1] else (m[5], m[4], m[6])
            month = _MONTHS.get(month_name)
            if month is None or (year is None and today is None):
                return None
            return date(int(year) if year else today.year, month, int(day))  # type: ignore[union-attr]
    except ValueError:  # no such day: no sure correction
        return None
    return None


def _check_age(op: str, value: str, quoted: bool, following: list[str]) -> tuple[str, str | None, int] | None:
    if not value or _GMAIL_AGE.fullmatch(value):
        return None
    text, used = value.lower(), 0
    if not quoted and value.isdecimal() and following and following[0].isalpha():
        text, used = f"{text}{following[0].lower()}", 1  # `newer_than:7 days`
    problem = (
        f"Gmail reads {op}: only as a number of days, months or years (7d, 3m, 1y): {op}:{value} is searched as words."
    )
    m = _AGE.fullmatch(text)
    if m is None:
        return problem, None, 0
    number, unit = int(m[1]), m[2]
    if unit in _UNDER_A_DAY:
        return problem + " A day is its smallest unit.", f"{op}:1d", used
    if unit not in _AGE_UNITS:
        return problem, None, 0
    letter, times = _AGE_UNITS[unit]
    return problem, f"{op}:{number * times}{letter}", used


def _check_keyword(op: str, value: str, labels: Sequence[Label] | None) -> tuple[str, str | None, int] | None:
    key = value.lower()
    if not key or key in KNOWN_VALUES[op]:
        return None
    if op in ("in", "is") and (labels is None or _find_label_name(value, labels) is not None):
        return None  # Gmail takes a label name after in:; without the list there is no telling
    known = sorted(KNOWN_VALUES[op])
    fix = _SYNONYMS.get((op, key))
    if fix is None:
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
        fix = f"{op}:{close[0]}" if close else None
    listed = ", ".join(value for value in known if op != "has" or not value.endswith(("-star", "-bang", "-check")))
    return (
        f"{op}:{value} is not a Gmail search operator value, so it is searched as words ({op}: takes {listed}).",
        fix,
        0,
    )


def _find_label_name(value: str, labels: Sequence[Label]) -> str | None:
    wanted = {label_key(value), gmail_label_term(value).casefold()}
    for label in labels:
        name = label.get("name")
        if isinstance(name, str) and (
            wanted & {label_key(name), gmail_label_term(name).casefold()} or label.get("id") == value
        ):
            return name
    return None


def _check_label(value: str, labels: Sequence[Label]) -> tuple[str, str | None, int] | None:
    key = value.lower()
    if key.startswith(("(", "{")):
        return None  # label:(a OR b): a group, its words are terms of their own
    if re.search(r"[(){}]", value) and (name := _find_label_name(value, labels)) is not None:
        return (
            f"Gmail's search splits label:{value} at its brackets, so it matches nothing: write the label as "
            "Gmail does, or pass it in label_ids.",
            gmail_label_term(name),
            0,
        )
    if key in _SYSTEM_LABEL_NAMES or key.startswith(("^", "category_")) or _find_label_name(value, labels):
        return None
    if (synonym := _SYNONYMS.get(("label", key))) is not None:
        return f"label:{value} is not a label: Gmail's tabs are searched with category:.", synonym, 0
    suggestions = close_matches(value, labels)
    problem = f"No label named {value!r} exists in this mailbox, so label:{value} matches nothing."
    if not suggestions:
        return problem + " gmail_list_labels lists every label.", None, 0
    named = ", ".join(repr(name) for name in suggestions)
    return f"{problem} Did you mean {named}?", gmail_label_term(suggestions[0]), 0


def _balance(query: str) -> tuple[str, list[QueryProblem]]:
    """The query with unbalanced quotes, parentheses and braces closed or dropped, and what was wrong."""
    problems: list[QueryProblem] = []
    if query.count('"') % 2:
        problems.append(QueryProblem('"', "A quote is never closed.", None))
        query += '"'
    kept: list[str] = []
    open_: list[str] = []
    in_quote = False
    stray = 0
    for char in query:
        if char == '"':
            in_quote = not in_quote
        elif not in_quote and char in "({":
            open_.append(char)
        elif not in_quote and char in ")}":
            if not open_ or open_[-1] != {")": "(", "}": "{"}[char]:
                stray += 1
                continue
            open_.pop()
        kept.append(char)
    if stray:
        problems.append(QueryProblem(")", f"{stray} closing bracket(s) close nothing.", None))
    if open_:
        problems.append(QueryProblem("(", f"{len(open_)} bracket(s) are never closed.", None))
    closing = "".join({"(": ")", "{": "}"}[char] for char in reversed(open_))
    return "".join(kept) + closing, problems


_NEEDS_LABELS = re.compile(r"(?<![^\s(){}-])(?P<op>label|in|is):(?P<val>\"[^\"]*\"|[^\s(){}\"]+)", re.IGNORECASE)


def needs_labels(query: str) -> bool:
    """True when a `label:`, `in:` or `is:` term names something only the label list can tell apart."""
    for match in _NEEDS_LABELS.finditer(query):
        value = match["val"].strip('"').lower()
        known = _SYSTEM_LABEL_NAMES if match["op"].lower() == "label" else KNOWN_VALUES[match["op"].lower()]
        if value not in known and not value.startswith(("(", "{", "^", "category_")):
            return True
    return False
