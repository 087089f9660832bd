"""Every shortcut a search takes for speed gives exactly what the general path gives.

A search's CPU is spent on ten results' headers (addresses, dates, domains named in a snippet); each of those got
a fast path for the common case (bench/search_bench.py measures the effect).
Here each fast path is compared with the general code it stands in for, on the common case and on generated
input built to sit near its edges.
"""

from __future__ import annotations

import base64
import dataclasses
import re
from email.utils import parsedate_tz

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from server.content.message import (
    Address,
    _common_date,
    _common_iso,
    _parsed_iso,
    _scan_addresses,
    _split_addresses,
    parse_addresses,
)
from server.content.mime.part import first_headers
from server.content.security import domains
from server.content.security.authentication import parse_authentication_results
from server.content.text.charsets import lenient_b64
from server.content.text.snippets import clean_snippet
from server.toolsets import envelope

# -- domains a text names ------------------------------------------------------------------------------------------


def _named_domains_by_scanning(text: str, limit: int = domains.MAX_NAMED) -> list[str]:
    """The general path: every pattern over the whole text."""
    found: dict[str, None] = {}
    if "." not in text:
        return []
    for pattern in (domains._URL_HOST, domains._EMAIL, domains._DOMAIN):
        for match in pattern.finditer(text):
            host = match.group(1).rstrip(".").lower()
            tld = host.rsplit(".", 1)[-1]
            if pattern is domains._DOMAIN and tld not in domains.TLDS and not tld.startswith("xn--"):
                continue
            if "." in host:
                found.setdefault(domains.normalize_host(host), None)
                if len(found) >= limit:
                    return list(found)
    return list(found)


_DOMAINISH = st.lists(
    st.sampled_from([*list("abcpyl.-@:/_ 0"), "com", "co.uk", "https://", "\xa0", "\t", "а", "xn--", "\u3000", "..."]),
    max_size=40,
).map("".join)


@given(text=_DOMAINISH, limit=st.integers(1, 5))
@example(text="Sign in at paypal.com or https://login.paypa1.com/x and mail help@secure-pay.co.uk.", limit=20)
@example(text="node.js e.g. a@b.c paypal.com.", limit=20)
@example(text="Thanks, see you today. Or later... https://a. https://a.b. a@b. a@b.co. x.y.. ...", limit=20)
def test_named_domains_word_by_word_equals_scanning_the_whole_text(text, limit):
    assert domains.named_domains(text, limit) == _named_domains_by_scanning(text, limit)


# -- address lists -------------------------------------------------------------------------------------------------

_ADDRESSISH = st.lists(st.sampled_from([*list('ab @.<>()",;:\\ \t'), "=?utf-8?q?x?=", "é"]), max_size=30).map("".join)


@given(value=_ADDRESSISH)
@example(value="Sam Rivera <example@gmail.com>")
@example(value="  ")
def test_splitting_without_separators_equals_the_scan(value):
    assert _split_addresses(value) == _scan_addresses(value)


def test_the_usual_from_header_parses_as_before():
    (sender,) = parse_addresses("Sam Rivera <example@gmail.com>")
    assert (sender.name, sender.email) == ("Sam Rivera", "example@gmail.com")
    (quoted,) = parse_addresses('"Rivera, Sam" <sam@example.com>')
    assert (quoted.name, quoted.email) == ("Rivera, Sam", "sam@example.com")


# -- dates ---------------------------------------------------------------------------------------------------------

_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_MONTH_NAMES = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec", "Foo"]


@given(
    day_name=st.sampled_from([*_DAYS, "", "mon"]),
    day=st.integers(0, 39),
    month=st.sampled_from([*_MONTH_NAMES, "jan", "DEC"]),
    year=st.integers(0, 9999),
    clock=st.tuples(st.integers(0, 99), st.integers(0, 99), st.integers(0, 99)),
    sign=st.sampled_from("+-"),
    zone=st.integers(0, 9999),
)
def test_the_common_date_form_reads_as_parsedate_tz_reads_it(day_name, day, month, year, clock, sign, zone):
    prefix = f"{day_name}, " if day_name else ""
    value = f"{prefix}{day} {month} {year:04d} {clock[0]:02d}:{clock[1]:02d}:{clock[2]:02d} {sign}{zone:04d}"
    fast = _common_date(value)
    if fast is not None:  # the fast path either declines (parsedate_tz decides) or agrees exactly
        assert fast == parsedate_tz(value)


