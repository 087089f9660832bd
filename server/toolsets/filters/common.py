"""What the filter tools share: a filter as the model sees it, labels by name, and the person's yes to a change.

A Gmail filter is `{id, criteria: {from, to, subject, query, negatedQuery, hasAttachment, ...}, action:
{addLabelIds, removeLabelIds, forward}}` (Nango integration-templates tests/list-filters.test.json). Criteria are
shown with Gmail's own names; label ids as the person's label names. Whether this server created a filter comes
from the account's record (`runtime/filter_record.py`): Gmail keeps no such mark.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import Field

from server.errors import ConfirmationError
from server.tools import ToolContext
from server.toolsets.common import ToolOutput

ACTION_WORDS = {"INBOX": "skip the inbox", "UNREAD": "mark as read", "STARRED": "star", "IMPORTANT": "mark important"}


class FilterView(ToolOutput):
    id: str
    criteria: dict[str, str | int | bool] = Field(description="Gmail's criteria (from, to, subject, query, ...).")
    add_labels: list[str] = Field(default_factory=list, description="Labels the filter adds (names).")
    remove_labels: list[str] = Field(default_factory=list, description="Labels it removes (INBOX: skips the inbox).")
    forward: str | None = None
    created_here: bool = Field(description="Whether this server created it (it may delete it without asking).")
    summary: str


def label_names(ctx: ToolContext) -> dict[str, str]:
    return {str(label.get("id")): str(label.get("name") or label.get("id")) for label in ctx.cache.labels()}


def criteria_text(criteria: dict[str, Any]) -> str:
    parts = []
    for key, value in criteria.items():
        if isinstance(value, bool):
            parts.append(f"{key}" if value else f"not {key}")
        else:
            parts.append(f"{key}: {json.dumps(value, ensure_ascii=False) if ' ' in str(value) else value}")
    return "; ".join(parts) or "(no criteria)"


def action_text(action: dict[str, Any], names: dict[str, str]) -> str:
    words = []
    for label_id in action.get("removeLabelIds") or []:
        words.append(ACTION_WORDS.get(label_id, f"remove label {names.get(label_id, label_id)!r}"))
    for label_id in action.get("addLabelIds") or []:
        words.append(ACTION_WORDS.get(label_id) or f"add label {names.get(label_id, label_id)!r}")
    if action.get("forward"):
        words.append(f"forward to {action['forward']}")
    return ", ".join(words) or "(no action)"


def view(found: dict[str, Any], names: dict[str, str], created: frozenset[str]) -> FilterView:
    criteria = {k: v for k, v in (found.get("criteria") or {}).items() if isinstance(v, str | int | bool)}
    action = found.get("action") or {}
    filter_id = str(found.get("id") or "")
    return FilterView(
        id=filter_id,
        criteria=criteria,
        add_labels=[names.get(str(i), str(i)) for i in action.get("addLabelIds") or []],
        remove_labels=[names.get(str(i), str(i)) for i in action.get("removeLabelIds") or []],
        forward=str(action["forward"]) if action.get("forward") else None,
        created_here=filter_id in created,
        summary=f"When {criteria_text(criteria)} -> {action_text(action, names)}",
    )


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def redeem(ctx: ToolContext, code: str, subject: str, state: str) -> str:
    """Uses up a confirmation code issued for exactly this change (see runtime/confirmations.py)."""
    try:
        return ctx.safety.confirmations.redeem(code, subject, state)
    except ConfirmationError as error:
        message = error.message.replace("Nothing was sent.", "No filter was changed.")
        message = message.replace("another draft", "another change").replace("The draft changed", "The filter changed")
        raise ConfirmationError(message) from None
