"""Gmail search (`q`) engine for the local emulator: parse a query once, match it against many messages.

Pure: no I/O, no clock. `compile_query(q, now_ms=...)` parses `q` with `query_parser`, building each leaf's
predicate here; it never raises: Gmail never answers `Invalid query`, it reads an invalid operator value as
words and a malformed query word by word (`query_parser.read_as_words`; Gmail Help answer 7190, amd/gaia
#2161), and returns a `CompiledQuery` whose `matches(doc)` evaluates the AST against one
`SearchDoc`. The grammar and the syntax-level deviations from Gmail are documented in `query_parser`.

Matching: text is folded (NFKC + casefold; diacritics kept) and split into tokens, each a run of letters and
digits except that every CJK character (Han, kana, Hangul) is a token of its own. A bare word or "phrase"
matches when its tokens occur consecutively in one of: subject, body, a filename, or one display name or
address in From, To or Cc. So `alice@x.com` is the run alice, x, com, punctuation does not matter, and a CJK
term matches as a substring (Gmail indexes CJK as character n-grams). A term with no tokens at all (`$$`) is a
plain substring match.

Operators: from: to: cc: bcc: deliveredto: list: take `me`, an exact address (value with @), a domain
(`@x.com`), or words of a display name / address or a substring of an address (`from:ali`, `from:x.com`);
subject:; filename: (a word of the name such as the extension, or the whole name); rfc822msgid: (exact, `<>`
optional); label: (user label name, spaces and `& ( ) " | { } / -` all written as `-` or quoted; or a system
label name);
category:, in:, is:, has:; after:/newer: (>= that day) and before:/older: (< that day); newer_than: (>=) and
older_than: (<) an age before `now_ms`; larger:/size: (> bytes), smaller: (< bytes).

Deliberate deviations from Gmail (see also `query_parser`):
- No stemming, synonyms, alias expansion or thread-wide matching; `AROUND n` is plain AND.
- `from:me` / `to:me` need `owner_email`; without it `me` matches nothing. `in:archive` = none of INBOX,
  SPAM, TRASH, DRAFT, and not a SENT message without user labels. `category:primary` = CATEGORY_PERSONAL or
  no category at all. `in:chats` = the CHAT label. `is:snoozed`, `is:muted`, `in:snoozed`, `has:drive` (and
  document/spreadsheet/presentation/youtube), `category:reservations|purchases` never match (no such data).
  The API shows any star as STARRED: `has:yellow-star` (the default) is STARRED, other stars never match.
- `has:attachment` also matches an inline image without a file name: Gmail counts them as attachments.
- `includes_spam_trash` is set by any non-negated in:spam / in:trash / in:anywhere / label:spam / label:trash,
  even inside an OR; `-in:trash` does not set it.
"""

from __future__ import annotations

import operator
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import getaddresses
from functools import lru_cache

from . import query_parser
from .query_parser import _PACIFIC as _PACIFIC  # re-exported: tests check it for tzdata
from .query_parser import Leaf, Node, Not, QuerySyntaxError, byte_count, date_ms, parse_query, relative_ms

__all__ = ["CompiledQuery", "QuerySyntaxError", "SearchDoc", "compile_query"]


@dataclass(frozen=True)
class SearchDoc:
    """What the query engine can see of one message (headers already decoded)."""

    from_: str
    to: str
    cc: str
    bcc: str
    deliveredto: str
    list_id: str
    subject: str
    body: str
    labels: frozenset[str]
    label_names: frozenset[str]
    filenames: tuple[str, ...]
    internal_date: int
    size: int
    rfc822msgid: str
    inline_images: bool = False  # an image part without a file name, shown in the body (has:attachment)


Predicate = Callable[[SearchDoc], bool]


@dataclass(frozen=True)
class _Ctx:
    now_ms: int
    owner: str


Builder = Callable[[str, _Ctx], Predicate]


