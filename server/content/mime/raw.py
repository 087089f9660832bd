"""RFC 2822 bytes -> a Gmail-shaped payload tree, so raw messages go through the same walk as `full` ones.

The stdlib parser with the compat32 policy is lenient (defects are recorded, not raised) and keeps header values
as sent (encoded words and 8-bit bytes, the latter as surrogate escapes), which is what Gmail's `full` format
gives too. Transfer encodings are removed and text keeps its declared charset, like Gmail's "declared bytes"
case. Pure, no I/O, never raises.
"""

from __future__ import annotations

import base64
import email.parser
import email.policy
from email import errors
from email.message import Message
from typing import Any

from server.content.text.charsets import lenient_b64

_MAX_DEPTH = 100
Frame = tuple[Message, dict[str, Any], str, int]  # a part, its payload node, its part id, its depth
_SIZED_DEPTH = 4  # forwards nested deeper get size 0: hostile nesting must not cost one regeneration per level


def _headers(message: Message) -> list[dict[str, str]]:
    headers = []
    for name, value in message.raw_items():
        headers.append({"name": str(name), "value": str(value).replace("\r\n", "\n")})
    return headers


def _leaf_bytes(message: Message) -> bytes:
    try:
        data = message.get_payload(decode=True)
    except Exception:  # the stdlib decoders are lenient, but a malformed part must never sink the message
        data = None
    if any(isinstance(defect, errors.InvalidBase64LengthDefect) for defect in message.defects):
        # With a dangling base64 character the stdlib gives up and returns the base64 text itself as the
        # "decoded" body; a reader is better served by whatever is decodable (junk skipped, padding added).
        payload = message.get_payload()
        return lenient_b64(payload) if isinstance(payload, str) else b""
    if isinstance(data, bytes):
        return data
    payload = message.get_payload()
    return payload.encode("utf-8", "surrogateescape") if isinstance(payload, str) else b""


def _inner_size(message: Message) -> int:
    # Gmail gives a message/rfc822 part the size of the message it carries (an attachment's size to a reader).
    # Measuring regenerates the inner bytes, so only the outer few levels are measured (see _SIZED_DEPTH).
    try:
        return sum(len(sub.as_bytes()) for sub in message.get_payload() if isinstance(sub, Message))
    except Exception:  # regenerating a malformed inner message may fail; its size is only informative
        return 0


def _node(message: Message, part_id: str, depth: int, max_depth: int, stack: list[Frame]) -> dict[str, Any]:
    node: dict[str, Any] = {
        "partId": part_id,
        "mimeType": message.get_content_type(),
        "filename": "",
        "headers": _headers(message),
    }
    payload = message.get_payload()
    if isinstance(payload, list):
        sized = message.get_content_type() == "message/rfc822" and depth <= _SIZED_DEPTH
        node["body"] = {"size": _inner_size(message) if sized else 0}
        children: list[dict[str, Any]] = []
        if depth < max_depth:
            for index, sub in enumerate(payload):
                if isinstance(sub, Message):
                    child: dict[str, Any] = {}
                    children.append(child)
                    stack.append((sub, child, f"{part_id}.{index}" if part_id else str(index), depth + 1))
        node["parts"] = children
    else:
        data = _leaf_bytes(message)
        node["body"] = {"size": len(data), "data": base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")}
    return node


def payload_from_bytes(data: bytes, max_depth: int = _MAX_DEPTH) -> dict[str, Any]:
    """Parse an RFC 2822 message into a payload dict shaped like Gmail's `full` format.

    Args:
        data: The message bytes.
        max_depth: Nesting beyond this is cut (children omitted).

    Returns:
        {"partId", "mimeType", "filename", "headers", "body", "parts"?}, with part ids "", "0", "0.1"...
    """
    try:
        message = email.parser.BytesParser(policy=email.policy.compat32).parsebytes(bytes(data))
    except RecursionError:
        # The stdlib parser recurses per nesting level; past ~1000 levels keep the headers and the raw body.
        message = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(bytes(data))
        head = _headers(message)
        body = _leaf_bytes(message)
        return {
            "partId": "",
            "mimeType": "text/plain",
            "filename": "",
            "headers": head,
            "body": {"size": len(body), "data": base64.urlsafe_b64encode(body).decode("ascii")},
        }
    root: dict[str, Any] = {}
    stack: list[Frame] = [(message, root, "", 0)]
    while stack:  # iterative: the tree may be deep
        current, target, part_id, depth = stack.pop()
        target.update(_node(current, part_id, depth, max(0, max_depth), stack))
    return root
