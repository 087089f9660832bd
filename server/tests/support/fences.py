"""The trust envelope fences mail text with a random value per answer: compare answers without it."""

from __future__ import annotations

import re

_FENCE = re.compile(r"(\[/?mail )[0-9a-f]+\]")


def without_fence_values(text: str) -> str:
    """`[mail 1a2b3c4d]` and `[/mail 1a2b3c4d]` with the random value replaced, so two answers compare equal."""
    return _FENCE.sub(r"\1-]", text)