# ---- evaluation
def _eval(node: Node, doc: SearchDoc) -> bool:
    if isinstance(node, Leaf):
        return node.test(doc)
    if isinstance(node, Not):
        return not _eval(node.child, doc)
    results = (_eval(child, doc) for child in node.children)
    return any(results) if node.any_ else all(results)


_SPAM_TRASH_KEYS = {("in", "spam"), ("in", "trash"), ("in", "anywhere"), ("label", "spam"), ("label", "trash")}


def _asks_spam_trash(node: Node, positive: bool = True) -> bool:
    if isinstance(node, Leaf):
        return positive and (node.op, node.value) in _SPAM_TRASH_KEYS
    if isinstance(node, Not):
        return _asks_spam_trash(node.child, not positive)
    return any(_asks_spam_trash(child, positive) for child in node.children)


@dataclass(frozen=True)
class CompiledQuery:
    """A parsed query; `ast` None (blank) matches everything. `as_words`: malformed, read word by word."""

    ast: Node | None
    includes_spam_trash: bool
    as_words: bool = False

    def matches(self, doc: SearchDoc) -> bool:
        return self.ast is None or _eval(self.ast, doc)


# ---- text matching
_CJK = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f"
)
_TOKEN_RE = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+")
_ADDRESS_RE = re.compile(r"[^\s<>,;:\"()\[\]]+@[^\s<>,;:\"()\[\]]+")
_BRACKETED_RE = re.compile(r"<([^<>\s]+)>")


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


@lru_cache(maxsize=8192)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(_TOKEN_RE.findall(_fold(text)))


@lru_cache(maxsize=4096)
def _addresses(header: str) -> frozenset[str]:
    return frozenset(_fold(addr).rstrip(".") for addr in _ADDRESS_RE.findall(header))


@lru_cache(maxsize=4096)
def _header_parts(header: str) -> tuple[str, ...]:
    """Display names and addresses of a header apart, so that a phrase cannot run from one into the next."""
    return tuple(part for pair in getaddresses([header]) for part in pair if part) or (header,)


