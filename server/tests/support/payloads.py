"""Build Gmail-shaped messages.get resources from real MIME messages, for tests.

`gmail_resource(msg, mode)` turns an `email.message.EmailMessage` (or a `Message`, or raw RFC 2822 bytes) into
what users.messages.get returns: a `full` payload tree (partIds "", "0", "0.1"..., headers as sent, base64url
`body.data` without padding, `attachmentId` + `size` instead of data for parts with a filename), or the
`metadata`, `minimal` and `raw` shapes.

Two body modes, because Gmail's behaviour is only reported, not documented:
- "utf8": text parts are re-encoded to UTF-8 while their Content-Type still names the original charset
  (Gmail's reported behaviour);
- "declared": text parts keep the bytes of their declared charset.

The MIME builders (`text_part`, `multipart`, `message_bytes`) write RFC 2822 bytes by hand so tests control
every label, byte and transfer encoding (including ones the stdlib cannot produce, such as "x-gbk").
"""

from __future__ import annotations

import base64
import codecs
import email
import email.header
import email.policy
import quopri
import zlib
from email.message import Message

MODES = ("utf8", "declared")
# Codecs the helper uses to play Gmail's UTF-8 conversion for labels Python does not know (or knows narrowly).
_HELPER_CODECS = {
    "x-gbk": "gb18030",
    "gbk": "gb18030",
    "gb2312": "gb18030",
    "euc-cn": "gb18030",
    "ks_c_5601-1987": "cp949",
    "euc-kr": "cp949",
    "shift_jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "iso-2022-jp": "iso2022_jp_ext",
    "big5": "big5hkscs",
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "us-ascii": "cp1252",
}


def b64url(data: bytes, *, padding: bool = False) -> str:
    text = base64.urlsafe_b64encode(data).decode("ascii")
    return text if padding else text.rstrip("=")


# -- MIME builders -----------------------------------------------------------------------------------------------


def text_part(
    body: bytes | str,
    *,
    ctype: str = "text/plain",
    charset: str | None = "utf-8",
    cte: str = "base64",
    params: str = "",
    headers: tuple[tuple[str, str], ...] = (),
) -> bytes:
    """One MIME part as bytes; a str body is UTF-8 encoded (pass bytes for other charsets)."""
    data = body.encode("utf-8") if isinstance(body, str) else body
    content_type = ctype + (f'; charset="{charset}"' if charset else "") + params
    lines = [f"Content-Type: {content_type}"] if ctype else []
    if cte:
        lines.append(f"Content-Transfer-Encoding: {cte}")
    lines += [f"{name}: {value}" for name, value in headers]
    if cte == "base64":
        encoded = base64.encodebytes(data)
    elif cte == "quoted-printable":
        encoded = quopri.encodestring(data)
    else:
        encoded = data
    return "\n".join(lines).encode("utf-8") + b"\n\n" + encoded


def binary_part(
    data: bytes,
    ctype: str,
    *,
    filename: str | None = None,
    disposition: str = "attachment",
    headers: tuple[tuple[str, str], ...] = (),
    name_param: str = "",
) -> bytes:
    """A base64 leaf; the filename goes in Content-Disposition, or in Content-Type's name= when there is none."""
    extra = list(headers)
    if disposition:
        extra.append(("Content-Disposition", disposition + (f'; filename="{filename}"' if filename else "")))
    elif filename:
        name_param += f'; name="{filename}"'
    return text_part(data, ctype=ctype, charset=None, params=name_param, headers=tuple(extra))


def multipart(subtype: str, parts: list[bytes], *, params: str = "", boundary: str | None = None) -> bytes:
    boundary = boundary or f"b-{subtype}-{zlib.crc32(b''.join(parts)):08x}"  # deterministic, differs by content
    out = [f'Content-Type: multipart/{subtype}; boundary="{boundary}"{params}'.encode(), b""]
    for part in parts:
        out += [f"--{boundary}".encode(), part]
    out.append(f"--{boundary}--".encode())
    return b"\n".join(out) + b"\n"