@pytest.mark.parametrize(
    "value",
    ["Sun, 22 Nov 2026 23:59:31 -0800", "1 Jan 2024 00:00:00 +0000", "Tue, 3 Mar 2020 01:02:03 -0000"],
)
def test_what_mailers_write_takes_the_fast_path(value):
    assert _common_date(value) is not None
    assert _common_date(value) == parsedate_tz(value)


@pytest.mark.parametrize(
    "value", ["Sun, 22 Nov 26 23:59:31 -0800", "Sun, 22 Nov 2026 23:59 -0800", "22 Nov 2026 23:59:31 PST", "x"]
)
def test_other_forms_are_left_to_parsedate_tz(value):
    assert _common_date(value) is None


_ARABIC_INDIC = str.maketrans("0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669")


@given(
    day=st.integers(0, 39),
    month=st.sampled_from([*_MONTH_NAMES, "feb", "DEC"]),
    year=st.sampled_from([1000, 1900, 2000, 2023, 2024, 2100, 9999]) | st.integers(0, 9999),
    clock=st.tuples(st.integers(0, 99), st.integers(0, 99), st.integers(0, 99)),
    zone=st.sampled_from(["+0000", "-0000", "-0800", "+0530", "+0099", "-1260", "+2359", "-2400", "+9999"]),
    around=st.sampled_from(["", " ", "\t", "\u00a0"]),
    unicode_day=st.booleans(),
)
@example(day=29, month="Feb", year=2024, clock=(23, 59, 59), zone="-0800", around="", unicode_day=False)
@example(day=29, month="Feb", year=1900, clock=(0, 0, 0), zone="+0000", around="", unicode_day=False)
@example(day=31, month="Apr", year=2026, clock=(12, 0, 0), zone="+0530", around="", unicode_day=False)
@example(day=1, month="Jan", year=2026, clock=(24, 0, 0), zone="+0000", around="", unicode_day=False)
@example(day=5, month="Nov", year=2026, clock=(9, 5, 60), zone="-0000", around=" ", unicode_day=False)
def test_the_common_date_is_written_as_datetime_writes_it(day, month, year, clock, zone, around, unicode_day):
    day_text = str(day).translate(_ARABIC_INDIC) if unicode_day else str(day)
    value = f"{around}Wed, {day_text} {month} {year:04d} {clock[0]:02d}:{clock[1]:02d}:{clock[2]:02d} {zone}{around}"
    if value.isascii() and _common_date(value) is not None:
        # Same text as the general reading, and None exactly where that reading rejects the date.
        assert _common_iso(value) == _parsed_iso(value)
    else:
        assert _common_iso(value) is None  # other forms and non-ASCII digits: the general reading decides


def test_what_mailers_write_is_written_without_datetime():
    assert _common_iso("Wed, 25 Nov 2026 18:00:23 -0800") == "2026-11-25T18:00:23-08:00"
    assert _common_iso("1 Feb 2024 07:08:09 +0000") == "2024-02-01T07:08:09+00:00"


# -- snippets ------------------------------------------------------------------------------------------------------


@given(st.text(st.sampled_from(list("ab \t\n\u00a0\u2007\u3000\u200b\u200c\x1c\x85")), max_size=30))
def test_snippet_whitespace_collapses_as_the_regex_did(text):
    cleaned = clean_snippet(text, max_chars=1000)
    reference = re.sub(r"\s+", " ", re.sub("[\u200b]", "", text)).strip()
    if "\u200c" not in text:
        assert cleaned == (reference or None)


# -- Authentication-Results ----------------------------------------------------------------------------------------

