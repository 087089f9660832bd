"""Sizing property tests relative to the active hypothesis profile (the profiles live in conftest.py).

A test that needs a different number of examples scales the profile's count instead of fixing its own, so `ci`,
`dev` and `deep` (HYPOTHESIS_PROFILE) keep deciding how hard every property is tried.
"""

from __future__ import annotations

from hypothesis import settings


def examples(scale: float) -> int:
    """`scale` times the active profile's `max_examples` (at least 1)."""
    return max(1, round(settings.default.max_examples * scale))
