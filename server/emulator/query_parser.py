"""Gmail search (`q`) syntax: tokenizer, recursive-descent parser, AST, and operator value parsing.

Pure: no I/O, no clock. `parse_query` turns a query into a tree of `Leaf` / `Not` / `Bool` nodes (None for a
blank query), raising `QuerySyntaxError` on malformed structure; `read_as_words` is what Gmail does instead:
it never answers `Invalid query`, it reads what it cannot parse as plain words. What a leaf matches is not
decided here: the caller (`search.compile_query`) names the known operators and builds each leaf's predicate.

Grammar (operator names and values are case-insensitive; the keywords `OR` and `AROUND` must be upper-case)::

    query   := conj EOF                            blank query: matches everything
    conj    := disj*                               whitespace = AND
    disj    := near ("OR" near)*                   OR binds tighter than AND: a OR b c == (a OR b) c
    near    := unary ("AROUND" INT unary)*         proximity is not modelled: AROUND n is AND
    unary   := "-"* primary                        "-" must touch its term: -word -"x y" -(..) -{..} -from:x
    primary := "(" conj ")" | "{" disj* "}"        {a b c} == a OR b OR c
             | NAME ":" value | PHRASE | WORD       "+word" is WORD (nothing is stemmed, so + changes nothing)
    value   := TEXT | PHRASE | "(" conj ")" | "{" disj* "}"   leaves of a group take the operator:
                                                   from:(alice OR bob), subject:(a b), subject:"a b"

Values: after:/before: take YYYY/MM/DD (or YYYY/M/D) or MM/DD/YYYY at midnight America/Los_Angeles, or epoch
seconds (`date_ms`; Gmail Help answer 7190; `2024-07-01` and `July 1` are no dates to Gmail: amd/gaia #2161);
newer_than:/older_than: take Nd, Nm (30 days) or Ny (365 days) (`relative_ms`);
larger:/smaller: take bytes with an optional K or M suffix, x1024 (`byte_count`).

How much Gmail tolerates (it never answers 400 for `q`; what it cannot parse becomes words, and the search
usually comes back empty: amd/gaia #2161, Gmail Help answer 7190):
- Unknown operators (`foo:bar`) are bare words; an operator without a value (`from: x`) is the word `from`.
- An invalid value for a known operator (`newer_than:7w`, `after:2024-07-01`, `in:nowhere`) is a bare word
  (the caller builds it: `search._make_leaf`).
- Malformed structure (unbalanced parentheses, braces or quotes, empty groups, a dangling `OR`, more than 40
  nested groups) makes `parse_query` raise; the caller then reads the query with `read_as_words`. How Gmail
  reads such a query exactly is not recorded: the emulator takes every word of it, ANDed.
- `|` is not an operator (Gmail does not document it): it is a tokenless term, i.e. a substring match.
- Without tzdata (Windows with no `tzdata` package) dates use a fixed UTC-8, an hour off in summer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any

try:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    _PACIFIC: tzinfo = ZoneInfo("America/Los_Angeles")
except (ImportError, ZoneInfoNotFoundError):  # pragma: no cover - depends on the platform's tz database
    _PACIFIC = timezone(timedelta(hours=-8), "PST")

__all__ = [
    "Bool",
    "Leaf",
    "Node",
    "Not",
    "QuerySyntaxError",
    "byte_count",
    "date_ms",
    "parse_query",
    "read_as_words",
    "relative_ms",
]


class QuerySyntaxError(ValueError):
    """The query cannot be parsed or an operator has an invalid value (Gmail: 400 invalidArgument)."""


# ---- AST
@dataclass(frozen=True)
class Leaf:
    op: str  # "" for a bare word or phrase
    value: str  # folded, for inspection (includes_spam_trash)
    test: Callable[[Any], bool]  # predicate over a `search.SearchDoc`


@dataclass(frozen=True)
class Not:
    child: Node


@dataclass(frozen=True)
class Bool:
    any_: bool  # True: OR of the children; False: AND
    children: tuple[Node, ...]


Node = Leaf | Not | Bool

# Builds the leaf for (operator, or None for a bare term; raw value text); may raise QuerySyntaxError.
LeafFactory = Callable[[str | None, str], Leaf]


def _combine(items: list[Node], *, any_: bool) -> Node:
    return items[0] if len(items) == 1 else Bool(any_, tuple(items))


# ---- operator values
_EPOCH_RE = re.compile(r"[0-9]{1,15}")
_YMD_RE = re.compile(r"([0-9]{4})/([0-9]{1,2})/([0-9]{1,2})")
_MDY_RE = re.compile(r"([0-9]{1,2})/([0-9]{1,2})/([0-9]{4})")
_RELATIVE_RE = re.compile(r"([0-9]{1,9})([dmy])")
_SIZE_RE = re.compile(r"([0-9]{1,15})([km]?)b?")
_DAY_MS = 86_400_000


def date_ms(v: str, now_ms: int) -> int:
    """Epoch ms of an absolute date: epoch seconds, or midnight Pacific time of a calendar date."""
    if _EPOCH_RE.fullmatch(v):
        return int(v) * 1000
    if m := _YMD_RE.fullmatch(v):
        year, month, day = int(m[1]), int(m[2]), int(m[3])
    elif m := _MDY_RE.fullmatch(v):
        month, day, year = int(m[1]), int(m[2]), int(m[3])
    else:
        raise ValueError("not a date (YYYY/MM/DD, MM/DD/YYYY or epoch seconds)")
    return int(datetime(year, month, day, tzinfo=_PACIFIC).timestamp()) * 1000


def relative_ms(v: str, now_ms: int) -> int:
    """Epoch ms of `now_ms` minus an age such as 3d, 2m or 1y."""
    if (m := _RELATIVE_RE.fullmatch(v)) is None:
        raise ValueError("expected a number followed by d, m or y")
    return now_ms - int(m[1]) * {"d": 1, "m": 30, "y": 365}[m[2]] * _DAY_MS


def byte_count(v: str, now_ms: int) -> int:
    """Bytes of a size such as 500, 10k or 2M (`now_ms` is unused: same signature as the date parsers)."""
    if (m := _SIZE_RE.fullmatch(v)) is None:
        raise ValueError("expected a byte count, optionally with K or M")
    return int(m[1]) * {"": 1, "k": 1024, "m": 1024 * 1024}[m[2]]


# ---- tokenizer and parser
@dataclass(frozen=True)
class _Tok:
    kind: str  # ( ) { } - OR AROUND WORD PHRASE OP (inline value) OPGROUP (value is the next primary)
    text: str
    value: str = ""


_MAX_DEPTH = 40


_LEX_RE = re.compile(
    r'(?P<space>\s+)|(?P<punct>[(){}])|"(?P<phrase>[^"]*)"|(?P<quote>")|(?P<neg>-(?=\S))'
    r'|(?P<dash>-)|(?P<word>[^\s(){}"]+)'
)


def _tokenize(q: str, operators: Collection[str]) -> list[_Tok]:
    toks: list[_Tok] = []
    for m in _LEX_RE.finditer(q):
        kind = m.lastgroup or "space"
        text, after = m[kind], q[m.end() : m.end() + 1]
        if kind == "quote":
            raise QuerySyntaxError("unbalanced quote")
        if kind == "dash":
            continue  # a lone "-" negates nothing and has no letters: Gmail finds no word in it
        if kind in ("punct", "phrase", "neg"):
            toks.append(_Tok({"punct": text, "phrase": "PHRASE", "neg": "-"}[kind], text))
        if kind != "word":
            continue
        name, colon, value = text.partition(":")
        if colon and name.casefold() in operators:
            if not value and not (after and after in '({"'):
                toks.append(_Tok("WORD", name))  # `from: x`: no value, so `from` is a word like any other
                continue
            toks.append(_Tok("OP" if value else "OPGROUP", name.casefold(), value))
        elif text in ("OR", "AROUND"):
            toks.append(_Tok(text, text))
        elif text != "+" or after != '"':  # +"phrase" is the phrase; +word is the word
            toks.append(_Tok("WORD", text[1:] if text.startswith("+") and len(text) > 1 else text))
    return toks


class _Parser:
    def __init__(self, toks: list[_Tok], make_leaf: LeafFactory) -> None:
        self.toks, self.make_leaf, self.pos, self.depth = toks, make_leaf, 0, 0

    def peek(self, ahead: int = 0) -> _Tok | None:
        at = self.pos + ahead
        return self.toks[at] if at < len(self.toks) else None

    def parse(self) -> Node | None:
        items = self.items(None)
        if (tok := self.peek()) is not None:
            raise QuerySyntaxError(f"unbalanced {tok.text!r}")
        return _combine(items, any_=False) if items else None

    def items(self, field: str | None) -> list[Node]:
        items: list[Node] = []
        while (tok := self.peek()) is not None and tok.kind not in (")", "}"):
            items.append(self.disj(field))
        return items

    def disj(self, field: str | None) -> Node:
        items = [self.near(field)]
        while (tok := self.peek()) is not None and tok.kind == "OR":
            self.pos += 1
            items.append(self.near(field))
        return _combine(items, any_=True)

    def near(self, field: str | None) -> Node:
        items = [self.unary(field)]
        while (tok := self.peek()) is not None and tok.kind == "AROUND" and self._distance_follows():
            self.pos += 2
            items.append(self.unary(field))
        return _combine(items, any_=False)

    def _distance_follows(self) -> bool:
        num = self.peek(1)
        return num is not None and num.kind == "WORD" and _EPOCH_RE.fullmatch(num.text) is not None

    def unary(self, field: str | None) -> Node:
        negations = 0
        while (tok := self.peek()) is not None and tok.kind == "-":
            negations += 1
            self.pos += 1
        node = self.primary(field)
        return Not(node) if negations % 2 else node

    def primary(self, field: str | None) -> Node:
        tok = self.peek()
        if tok is None:
            raise QuerySyntaxError("query ends where a term is expected")
        self.pos += 1
        if tok.kind in ("(", "{"):
            return self.group(field, tok.kind)
        if tok.kind in (")", "}", "OR"):
            raise QuerySyntaxError(f"unexpected {tok.text!r} where a term is expected")
        if tok.kind == "OP":
            return self.make_leaf(tok.text, tok.value)
        if tok.kind == "OPGROUP":
            return self.primary(tok.text)
        return self.make_leaf(field, tok.text)  # WORD, PHRASE, or AROUND without a distance

    def group(self, field: str | None, opener: str) -> Node:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise QuerySyntaxError(f"query nests deeper than {_MAX_DEPTH} groups")
        items, closer = self.items(field), ")" if opener == "(" else "}"
        if (tok := self.peek()) is None or tok.kind != closer:
            raise QuerySyntaxError(f"unbalanced {opener!r}")
        if not items:
            raise QuerySyntaxError(f"empty {opener}{closer} group")
        self.pos += 1
        self.depth -= 1
        return _combine(items, any_=opener == "{")


def parse_query(q: str, operators: Collection[str], make_leaf: LeafFactory) -> Node | None:
    """Parse `q` into an AST, or None for a blank query.

    Args:
        q: The query text.
        operators: Known operator names (lower-case); `name:value` with any other name is a bare word.
        make_leaf: Builds each leaf as soon as it is parsed, so an invalid value is reported before later
            syntax errors.

    Raises:
        QuerySyntaxError: The query is malformed, or `make_leaf` rejected a value.
    """
    return _Parser(_tokenize(q, operators), make_leaf).parse()


_WORD_SEPARATORS = re.compile(r'[\s(){}"]+')


def read_as_words(q: str, operators: Collection[str], make_leaf: LeafFactory) -> Node:
    """A query `parse_query` rejected, as Gmail reads it: its terms ANDed, brackets and quotes dropped.

    `name:value` of a known operator stays that operator, `-term` stays negated, `OR` and `AROUND` are dropped.
    A query with no term left (`()`, `"`) is one term of its text, which matches nothing where it is absent.
    """
    leaves: list[Node] = []
    for word in _WORD_SEPARATORS.split(q):
        negated = word.startswith("-")
        word = word.lstrip("-+")
        if not word or word in ("OR", "AROUND"):
            continue
        name, colon, value = word.partition(":")
        leaf = make_leaf(name.casefold(), value) if colon and value and name.casefold() in operators else None
        leaf = leaf or make_leaf(None, word)
        leaves.append(Not(leaf) if negated else leaf)
    return _combine(leaves, any_=False) if leaves else make_leaf(None, q)