_RESULTSISH = st.lists(
    st.sampled_from(
        [
            "mx.google.com",
            "MX.Google.com",
            "other.example",
            ";",
            " ",
            "\n\t",
            "spf",
            "dkim",
            "dmarc",
            "/1",
            "=",
            "pass",
            "fail",
            "hardfail",
            "softfail",
            "(",
            ")",
            "smtp.mailfrom",
            "header.from",
            "header.d",
            "header.i",
            "@",
            "a.example",
            "İ",
            "\u212a",
        ]
    ),
    max_size=30,
).map("".join)


@given(value=_RESULTSISH)
@example(value="mx.google.com; dkim=pass header.i=@gmail.com header.b=Hj; spf=pass (x; y) smtp.mailfrom=a@gmail.com")
@example(value="mx.google.com; spf=hardfail; dkim=fail header.d=a.example; dkim=pass header.i=@b.example; dmarc=fail")
@example(value="mx.google.com (Gmail; spf=fail) ; spf=pass ; dkim=pass")
def test_verdicts_without_domains_are_the_full_parses(value):
    full = parse_authentication_results(value)
    verdicts_only = parse_authentication_results(value, domains=False)
    assert verdicts_only == dataclasses.replace(full, spf_domain=None, dkim_domains=(), dmarc_domain=None)
    assert verdicts_only.failed is full.failed


@given(value=_RESULTSISH, folding=st.sampled_from(["\r\n       ", "\t", "\u3000", "\x1c", "\u2028", "  "]))
@example(value="MX.GOOGLE.COM (a\tb) ;\tspf = pass; dkim=pass", folding="\r\n ")
@example(value="\tmx.google.com\t1;spf=pass", folding="\t")
@example(value=" (c) mx.google.com (d);dmarc=fail", folding="\u3000")
def test_results_read_as_the_collapsed_text_reads(value, folding):
    # The parse no longer collapses whitespace first: it reads the same as the collapsed text (short values, so
    # the 8,000-character cut comes after either).
    folded = value.replace(" ", folding)
    assert parse_authentication_results(folded) == parse_authentication_results(" ".join(folded.split()))


# -- Reply-To of a search result -----------------------------------------------------------------------------------

_HEADER_NAME = st.sampled_from(
    ["Reply-To", "reply-to", " Reply-To", "REPLY-TO ", "Reply-To\t", "From", "", 1, 1.5, None, True, ["Reply-To"], {}]
)
_HEADER_ITEM = st.one_of(
    st.fixed_dictionaries({"name": _HEADER_NAME, "value": st.sampled_from(["a@b.example", "", None, 5])}),
    st.fixed_dictionaries({"value": st.just("c@d.example")}),
    st.sampled_from(["Reply-To", None, 3, ["Reply-To", "x"]]),
)


@given(headers=st.lists(_HEADER_ITEM, max_size=6))
@example(headers=[{"name": "Reply-To ", "value": "a@b.example"}, {"name": "reply-to", "value": "c@d.example"}])
@example(headers=[{"name": None, "value": "a@b.example"}, {"name": ["Reply-To"], "value": "c@d.example"}])
def test_reply_to_is_only_looked_up_where_first_headers_saw_one(headers):
    # What JSON can hold as a header name: the lookup header_warnings skips would have found nothing.
    if "reply-to" not in first_headers(headers):
        assert envelope._first(headers, "reply-to") is None
    sender = Address("Dana", "dana@stratus.example")
    with_first = envelope.header_warnings(headers, sender, "Invoice", "", first_headers(headers))
    assert with_first == envelope.header_warnings(headers, sender, "Invoice", "")


# -- base64 --------------------------------------------------------------------------------------------------------


@given(st.text(st.sampled_from([*"QUJDZGVm+/-_=", " ", "\n", "é", "*"]), max_size=40))
@example("UGF5UGFs")
@example("4oCUIHRoaXMgd2Vla2VuZCBvbmx5")
def test_lenient_base64_decodes_as_b64decode(text):
    cleaned = re.sub(r"[^A-Za-z0-9+/_-]", "", text).replace("-", "+").replace("_", "/")
    cleaned = cleaned[: len(cleaned) - (len(cleaned) % 4 == 1)]
    try:
        expected = base64.b64decode(cleaned + "=" * (-len(cleaned) % 4))
    except ValueError:
        expected = b""
    assert lenient_b64(text) == expected
