"""Which part of a multipart is the body: the root of a multipart/related (RFC 2387), and when a text/plain
alternative is only a placeholder for its HTML twin."""

from __future__ import annotations

import re

from server.content.mime.part import MimePart

MAX_PARTS = 5000  # parts looked at in one message: hostile trees cost bounded work
_PLACEHOLDER = re.compile(
    r"view (?:this |the |it )?(?:e-?mail |message |newsletter )?(?:in|on|with) (?:your |a |the )?(?:web ?)?browser"
    r"|view (?:it |this )?online|(?:requires|needs) (?:an? )?html|does(?:n't| not) support html"
    r"|html[- ](?:capable|compatible|enabled|version)|enable html|to view this (?:e-?mail|message)"
    r"|trouble (?:viewing|reading) this|(?:can ?not|can't|unable to) (?:display|show|render) html",
    re.I,
)


def related_root(part: MimePart, kids: list[object]) -> int:
    """The root of a multipart/related (RFC 2387): the part whose Content-ID is the `start` parameter, else the
    first part of the declared `type`, else the first part. Beyond the RFC, a first part that cannot be a body
    (an image put first by a careless mailer) yields to the first text or multipart part."""
    views = [MimePart(kid) for kid in kids[:MAX_PARTS]]
    start = _cid(part.params.get("start", ""))
    if start:
        ids = [_cid(view.headers.get("content-id", "")) for view in views]
        if start in ids:
            return ids.index(start)
    declared = part.params.get("type", "").strip().strip("\"'").lower()
    if declared:
        for index, view in enumerate(views):
            if view.mime == declared:
                return index
    if views and not views[0].mime.startswith(("text/", "multipart/", "message/")):
        for index, view in enumerate(views):
            if view.mime.startswith(("text/", "multipart/")) and not view.filename():
                return index
    return 0


def _cid(value: str) -> str:
    return "".join(value.split()).strip("<>").lower()


def is_placeholder(plain: str, html_text: str) -> bool:
    plain, html_text = plain.strip(), html_text.strip()
    if not html_text:
        return False
    if not plain or (len(plain) < 200 and len(plain) * 3 < len(html_text)):
        return True
    # Alternatives carry one message: once the plain part says it is a stand-in, an HTML part of comparable
    # length is the better read (a short promo's HTML can be shorter than the stand-in's boilerplate and URL).
    return len(plain) < 400 and 2 * len(html_text) > len(plain) and _PLACEHOLDER.search(plain) is not None