def _has_run(hay: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    k, first = len(needle), needle[0]
    if k == 1:
        return first in hay
    return any(hay[i : i + k] == needle for i in range(len(hay) - k + 1) if hay[i] == first)


def _term_matcher(value: str) -> Callable[[str], bool]:
    """Word-run matcher for one term or phrase; substring matcher when the term has no tokens."""
    needle = _tokens(value)
    if not needle:
        sub = _fold(value)
        return lambda text: sub in _fold(text)
    return lambda text: _has_run(_tokens(text), needle)


def _bare(value: str, ctx: _Ctx) -> Predicate:
    match = _term_matcher(value)
    return lambda d: (
        any(match(f) for f in (d.subject, d.body, *d.filenames))
        or any(match(part) for header in (d.from_, d.to, d.cc) for part in _header_parts(header))
    )


# ---- operators
def _required(value: str, op: str) -> str:
    folded = _fold(value).strip()
    if not folded:
        raise QuerySyntaxError(f"{op}: needs a value")
    return folded


def _address_op(attr: str) -> Builder:
    def build(value: str, ctx: _Ctx) -> Predicate:
        v = _required(value, attr.rstrip("_"))
        if v == "me":
            me = _fold(ctx.owner).strip()
            return lambda d: bool(me) and me in _addresses(getattr(d, attr))
        if v.startswith("@"):
            return lambda d: any(a.endswith(v) for a in _addresses(getattr(d, attr)))
        if "@" in v:
            list_id = v.replace("@", ".")  # list:info@example.com names List-Id <info.example.com>
            return lambda d: (
                v in _addresses(getattr(d, attr))
                or (attr == "list_id" and list_id in {_fold(x) for x in _BRACKETED_RE.findall(d.list_id)})
            )
        words = _term_matcher(v)
        return lambda d: (
            any(words(part) for part in _header_parts(getattr(d, attr)))
            or any(v in a for a in _addresses(getattr(d, attr)))
        )

    return build


def _subject(value: str, ctx: _Ctx) -> Predicate:
    match = _term_matcher(_required(value, "subject"))
    return lambda d: match(d.subject)


def _filename(value: str, ctx: _Ctx) -> Predicate:
    v = _required(value, "filename")
    match = _term_matcher(v)
    return lambda d: any(_fold(name) == v or match(name) for name in d.filenames)


def _msgid(value: str, ctx: _Ctx) -> Predicate:
    v = _required(value, "rfc822msgid").strip("<>")
    return lambda d: _fold(d.rfc822msgid).strip().strip("<>") == v


_SYSTEM_LABELS = {
    "inbox": "INBOX",
    "starred": "STARRED",
    "unread": "UNREAD",
    "important": "IMPORTANT",
    "sent": "SENT",
    "spam": "SPAM",
    "trash": "TRASH",
    "draft": "DRAFT",
    "drafts": "DRAFT",
}


def _label_key(name: str) -> str:
    # Gmail writes spaces, the nesting slash and `& ( ) " | { }` as dashes (`label:family-kids` for
    # "Family/Kids", `label:q-a-2024` for "Q&A (2024)"); accept both spellings.
    return re.sub(r'[\s/&()"|{}-]+', "-", _fold(name).strip()).strip("-")


def _label(value: str, ctx: _Ctx) -> Predicate:
    key = _label_key(_required(value, "label"))
    if (system := _SYSTEM_LABELS.get(key)) is not None:
        return lambda d: system in d.labels
    return lambda d: any(_label_key(name) == key for name in d.label_names)


def _never(doc: SearchDoc) -> bool:
    return False


def _has_label(label_id: str) -> Predicate:
    return lambda d: label_id in d.labels


def _primary(doc: SearchDoc) -> bool:
    return "CATEGORY_PERSONAL" in doc.labels or not any(x.startswith("CATEGORY_") for x in doc.labels)


def _archived(doc: SearchDoc) -> bool:
    located = doc.labels & {"INBOX", "SPAM", "TRASH", "DRAFT"}
    return not located and ("SENT" not in doc.labels or bool(doc.label_names))


_CATEGORY: dict[str, Predicate] = {
    "primary": _primary,
    "personal": _primary,
    "social": _has_label("CATEGORY_SOCIAL"),
    "promotions": _has_label("CATEGORY_PROMOTIONS"),
    "updates": _has_label("CATEGORY_UPDATES"),
    "forums": _has_label("CATEGORY_FORUMS"),
    "reservations": _never,
    "purchases": _never,
}
_IN: dict[str, Predicate] = {
    "inbox": _has_label("INBOX"),
    "sent": _has_label("SENT"),
    "spam": _has_label("SPAM"),
    "trash": _has_label("TRASH"),
    "starred": _has_label("STARRED"),
    "important": _has_label("IMPORTANT"),
    "draft": _has_label("DRAFT"),
    "drafts": _has_label("DRAFT"),
    "chats": _has_label("CHAT"),
    "anywhere": lambda d: True,
    "archive": _archived,
    "snoozed": _never,
    "scheduled": _never,
}
_IS: dict[str, Predicate] = {
    "unread": _has_label("UNREAD"),
    "read": lambda d: "UNREAD" not in d.labels,
    "starred": _has_label("STARRED"),
    "important": _has_label("IMPORTANT"),
    "snoozed": _never,
    "muted": _never,
}
_STARS = ("orange-star", "red-star", "purple-star", "blue-star", "green-star", "red-bang", "orange-guillemet")
_MARKS = ("yellow-bang", "green-check", "blue-info", "purple-question")
_HAS: dict[str, Predicate] = {
    "attachment": lambda d: bool(d.filenames) or d.inline_images,
    "userlabels": lambda d: bool(d.label_names),
    "nouserlabels": lambda d: not d.label_names,
    "drive": _never,
    "document": _never,
    "spreadsheet": _never,
    "presentation": _never,
    "youtube": _never,
    "yellow-star": _has_label("STARRED"),
    **dict.fromkeys(_STARS + _MARKS, _never),
}


def _keyword_op(op: str, table: dict[str, Predicate]) -> Builder:
    def build(value: str, ctx: _Ctx) -> Predicate:
        v = _required(value, op)
        if v not in table:
            raise QuerySyntaxError(f"{op}:{value} is not one of {', '.join(sorted(table))}")
        return table[v]

    return build


def _compare_op(op: str, attr: str, parse: Callable[[str, int], int], cmp: Callable[[int, int], bool]) -> Builder:
    """Operator comparing an int field of the doc (`cmp(field, limit)`) with the parsed value."""

    def build(value: str, ctx: _Ctx) -> Predicate:
        try:
            limit = parse(_required(value, op), ctx.now_ms)
        except (ValueError, OverflowError, OSError) as exc:
            raise QuerySyntaxError(f"{op}:{value}: {exc}") from exc
        return lambda d: cmp(getattr(d, attr), limit)

    return build


_OPERATORS: dict[str, Builder] = {
    "from": _address_op("from_"),
    "to": _address_op("to"),
    "cc": _address_op("cc"),
    "bcc": _address_op("bcc"),
    "deliveredto": _address_op("deliveredto"),
    "list": _address_op("list_id"),
    "subject": _subject,
    "filename": _filename,
    "rfc822msgid": _msgid,
    "label": _label,
    "category": _keyword_op("category", _CATEGORY),
    "in": _keyword_op("in", _IN),
    "is": _keyword_op("is", _IS),
    "has": _keyword_op("has", _HAS),
    "after": _compare_op("after", "internal_date", date_ms, operator.ge),
    "newer": _compare_op("newer", "internal_date", date_ms, operator.ge),
    "before": _compare_op("before", "internal_date", date_ms, operator.lt),
    "older": _compare_op("older", "internal_date", date_ms, operator.lt),
    "newer_than": _compare_op("newer_than", "internal_date", relative_ms, operator.ge),
    "older_than": _compare_op("older_than", "internal_date", relative_ms, operator.lt),
    "larger": _compare_op("larger", "size", byte_count, operator.gt),
    "size": _compare_op("size", "size", byte_count, operator.gt),
    "smaller": _compare_op("smaller", "size", byte_count, operator.lt),
}


def _make_leaf(op: str | None, text: str, ctx: _Ctx) -> Leaf:
    if op is None:
        return Leaf("", _fold(text), _bare(text, ctx))
    try:
        return Leaf(op, _fold(text).strip(), _OPERATORS[op](text, ctx))
    except QuerySyntaxError:  # a value Gmail does not parse (`newer_than:7w`, `in:nowhere`): plain words
        words = f"{op}:{text}"
        return Leaf("", _fold(words), _bare(words, ctx))


def compile_query(q: str, *, now_ms: int, owner_email: str = "") -> CompiledQuery:
    """Parse a Gmail search query.

    Args:
        q: The query, as passed in `messages.list?q=`.
        now_ms: Current time in epoch milliseconds, for `newer_than:` / `older_than:`.
        owner_email: The mailbox owner's address, for `from:me` / `to:me`.

    Returns:
        A `CompiledQuery`; a blank query matches every message. Never raises for any text: what Gmail does not
        parse is read as words, as Gmail does.
    """
    ctx = _Ctx(now_ms, owner_email)

    def make_leaf(op: str | None, text: str) -> Leaf:
        return _make_leaf(op, text, ctx)

    try:
        ast = parse_query(q, _OPERATORS, make_leaf)
    except QuerySyntaxError:
        words = query_parser.read_as_words(q, _OPERATORS, make_leaf)
        return CompiledQuery(words, _asks_spam_trash(words), as_words=True)
    return CompiledQuery(ast, ast is not None and _asks_spam_trash(ast))