def message_bytes(
    body_part: bytes,
    *,
    subject: str = "Test",
    sender: str = "Ann <ann@example.com>",
    to: str = "Bob <bob@example.com>",
    date: str = "Tue, 05 Mar 2024 10:00:00 +0100",
    headers: tuple[tuple[str, str], ...] = (),
) -> bytes:
    """A whole message: top headers followed by `body_part` (whose own headers become the top part's)."""
    top = [f"From: {sender}", f"To: {to}", f"Subject: {subject}", f"Date: {date}", "MIME-Version: 1.0"]
    top += [f"{name}: {value}" for name, value in headers]
    return "\n".join(top).encode("utf-8") + b"\n" + body_part


# -- Gmail shapes --------------------------------------------------------------------------------------------------


def _as_message(source: Message | bytes) -> Message:
    return email.message_from_bytes(_as_bytes(source), policy=email.policy.compat32)


def _as_bytes(source: Message | bytes) -> bytes:
    return bytes(source) if isinstance(source, (bytes, bytearray)) else source.as_bytes()


def _filename(part: Message) -> str:
    try:
        raw = part.get_filename() or ""
        return str(email.header.make_header(email.header.decode_header(raw))) if raw else ""
    except Exception:  # the helper mimics Gmail; an undecodable name stays as sent
        return str(part.get_filename() or "")


def _as_utf8(data: bytes, charset: str | None) -> bytes:
    if not charset:
        return data
    label = charset.lower()
    try:
        codec = _HELPER_CODECS.get(label) or codecs.lookup(label).name
        return data.decode(codec).encode("utf-8")
    except (LookupError, UnicodeDecodeError):
        return data  # Gmail cannot convert either: it passes the bytes through


def _node(part: Message, part_id: str, mode: str) -> dict:
    node: dict = {
        "partId": part_id,
        "mimeType": part.get_content_type(),
        "filename": _filename(part),
        "headers": [{"name": name, "value": str(value)} for name, value in part.raw_items()],
    }
    payload = part.get_payload()
    if isinstance(payload, list):
        node["body"] = {"size": 0}
        prefix = f"{part_id}." if part_id else ""
        node["parts"] = [_node(sub, prefix + str(index), mode) for index, sub in enumerate(payload)]
        return node
    data = part.get_payload(decode=True) or b""
    if node["filename"]:
        node["body"] = {"attachmentId": f"ANGjdJ-{part_id or 'top'}", "size": len(data)}
        return node
    if mode == "utf8" and part.get_content_maintype() == "text":
        data = _as_utf8(data, part.get_content_charset())
    node["body"] = {"size": len(data), "data": b64url(data)}
    return node


def gmail_payload(source: Message | bytes, mode: str = "utf8") -> dict:
    """The `payload` of a `full` messages.get resource for `source`."""
    assert mode in MODES
    return _node(_as_message(source), "", mode)


def gmail_resource(
    source: Message | bytes,
    mode: str = "utf8",
    *,
    fmt: str = "full",
    message_id: str = "m1",
    thread_id: str = "t1",
    labels: tuple[str, ...] = ("INBOX", "UNREAD"),
    snippet: str = "Hello &amp; welcome",
    internal_date: str = "1709629200000",
) -> dict:
    """A whole users.messages.get resource in format `fmt` (full, metadata, minimal or raw)."""
    resource: dict = {
        "id": message_id,
        "threadId": thread_id,
        "labelIds": list(labels),
        "snippet": snippet,
        "sizeEstimate": 1234,
        "historyId": "99",
        "internalDate": internal_date,
    }
    if fmt == "minimal":
        return resource
    if fmt == "raw":
        return {**resource, "raw": b64url(_as_bytes(source), padding=True)}
    payload = gmail_payload(source, mode)
    if fmt == "metadata":
        payload = {key: payload[key] for key in ("partId", "mimeType", "filename", "headers")}
    return {**resource, "payload": payload}
