"""Codes and tokens of the authorization server: single use, stored as hashes, rotation with a grace window,
revocation by grant, audience (RFC 8707). All on the SQLite store with an injected clock."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from server.remote.ledger import Ledger, Lifetimes, TokenPair
from server.remote.sqlite_store import SQLiteStore
from server.tests.support.remote_state import Clock

RESOURCE = "https://mail.example.net/mcp"


@pytest.fixture
def ledger(store: SQLiteStore) -> Ledger:
    return Ledger(
        store, Fernet(Fernet.generate_key()), Lifetimes(code_s=60, access_s=3600, refresh_s=86400, grace_s=30)
    )


def first_pair(ledger: Ledger, client: str = "client-a", subject: str = "1001") -> TokenPair:
    return ledger.issue_tokens(
        subject=subject, client_id=client, scopes=["gmail.read", "gmail.read"], resource=RESOURCE
    )


def test_a_code_is_redeemed_once_and_expires(ledger: Ledger, clock: Clock) -> None:
    code = ledger.issue_code({"client_id": "client-a", "challenge": "x"})
    assert ledger.redeem_code(code) == {"client_id": "client-a", "challenge": "x"}
    assert ledger.redeem_code(code) is None
    late = ledger.issue_code({"client_id": "client-a"})
    clock.now += 60
    assert ledger.redeem_code(late) is None
    assert ledger.redeem_code("never-issued") is None


def test_a_replayed_code_revokes_what_it_issued(ledger: Ledger) -> None:
    code = ledger.issue_code({"client_id": "client-a"})
    assert ledger.redeem_code(code) is not None
    pair = ledger.issue_tokens(subject="1001", client_id="client-a", scopes=["s"], resource=RESOURCE, code=code)
    assert ledger.verify_access(pair.access_token) is not None
    assert ledger.redeem_code(code) is None  # the attacker's (or the confused client's) second try
    assert ledger.verify_access(pair.access_token) is None
    assert ledger.rotate(pair.refresh_token, "client-a") is None


def test_tokens_are_stored_as_hashes_only(ledger: Ledger, store: SQLiteStore) -> None:
    code = ledger.issue_code({"client_id": "client-a"})
    pair = first_pair(ledger)
    rotated = ledger.rotate(pair.refresh_token, "client-a")
    assert rotated is not None
    files = [store.path, Path(str(store.path) + "-wal")]
    raw = b"".join(path.read_bytes() for path in files if path.exists())
    assert b"gmail.read" in raw  # the search does see what is stored
    for secret in (code, pair.access_token, pair.refresh_token, rotated.access_token, rotated.refresh_token):
        assert secret.encode() not in raw


def test_an_access_token_knows_its_person_client_scopes_and_resource(ledger: Ledger, clock: Clock) -> None:
    pair = first_pair(ledger)
    access = ledger.verify_access(pair.access_token, resource=RESOURCE)
    assert access is not None
    assert (access.subject, access.client_id, access.scopes) == ("1001", "client-a", frozenset({"gmail.read"}))
    assert pair.scopes == ("gmail.read",) and pair.expires_in == 3600
    assert ledger.verify_access(pair.access_token, resource="https://other.example/mcp") is None
    assert ledger.verify_access(pair.refresh_token) is None  # a refresh token is no access token
    clock.now += 3600
    assert ledger.verify_access(pair.access_token) is None


def test_rotation_issues_a_new_pair_and_retires_the_old_refresh_token(ledger: Ledger, clock: Clock) -> None:
    pair = first_pair(ledger)
    new = ledger.rotate(pair.refresh_token, "client-a")
    assert new is not None and new.refresh_token != pair.refresh_token and new.access_token != pair.access_token
    assert ledger.verify_access(new.access_token) is not None
    newer = ledger.rotate(new.refresh_token, "client-a")
    assert newer is not None and newer.refresh_token not in (pair.refresh_token, new.refresh_token)


def test_a_rotated_refresh_token_used_after_the_grace_window_revokes_the_family(ledger: Ledger, clock: Clock) -> None:
    """OAuth 2.1 4.3.1 / RFC 9700 4.14.2: a retired refresh token that comes back is a stolen copy (or the thief
    already rotated it): the whole grant ends, for the thief and the client alike."""
    pair = first_pair(ledger)
    new = ledger.rotate(pair.refresh_token, "client-a")
    assert new is not None
    clock.now += 31
    assert ledger.rotate(pair.refresh_token, "client-a") is None
    assert ledger.verify_access(new.access_token) is None
    assert ledger.rotate(new.refresh_token, "client-a") is None


def test_a_second_use_within_the_grace_window_gets_the_same_pair(ledger: Ledger, clock: Clock) -> None:
    pair = first_pair(ledger)
    new = ledger.rotate(pair.refresh_token, "client-a")
    clock.now += 29
    assert ledger.rotate(pair.refresh_token, "client-a") == new
    assert ledger.rotate(pair.refresh_token, "client-b") is None  # only for the client it was issued to
    clock.now += 1
    assert ledger.rotate(pair.refresh_token, "client-a") is None


def refresh_at_once(ledger: Ledger, token: str, requests: int) -> list[TokenPair | None]:
    answers: list[TokenPair | None] = []
    barrier = threading.Barrier(requests)

    def refresh() -> None:
        barrier.wait()
        answers.append(ledger.rotate(token, "client-a"))

    threads = [threading.Thread(target=refresh) for _ in range(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def test_concurrent_refreshes_all_get_one_pair(ledger: Ledger) -> None:
    """Sixteen requests refresh the same token at once, twenty times over: every one gets the same new pair (a
    request that finds the token already retired must still find the pair it was exchanged for)."""
    for _ in range(20):
        answers = refresh_at_once(ledger, first_pair(ledger).refresh_token, 16)
        assert len(answers) == 16 and None not in answers and len(set(answers)) == 1
        winner = answers[0]
        assert winner is not None and ledger.verify_access(winner.access_token) is not None
        assert ledger.rotate(winner.refresh_token, "client-a") is not None  # the shared pair is the live one


def test_another_client_cannot_refresh(ledger: Ledger) -> None:
    pair = first_pair(ledger)
    assert ledger.rotate(pair.refresh_token, "client-b") is None
    assert ledger.rotate(pair.refresh_token, "client-a") is not None


def test_revoking_any_token_ends_the_whole_grant(ledger: Ledger) -> None:
    pair = first_pair(ledger)
    new = ledger.rotate(pair.refresh_token, "client-a")
    other = first_pair(ledger, subject="2002")
    assert ledger.revoke(new.access_token, "client-b") is False  # RFC 7009: only the client it was issued to
    assert ledger.revoke(new.access_token, "client-a") is True
    for token in (pair.access_token, new.access_token):
        assert ledger.verify_access(token) is None
    assert ledger.rotate(new.refresh_token, "client-a") is None
    assert ledger.rotate(pair.refresh_token, "client-a") is None  # not even through the grace window
    assert ledger.verify_access(other.access_token) is not None  # another person's grant is untouched
    assert ledger.revoke(new.access_token, "client-a") is False


def test_revoking_a_just_rotated_refresh_token_ends_the_grant(ledger: Ledger) -> None:
    pair = first_pair(ledger)
    new = ledger.rotate(pair.refresh_token, "client-a")
    assert ledger.revoke(pair.refresh_token, "client-a") is True
    assert ledger.verify_access(new.access_token) is None


def test_an_idle_grant_ends_and_rotation_keeps_an_active_one(ledger: Ledger, clock: Clock) -> None:
    idle = first_pair(ledger)
    active = first_pair(ledger, subject="2002")
    for _ in range(3):
        clock.now += 50_000
        active = ledger.rotate(active.refresh_token, "client-a")
        assert active is not None
    assert ledger.rotate(idle.refresh_token, "client-a") is None


def test_an_expired_or_revoked_access_token_is_known_as_once_issued_for_a_week(ledger: Ledger, clock: Clock) -> None:
    pair = first_pair(ledger)
    assert ledger.was_issued(pair.access_token) and not ledger.was_issued("made-up-" + pair.access_token)
    clock.now += ledger.lifetimes.access_s + 1
    assert ledger.verify_access(pair.access_token) is None and ledger.was_issued(pair.access_token)
    ledger.revoke(pair.refresh_token, "client-a")
    assert ledger.was_issued(pair.access_token)
    clock.now += ledger.lifetimes.issued_s
    assert not ledger.was_issued(pair.access_token)
