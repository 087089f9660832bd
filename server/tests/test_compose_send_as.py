"""The pure parts of writing as the person: which send-as identity, the signature's place, Gmail's size sum."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from server.content.compose.build import MAX_MESSAGE_BYTES, Attachment
from server.content.compose.identity import (
    default_identity,
    describe,
    find_identity,
    reply_identity,
    usable_identities,
)
from server.content.compose.quoting import QuoteSource, reply_quote, split_quote
from server.content.compose.signature import Signature, ends_with, signed, split_signature
from server.errors import InvalidInputError
from server.toolsets.drafts.attach import ContentAttachment, check_total, decode_content, encoded_size

ENTRIES = [
    {"sendAsEmail": "me@example.com", "displayName": "Me", "isPrimary": True, "isDefault": False, "signature": ""},
    {"sendAsEmail": "Work@Corp.example", "isDefault": True, "verificationStatus": "accepted", "signature": "<b>W</b>"},
    {"sendAsEmail": "wait@corp.example", "verificationStatus": "pending"},
    {"sendAsEmail": "", "isPrimary": True},
    "junk",
]


def test_only_the_primary_and_accepted_aliases_are_usable():
    known = usable_identities(ENTRIES)
    assert [identity.email for identity in known] == ["me@example.com", "Work@Corp.example"]
    assert default_identity(known).email == "Work@Corp.example"  # isDefault beats the primary
    assert default_identity(known[:1]).email == "me@example.com" and default_identity(()) is None
    assert find_identity(known, "Someone <work@corp.EXAMPLE>") is known[1]
    assert find_identity(known, "wait@corp.example") is None
    assert describe(known) == "me@example.com, Work@Corp.example (default)"
    assert str(known[0].sender) == "Me <me@example.com>"


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ("From: x@y.example\r\nTo: work@corp.example\r\nCc: me@example.com\r\n", "Work@Corp.example"),
        ("From: x@y.example\r\nTo: me@example.com\r\nCc: work@corp.example\r\n", "me@example.com"),
        ("From: Me <me@example.com>\r\nTo: work@corp.example\r\n", "me@example.com"),  # my own sent mail
        ("From: x@y.example\r\nTo: list@l.example\r\nDelivered-To: work@corp.example\r\n", "Work@Corp.example"),
        ("From: x@y.example\r\nTo: wait@corp.example\r\n", None),  # pending: not the account's to send from
        ("From: x@y.example\r\nTo: a@b.example\r\n", None),
    ],
)
def test_a_reply_is_from_the_address_the_original_was_sent_to(headers: str, expected: str | None):
    found = reply_identity((headers + "Subject: s\r\n\r\nbody\r\n").encode(), usable_identities(ENTRIES))
    assert (found.email if found else None) == expected


def test_the_signature_sits_between_the_text_and_the_quote_and_is_found_again():
    signature = Signature.from_html('<b>Ana</b><br><a href="https://a.example">Site</a>')
    assert signature is not None and signature.text == "Ana\nSite (https://a.example)"
    assert Signature.from_html("<div><br></div>") is None and Signature.from_html("") is None
    quote = reply_quote(QuoteSource("Bo <b@x.example>", "Mon, 1 Apr 2024", "S", "", "", "Hello"))
    text, html = signed("Thanks", None, signature, plain_quote=quote.text, html_quote=quote.html)
    assert text.startswith("Thanks\n\n-- \nAna\nSite (https://a.example)\n\nOn Mon, 1 Apr 2024") and "> Hello" in text
    assert html is not None and html.index("<b>Ana</b>") < html.index("gmail_quote") and html.startswith("Thanks<br>")
    own, plain_quote, html_quote = split_quote(text, html)
    assert plain_quote == quote.text and html_quote == quote.html
    bare_text, bare_html, found = split_signature(own, html[: len(html) - len(html_quote)])
    assert (bare_text, bare_html, found) == ("Thanks", "Thanks", True)
    again, _html = signed(bare_text, bare_html, signature, plain_quote=plain_quote, html_quote=html_quote)
    assert again == text  # signing what was unsigned gives the same draft: never doubled
    written_in = "Thanks\n\nAna\nSite"  # the model typed the signature itself (without the link's address)
    assert signed(written_in, None, signature) == (written_in, None)
    assert signed("Plain", None, None, plain_quote="\n\nq") == ("Plain\n\nq", None)


def test_an_image_only_signature_goes_into_the_html_alone():
    logo = Signature.from_html('<img src="https://a.example/logo.png" width="80">')
    assert logo is not None and logo.text == ""
    text, html = signed("Hi", None, logo, plain_quote="\n\nOn x, y wrote:\n\n> q\n")
    assert text == "Hi\n\nOn x, y wrote:\n\n> q\n" and html is not None and "logo.png" in html
    assert split_signature("Hi", html[: html.index("</div>") + 6]) == ("Hi", "Hi", True)


def test_sizes_are_counted_encoded_and_refused_past_the_limit_naming_the_total():
    assert encoded_size(0) == 0 and encoded_size(3) == 4 + 2 and encoded_size(57) == 76 + 2
    check_total([Attachment("a.pdf", "application/pdf", b"x" * 1000)], [("b.pdf", 18 * 1024 * 1024)], 100)
    with pytest.raises(InvalidInputError) as refused:
        check_total([], [("b.pdf", 19 * 1024 * 1024)], 0)  # 19 MB of file is 26 MB encoded
    text = str(refused.value)
    assert "attachment total 19.0 MB (b.pdf 19.0 MB), about 26.0 MB once encoded" in text and "at most 25.0 MB" in text
    assert MAX_MESSAGE_BYTES == 25 * 1024 * 1024


def test_client_bytes_are_base64_checked():
    [plain, url_safe] = decode_content(
        [
            ContentAttachment(filename="a.txt", mime_type="text/plain", data_base64="aGVs\nbG8="),
            ContentAttachment(filename="b.bin", data_base64="-_8"),
        ]
    )
    assert (plain.filename, plain.mime_type, plain.data) == ("a.txt", "text/plain", b"hello")
    assert url_safe.data == b"\xfb\xff" and url_safe.mime_type == "application/octet-stream"
    for bad in ("not base64!", "aGVsbG8=x", "a"):
        with pytest.raises(InvalidInputError, match=r"'c\.bin' is not valid base64"):
            decode_content([ContentAttachment(filename="c.bin", data_base64=bad)])


# No "> " line after "x wrote:": split_quote takes that pair for a quote wherever it is (its known limit).
LINES = st.sampled_from(["Hi Bo,", "", "Thanks!", "-- ", "Ana", "a > b", "See https://x.example", "  ", "x wrote:"])
SIGNATURES = st.sampled_from(["<b>Ana</b>", "Ana<br>CEO", '<a href="https://a.example">Ana</a>', "<p>Bo</p><p>Co</p>"])


@given(own=st.lists(LINES, max_size=8).map("\n".join), markup=SIGNATURES, quoted=st.booleans(), html=st.booleans())
def test_signing_again_after_an_edit_never_doubles_the_signature(own: str, markup: str, quoted: bool, html: bool):
    """What `gmail_update_draft` does to a body this server signed: find the quote, take the signature off,
    sign again. The signature stays exactly once, the person's text and the quote unchanged."""
    signature = Signature.from_html(markup)
    assert signature is not None
    assume(not ends_with(own, signature))  # signed by hand already: left as written (tested above)
    quote = reply_quote(QuoteSource("Bo <b@x.example>", "Mon, 1 Apr 2024", "S", "", "", "Hello\n-- \nBo"))
    plain_quote, html_quote = (quote.text, quote.html) if quoted else ("", "")
    text, body_html = signed(
        own, "<p>" + own + "</p>" if html else None, signature, plain_quote=plain_quote, html_quote=html_quote
    )
    assert body_html is not None
    own_text, found_quote, found_html_quote = split_quote(text, body_html)
    assert found_quote == plain_quote and found_html_quote == html_quote
    bare, bare_html, _found = split_signature(own_text, body_html[: len(body_html) - len(found_html_quote)])
    again, again_html = signed(bare, bare_html, signature, plain_quote=found_quote, html_quote=found_html_quote)
    assert again == text and again_html == body_html
    assert again.count(signature.text_block) <= 1 and again_html.count('data-smartmail="gmail_signature"') == 1
