"""Label names as Google Takeout writes them, mapped to Gmail API label ids.

Takeout's `X-Gmail-Labels` header lists display names ("Inbox", "Category Promotions", "Receipts/2024");
the API speaks ids ("INBOX", "CATEGORY_PROMOTIONS", "Label_123..."). User label ids are derived from the name
so the same mailbox yields the same ids on every run, which keeps ids in test fixtures and demo transcripts
valid.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

# System labels in the order Gmail's labels.list tends to return them.
SYSTEM_LABELS = (
    "CHAT",
    "SENT",
    "INBOX",
    "IMPORTANT",
    "TRASH",
    "DRAFT",
    "SPAM",
    "CATEGORY_FORUMS",
    "CATEGORY_UPDATES",
    "CATEGORY_PERSONAL",
    "CATEGORY_PROMOTIONS",
    "CATEGORY_SOCIAL",
    "STARRED",
    "UNREAD",
)

# Takeout display name (lower-cased) -> system label id.
_TAKEOUT_NAMES = {
    "inbox": "INBOX",
    "starred": "STARRED",
    "important": "IMPORTANT",
    "unread": "UNREAD",
    "sent": "SENT",
    "sent mail": "SENT",
    "spam": "SPAM",
    "trash": "TRASH",
    "draft": "DRAFT",
    "drafts": "DRAFT",
    "chat": "CHAT",
    "chats": "CHAT",
}
_CATEGORIES = {"personal", "social", "promotions", "updates", "forums"}

# Takeout markers that are not labels in the API ("Opened" is the absence of UNREAD).
_IGNORED = {"opened", "archived", "all mail"}


@dataclass(frozen=True)
class Label:
    """One label as labels.list shows it."""

    id: str
    name: str
    type: str  # "system" or "user"

    def resource(self) -> dict[str, object]:
        """As labels.list shows it. Recorded Gmail (Nango integration-templates tests/list-labels.test.json and
        labels.test.json, 2026): INBOX, SENT, DRAFT, STARRED and UNREAD carry no visibility fields at all; CHAT,
        IMPORTANT, TRASH, SPAM and every CATEGORY_* carry `hide` / `labelHide`; user labels `show` / `labelShow`."""
        resource: dict[str, object] = {"id": self.id, "name": self.name, "type": self.type}
        if self.type == "user":
            resource["messageListVisibility"] = "show"
            resource["labelListVisibility"] = "labelShow"
        elif self.id not in _NO_VISIBILITY:
            resource["messageListVisibility"] = "hide"
            resource["labelListVisibility"] = "labelHide"
        return resource


_NO_VISIBILITY = frozenset({"INBOX", "SENT", "DRAFT", "STARRED", "UNREAD"})


def user_label_id(name: str) -> str:
    """Stable id for a user label: `Label_` plus digits, the shape Gmail uses."""
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()
    return f"Label_{int(digest[:15], 16)}"


def split_label_header(value: str) -> list[str]:
    """Splits Takeout's comma-separated list; names holding a comma come double-quoted."""
    names: list[str] = []
    current: list[str] = []
    quoted = False
    for char in value:
        if char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            names.append("".join(current))
            current = []
        else:
            current.append(char)
    names.append("".join(current))
    return [name.strip() for name in names if name.strip()]


def classify(name: str) -> tuple[str, str] | None:
    """Maps one Takeout label name to (label id, display name); None for markers that are not labels.

    System ids written literally ("INBOX", "CATEGORY_UPDATES") are accepted too, so hand-made test mailboxes
    can use either spelling.
    """
    key = " ".join(name.split()).lower()
    if key in _IGNORED:
        return None
    if key in _TAKEOUT_NAMES:
        label_id = _TAKEOUT_NAMES[key]
        return label_id, label_id
    upper = name.strip().upper()
    if upper in SYSTEM_LABELS:
        return upper, upper
    for prefix in ("category ", "category_", "category:"):
        if key.startswith(prefix) and key[len(prefix) :] in _CATEGORIES:
            label_id = "CATEGORY_" + key[len(prefix) :].upper()
            return label_id, label_id
    return user_label_id(name.strip()), name.strip()


def parent_names(name: str) -> list[str]:
    """Nested label "a/b/c" implies labels "a" and "a/b" in Gmail's label list."""
    pieces = name.split("/")
    return ["/".join(pieces[:i]) for i in range(1, len(pieces)) if all(pieces[:i])]
