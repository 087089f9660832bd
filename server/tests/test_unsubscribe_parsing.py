"""The pure parts of unsubscribing: List-Unsubscribe, List-Unsubscribe-Post, DKIM coverage, mailto, the SSRF guard.

RFC 2369 (List-Unsubscribe), RFC 8058 sections 3.1 and 4 (the POST header, and the DKIM signature that must
cover both headers), RFC 6376 3.5 (the DKIM-Signature tags), RFC 8601 (Authentication-Results), RFC 6068 (mailto).
Only Gmail's own topmost Authentication-Results counts (`gmail-api-wire.md`: others can be forged).
"""

from __future__ import annotations

import pytest

from server.content.unsubscribe import (
    covering_signature_passed,
    list_unsubscribe_uris,
    parse_dkim_signature,
    parse_mailto,
    unsubscribe_options,
)
from server.toolsets.unsubscribe.post import RefusedTarget, check_url, is_public, safe_address


def headers(**values: str | list[str]) -> list[dict[str, str]]:
    found = []
    for name, value in values.items():
        for one in value if isinstance(value, list) else [value]:
            found.append({"name": name.replace("_", "-"), "value": one})
    return found


SIG = (
    "v=1; a=rsa-sha256; d=news.example; s=s1; h=From:Subject:\r\n\tList-Unsubscribe:List-Unsubscribe-Post; "
    "b=AbCd EfGh123"
)
GOOD = "mx.google.com; dkim=pass header.i=@news.example header.s=s1 header.b=AbCdEfGh; spf=pass smtp.mailfrom=x"


def test_uris_in_order_with_comments_and_folding():
    value = "(comment) <mailto:leave@news.example?subject=bye>,\r\n <https://news.example/u/\r\n abc>"
    assert list_unsubscribe_uris(value) == ["mailto:leave@news.example?subject=bye", "https://news.example/u/abc"]


def test_uris_without_angle_brackets_as_some_senders_write_them():
    """Nango integration-templates tests/messages.test.json (2026, Workspace): Intuit's and Slack's
    `List-Unsubscribe` is a bare https URL (Slack's with `List-Unsubscribe-Post: List-Unsubscribe=One-Click`)."""
    assert list_unsubscribe_uris("https://intuit.example/unsubscribe/page.htm?uid=1-69e7") == [
        "https://intuit.example/unsubscribe/page.htm?uid=1-69e7"
    ]
    assert list_unsubscribe_uris("mailto:leave@x.example, https://x.example/u") == [
        "mailto:leave@x.example",
        "https://x.example/u",
    ]
    assert list_unsubscribe_uris("click here: javascript:alert(1)") == []


def test_a_quoted_header_b_matches_its_signature():
    """Nango integration-templates tests/messages.test.json (2026): Gmail writes `header.b="jMc/WWuW"` quoted when
    the first characters of the signature hold a '/'."""
    results = GOOD.replace("header.b=AbCdEfGh", 'header.b="AbCd/EfG"')
    signature = SIG.replace("b=AbCd EfGh123", "b=AbCd/EfGh123")
    assert covering_signature_passed(headers(Authentication_Results=results, DKIM_Signature=signature))[0]


def test_signature_tags_and_coverage():
    sig = parse_dkim_signature(SIG)
    assert sig is not None and sig.domain == "news.example" and sig.signature == "AbCdEfGh123"
    assert {"list-unsubscribe", "list-unsubscribe-post"} <= sig.covered
    ok, why = covering_signature_passed(headers(Authentication_Results=GOOD, DKIM_Signature=SIG))
    assert ok and why is None


@pytest.mark.parametrize(
    ("results", "signature", "reason"),
    [
        (GOOD.replace("dkim=pass", "dkim=fail"), SIG, "did not pass"),
        (GOOD, SIG.replace(":List-Unsubscribe-Post", ""), "does not cover"),
        (GOOD, SIG.replace("d=news.example", "d=other.example"), "matches"),
        (GOOD.replace("header.b=AbCdEfGh", "header.b=Zzzzzzzz"), SIG, "matches"),
        (GOOD.replace("mx.google.com", "relay.example"), SIG, "did not pass"),  # not Gmail's verdict
    ],
)
def test_one_click_refused_unless_gmail_vouches_for_both_headers(results: str, signature: str, reason: str):
    ok, why = covering_signature_passed(headers(Authentication_Results=results, DKIM_Signature=signature))
    assert not ok and why is not None and reason in why


def test_an_identity_in_a_subdomain_of_the_signing_domain_matches():
    results = GOOD.replace("header.i=@news.example", "header.i=@mail.news.example")
    assert covering_signature_passed(headers(Authentication_Results=results, DKIM_Signature=SIG))[0]
    elsewhere = GOOD.replace("header.i=@news.example", "header.i=@news.example.evil")
    assert not covering_signature_passed(headers(Authentication_Results=elsewhere, DKIM_Signature=SIG))[0]


def test_a_forged_pass_below_gmails_fail_does_not_count():
    forged = headers(Authentication_Results=[GOOD.replace("dkim=pass", "dkim=fail"), GOOD], DKIM_Signature=SIG)
    assert not covering_signature_passed(forged)[0]


def test_options_need_the_exact_post_header():
    base = {"List_Unsubscribe": "<https://news.example/u>", "Authentication_Results": GOOD, "DKIM_Signature": SIG}
    assert (
        unsubscribe_options(headers(**base, List_Unsubscribe_Post="List-Unsubscribe=One-Click")).one_click_refusal
        is None
    )
    other = unsubscribe_options(headers(**base, List_Unsubscribe_Post="List-Unsubscribe=Yes"))
    assert other is not None and "List-Unsubscribe-Post" in (other.one_click_refusal or "")
    assert unsubscribe_options(headers(From="x@y.example")) is None


def test_mailto():
    parsed = parse_mailto("mailto:leave@news.example?subject=unsubscribe%20me&body=bye")
    assert parsed is not None and (parsed.to, parsed.subject, parsed.body) == (
        "leave@news.example",
        "unsubscribe me",
        "bye",
    )
    assert parse_mailto("mailto:a@x.example,b@y.example") is None
    assert parse_mailto("https://x.example") is None


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "10.1.2.3", "192.168.0.1", "172.16.0.1", "169.254.169.254", "100.64.0.1", "::1", "fe80::1",
     "::ffff:127.0.0.1", "0.0.0.0", "224.0.0.1", "fc00::1"],
)  # fmt: skip
def test_private_addresses_are_refused(address: str):
    assert not is_public(address)
    with pytest.raises(RefusedTarget):
        safe_address("news.example", 443, lambda _h, _p: ["93.184.215.14", address])
    with pytest.raises(RefusedTarget):
        check_url(f"https://[{address}]/u" if ":" in address else f"https://{address}/u")


def test_urls_one_click_may_use():
    assert check_url("https://news.example/u?id=1") == ("https", "news.example", 443, "/u?id=1")
    assert safe_address("news.example", 443, lambda _h, _p: ["93.184.215.14"]) == "93.184.215.14"
    for bad in ("http://news.example/u", "https://user:pw@news.example/u", "ftp://news.example/u", "https:///u"):
        with pytest.raises(RefusedTarget):
            check_url(bad)
    assert check_url("http://127.0.0.1:8080/u", allow_private=True)[1] == "127.0.0.1"
    with pytest.raises(RefusedTarget):
        check_url("http://10.0.0.1/u", allow_private=True)  # the allowance is loopback only
