"""Finding a label by what a person or model calls it: its id, its name, or Gmail's dashed search spelling.

Pure functions over labels.list's label resources. Gmail compares label names without regard to case, and its
search writes spaces, the nesting slash and `& ( ) " | { }` as dashes (`label:project-phoenix`), so "project
phoenix", "Project-Phoenix" and "PROJECT PHOENIX" all name "Project Phoenix", and "q-a-2024" names "Q&A (2024)".
An unknown name gets the closest names (difflib, plus names that contain it) for the hint.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any

SYSTEM_LABEL_IDS = frozenset(
    {
        "INBOX",
        "SENT",
        "DRAFT",
        "SPAM",
        "TRASH",
        "STARRED",
        "IMPORTANT",
        "UNREAD",
        "CHAT",
        "CATEGORY_PERSONAL",
        "CATEGORY_SOCIAL",
        "CATEGORY_PROMOTIONS",
        "CATEGORY_UPDATES",
        "CATEGORY_FORUMS",
    }
)
USER_LABEL_ID = re.compile(r"^Label_\d{1,30}$")
MAX_SUGGESTIONS = 5
# Gmail treats `& ( ) " | { } /` in label names as it treats `-` (two labels differing only there conflict, and
# search writes them all as `-`), so a name matches whichever of them it is written with.
_SEPARATORS = re.compile(r'[\s/_&()"|{}-]+')

Label = dict[str, Any]


def is_system_label(name: str) -> bool:
    return name.strip().upper() in SYSTEM_LABEL_IDS


def label_key(name: str) -> str:
    """The form Gmail compares label names in: case-folded, spaces, slashes and dashes alike."""
    return _SEPARATORS.sub("-", name.strip().casefold()).strip("-")


def find_label(wanted: str, labels: Sequence[Label]) -> Label | None:
    """The label `wanted` names: an exact id first, then a name (case, spaces and dashes ignored)."""
    for label in labels:
        if label.get("id") == wanted:
            return label
    key = label_key(wanted)
    for label in labels:
        if label.get("id", "").upper() == wanted.strip().upper() and label.get("type") == "system":
            return label
        if key and isinstance(label.get("name"), str) and label_key(label["name"]) == key:
            return label
    return None


def close_matches(wanted: str, labels: Sequence[Label], limit: int = MAX_SUGGESTIONS) -> list[str]:
    """Label names that look like `wanted`: the closest by difflib, then names containing it (or it them)."""
    names = [label["name"] for label in labels if isinstance(label.get("name"), str)]
    by_key: dict[str, str] = {}
    for name in names:
        by_key.setdefault(label_key(name), name)
    key = label_key(wanted)
    found = [by_key[match] for match in difflib.get_close_matches(key, list(by_key), n=limit, cutoff=0.6)]
    if key:
        for name_key, name in by_key.items():
            if (key in name_key or name_key in key) and name not in found:
                found.append(name)
    # Nested labels match on their last part too: "Kids" -> "Family/Kids".
    for name in names:
        leaf = name.rsplit("/", 1)[-1]
        if leaf != name and label_key(leaf) == key and name not in found:
            found.append(name)
    return found[:limit]


def unknown_label_hint(wanted: str, labels: Sequence[Label]) -> str:
    suggestions = close_matches(wanted, labels)
    lead = f"Did you mean {', '.join(repr(name) for name in suggestions)}? " if suggestions else ""
    return lead + "gmail_list_labels lists every label's name and id; label_ids accepts either."
