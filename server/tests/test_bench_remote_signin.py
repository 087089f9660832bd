"""bench/remote_signin.py's bookkeeping (pure functions): how the emulator's log of a sign-in reads, and who the
benchmark's people are. No timing is asserted; these pin how the benchmark counts and names.
"""

from __future__ import annotations

from pathlib import Path

from bench.people_emulator import account_name, person, token_path
from bench.remote_signin import emulator_shape


def entry(path: str, start: float, batch_parts: int | None = None) -> dict:
    return {"path": path, "started_at": start, "duration_ms": 100, "batch_parts": batch_parts}


def test_a_sign_in_reads_as_google_first_then_gmail():
    log = [
        entry("/o/oauth2/v2/auth", 0.0),
        entry("/token", 0.1),
        entry("/oauth2/v3/certs", 0.2),
        entry("/token", 0.4),
        entry("/gmail/v1/users/me/messages", 0.5),
        entry("/batch/gmail/v1", 0.6, 10),
    ]
    assert emulator_shape(log) == "google consent + 2 x google token + google keys + list + batch(10)"
    assert emulator_shape(log[:3]) == "google consent + google token + google keys"  # no Gmail call yet
    assert emulator_shape([]) == "-"


def test_people_and_their_static_accounts():
    scratch = Path("/scratch")
    assert [person(n) for n in (0, 7, 19)] == ["person00@example.com", "person07@example.com", "person19@example.com"]
    assert account_name(0) == "default" and account_name(7) == "person07"
    assert token_path(scratch, 0) == scratch / "token.json"  # the primary account, beside the token folder
    assert token_path(scratch, 7) == scratch / "tokens" / "person07.json"
