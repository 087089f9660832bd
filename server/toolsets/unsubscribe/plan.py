"""What unsubscribing from the senders of some messages would do, per sender: decided from the headers alone.

Per message (`content/unsubscribe.py` reads the headers): one-click when RFC 8058's conditions hold (an https
address, `List-Unsubscribe-Post: List-Unsubscribe=One-Click`, and Gmail's dkim=pass for a signature covering
both headers); else a `mailto:` address becomes a draft for the person to send; else nothing, with the reason.
A link is never opened (no GET): only the person can do that, in Gmail or a browser.
Messages of one sender (From address) make one step: the first message that allows one-click decides, else the
first with a mailto address, else the first message's reason.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from email.utils import parseaddr
from typing import Any, Literal

from server.content.unsubscribe import HEADERS, parse_mailto, unsubscribe_options
from server.errors import GmailError, NotFoundError
from server.tools import ToolContext
from server.toolsets.unsubscribe.post import RefusedTarget, check_url

Method = Literal["one_click", "mailto", "none"]
MAX_URL_CHARS = 1_000
NO_GET = "this server never opens links from mail; the person can use Gmail's own Unsubscribe link instead"


@dataclass
class Step:
    sender: str
    method: Method
    target: str | None = None  # the URL posted to, or the mailto URI
    reason: str | None = None  # why not one-click (or why nothing)
    message_ids: list[str] = field(default_factory=list)


def _headers(resource: dict[str, Any]) -> list[Any]:
    payload = resource.get("payload")
    headers = payload.get("headers") if isinstance(payload, dict) else None
    return headers if isinstance(headers, list) else []


def _from(headers: list[Any]) -> str:
    for item in headers:
        if isinstance(item, dict) and str(item.get("name", "")).lower() == "from":
            value = str(item.get("value", ""))
            return (parseaddr(value)[1] or value).lower()[:200] or "(unknown sender)"
    return "(unknown sender)"


def decide(message_id: str, headers: list[Any], *, allow_private: bool) -> Step:
    sender = _from(headers)
    options = unsubscribe_options(headers)
    if options is None:
        return Step(sender, "none", reason="the message has no List-Unsubscribe header", message_ids=[message_id])
    reason = options.one_click_refusal
    url = options.https or (options.http if allow_private else None)
    if reason is None and url is None:
        reason = "the message offers only a plain http address, and one-click goes only to https"
    if reason is None and url is not None and len(url) > MAX_URL_CHARS:
        reason = f"the unsubscribe address is longer than {MAX_URL_CHARS} characters"
    if reason is None and url is not None:
        try:
            check_url(url, allow_private=allow_private)
            return Step(sender, "one_click", target=url, message_ids=[message_id])
        except RefusedTarget as refused:
            reason = str(refused)
    if options.mailto and parse_mailto(options.mailto) is not None:
        return Step(sender, "mailto", target=options.mailto, reason=reason, message_ids=[message_id])
    return Step(sender, "none", reason=f"{reason}; {NO_GET}", message_ids=[message_id])


def plan_for(ctx: ToolContext, message_ids: list[str]) -> list[Step]:
    """One batch read of the messages' headers, then one step per sender (in the order first seen)."""
    found = ctx.gmail.get_messages_metadata(message_ids, headers=[*HEADERS, "Received"])
    missing = [message_id for message_id in message_ids if not isinstance(found.get(message_id), dict)]
    if len(missing) == len(message_ids):
        first = found.get(message_ids[0])
        if isinstance(first, GmailError) and not isinstance(first, NotFoundError):
            raise first
        raise NotFoundError(
            f"No message with id {', '.join(missing[:10])}: nothing to unsubscribe from.",
            hint="Take message ids from gmail_search_messages or gmail_cleanup_preview's samples.",
        )
    steps: dict[str, Step] = {}
    rank = {"one_click": 0, "mailto": 1, "none": 2}
    for message_id in message_ids:
        resource = found.get(message_id)
        if not isinstance(resource, dict):
            continue
        step = decide(message_id, _headers(resource), allow_private=ctx.safety.unsubscribe_allow_private)
        known = steps.get(step.sender)
        if known is None:
            steps[step.sender] = step
        elif rank[step.method] < rank[known.method]:
            step.message_ids = [*known.message_ids, *step.message_ids]
            steps[step.sender] = step
        else:
            known.message_ids.append(message_id)
    for message_id in missing:
        steps.setdefault(f"(message {message_id})", Step(f"(message {message_id})", "none", reason="no such message"))
    return list(steps.values())


def digest(steps: list[Step]) -> str:
    text = "\n".join(f"{s.sender}|{s.method}|{s.target}|{','.join(s.message_ids)}" for s in steps)
    return hashlib.sha256(text.encode()).hexdigest()
