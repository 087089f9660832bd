"""multipart/related: the root part is chosen by `start`, then `type`, then position (RFC 2387), in every Gmail
payload shape (full with UTF-8 re-encoding, full with declared bytes, raw)."""

from __future__ import annotations

import pytest

from server.content.message import ParsedMessage, parse_message, parse_raw_message
from server.tests.support.payloads import MODES, binary_part, gmail_resource, message_bytes, multipart, text_part

PNG = b"\x89PNG\r\n\x1a\nfake"
HTML = '<html><body><p>Quarterly chart:</p><img src="cid:chart@corp"></body></html>'


def parse_all(raw: bytes) -> list[ParsedMessage]:
    return [parse_message(gmail_resource(raw, mode)) for mode in MODES] + [
        parse_raw_message(gmail_resource(raw, fmt="raw"))
    ]


def _image(cid: str = "<chart@corp>", disposition: str = "inline") -> bytes:
    return binary_part(PNG, "image/png", disposition=disposition, headers=(("Content-ID", cid),))


def _html(cid: str | None = None) -> bytes:
    return text_part(HTML, ctype="text/html", headers=(("Content-ID", cid),) if cid else ())


@pytest.mark.parametrize(
    ("parts", "params"),
    [
        ([_image(), _html()], '; type="text/html"'),  # the message: image first, HTML named by type
        ([_image(), _html("<root@corp>")], '; type="text/html"; start="<root@corp>"'),
        ([_image(), _html("<root@corp>")], '; start="<root@corp>"'),  # start alone
        ([_image(), _html("<Root@Corp>")], '; start=" <root@corp> "'),  # spacing and case in the Content-ID
        ([_image(), _html()], ""),  # neither: an image cannot be the root, the HTML is
    ],
    ids=["type", "start-and-type", "start", "start-case", "image-first-untyped"],
)
def test_the_html_root_is_the_body_and_the_image_an_inline_attachment(parts: list[bytes], params: str) -> None:
    raw = message_bytes(multipart("related", parts, params=params))
    for parsed in parse_all(raw):
        assert parsed.body_text == "Quarterly chart:"
        assert parsed.body_source == "text/html"
        assert parsed.body_html is not None and "Quarterly chart" in parsed.body_html
        assert [(a.mime_type, a.inline, a.content_id) for a in parsed.attachments] == [
            ("image/png", True, "chart@corp")
        ]
        assert not any(a.filename.endswith(".html") for a in parsed.attachments)


def test_start_wins_over_type_and_position() -> None:
    plain = text_part("The plain root.", headers=(("Content-ID", "<plain@corp>"),))
    raw = message_bytes(
        multipart("related", [_html(), plain, _image()], params='; type="text/html"; start="<plain@corp>"')
    )
    for parsed in parse_all(raw):
        assert parsed.body_text == "The plain root." and parsed.body_source == "text/plain"
        assert sorted(a.mime_type for a in parsed.attachments) == ["image/png", "text/html"]


def test_a_start_naming_no_part_falls_back_to_type() -> None:
    raw = message_bytes(multipart("related", [_image(), _html()], params='; type="text/html"; start="<gone@corp>"'))
    for parsed in parse_all(raw):
        assert parsed.body_text == "Quarterly chart:"


def test_type_names_a_multipart_root() -> None:
    alternative = multipart("alternative", [text_part("Plain chart text."), _html()])
    raw = message_bytes(multipart("related", [_image(), alternative], params='; type="multipart/alternative"'))
    for parsed in parse_all(raw):
        assert parsed.body_text == "Plain chart text." and parsed.body_source == "text/plain"
        assert [a.mime_type for a in parsed.attachments] == ["image/png"]


def test_first_part_stays_the_root_when_it_is_text() -> None:
    # RFC 2387's default: the first part, even when a later part is HTML (it is then a resource, e.g. a frame).
    raw = message_bytes(multipart("related", [text_part("First part wins."), _image(), _html()]))
    for parsed in parse_all(raw):
        assert parsed.body_text == "First part wins."
