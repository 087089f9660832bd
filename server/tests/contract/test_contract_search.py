"""Contract: Gmail's search never answers "Invalid query", and what has:attachment matches. Runs against the
emulator (`pytest`) and a real inbox (`pytest -m live`); every query is limited to the test's own marker word.
"""

from __future__ import annotations

import base64

import pytest

from server.tests.support.contract import ContractGmail

# Operators Gmail cannot read: they become plain words, which the test's message does not contain.
UNPARSABLE = ["after:July 1", "before:someday", "older_than:forever", "larger:huge", "is:nonsense", "has:yellow-star"]
PNG_DOT = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
)


@pytest.mark.parametrize("operators", UNPARSABLE)
def test_an_unparsable_operator_is_a_word_not_an_error(gmail: ContractGmail, operators: str) -> None:
    """A query whose operator Gmail cannot parse is answered (200), and the search is empty: the operator became
    words the message does not hold. `has:yellow-star` is a real operator; the unstarred message does not match.

    Evidence: amd/gaia #2161 (`after:July 1 before:July 8` on a real inbox: no error, count 0, "treats the
    free-text form as a content match").
    """
    ours = gmail.insert(gmail.compose("search contract"))["id"]
    assert ours in gmail.search_until(lambda ids: ours in ids, q=gmail.marker)

    assert gmail.list_ids(q=f"{gmail.marker} {operators}") == set()


def test_has_attachment_matches_a_message_with_only_an_inline_image(gmail: ContractGmail) -> None:
    """has:attachment matches a message whose only non-text part is an inline image (Content-ID, disposition
    inline), and not a plain text one.

    Evidence: the issue's field reports (docs/contract-tests.md); emersion/go-imap #282 (Gmail shows an inline
    part with a filename as an attachment).
    """
    inline = gmail.compose("inline image contract")
    inline.set_content(f"<p>dot <img src='cid:dot@contract'></p><p>{gmail.marker}</p>", subtype="html")
    inline.add_related(PNG_DOT, maintype="image", subtype="png", cid="<dot@contract>", filename="dot.png")
    with_image = gmail.insert(inline)["id"]
    plain = gmail.insert(gmail.compose("plain contract"))["id"]
    assert gmail.search_until({with_image, plain}.issubset, q=gmail.marker) >= {with_image, plain}

    assert gmail.search_until(lambda ids: with_image in ids, q=f"{gmail.marker} has:attachment") == {with_image}
