"""What one replica writes and another reads: confirmation codes, send limits, quota budgets, the request-state
key ring. Each test runs on the embedded SQLite store and on a real redis-server (`any_store`); "another replica"
is a second store object on the same data (`any_store.replica()`), as a second process would open it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from mcp.server.request_state import InvalidRequestState

from server.errors import ConfirmationError, SendLimitError
from server.remote.key_ring import key_ring, request_state_security
from server.remote.shared_confirmations import SharedConfirmationBook
from server.remote.shared_limits import SharedQuotaLimiter, SharedSendGuard
from server.remote.store import CONFIRM, QUOTA
from server.runtime.confirmations import MAX_WRONG_CODES
from server.tests.support.redis_server import StoreUnderTest

OWNER = "person-tag\0me@example.com"
DRAFT, DIGEST = "r-123", "digest-1"


def books(any_store: StoreUnderTest, owner: str = OWNER) -> tuple[SharedConfirmationBook, SharedConfirmationBook]:
    clock = any_store.clock
    return (
        SharedConfirmationBook(any_store.store, owner, 300.0, clock=clock),
        SharedConfirmationBook(any_store.replica(), owner, 300.0, clock=clock),
    )


def test_a_code_issued_on_one_replica_is_redeemed_on_another_once(any_store: StoreUnderTest) -> None:
    a, b = books(any_store)
    issued = a.issue(DRAFT, DIGEST)
    assert issued.expires_in_s == 300 and len(issued.code) == 9  # XXXX-XXXX, as in-process
    b.redeem(issued.code.lower().replace("-", " "), DRAFT, DIGEST)  # typed back loosely, as a person would
    with pytest.raises(ConfirmationError, match="already used"):
        a.redeem(issued.code, DRAFT, DIGEST)
    with pytest.raises(ConfirmationError, match="already used"):
        b.redeem(issued.code, DRAFT, DIGEST)


def test_a_code_is_bound_to_its_person_account_and_action(any_store: StoreUnderTest) -> None:
    a, b = books(any_store)
    stranger = SharedConfirmationBook(any_store.replica(), "other-person\0me@example.com", clock=any_store.clock)
    issued = a.issue(DRAFT, DIGEST)
    with pytest.raises(ConfirmationError, match="not valid"):
        stranger.redeem(issued.code, DRAFT, DIGEST)  # the same mailbox reached by another person
    with pytest.raises(ConfirmationError, match="another draft"):
        b.redeem(issued.code, "r-other", DIGEST)
    b.redeem(issued.code, DRAFT, DIGEST)  # a code for another draft was not used up by the mistake
    changed = a.issue(DRAFT, DIGEST)
    with pytest.raises(ConfirmationError, match="changed"):
        b.redeem(changed.code, DRAFT, "digest-2")
    with pytest.raises(ConfirmationError, match="already used"):
        a.redeem(changed.code, DRAFT, "digest-2")  # a yes to another state of the draft is spent


def test_a_code_expires_with_its_lifetime(any_store: StoreUnderTest) -> None:
    a, b = books(any_store)
    issued = a.issue(DRAFT, DIGEST)
    assert 0 < (any_store.remaining_ms(CONFIRM, a._key(issued.code)) or 0) <= 300_000
    any_store.expire(CONFIRM, a._key(issued.code))
    with pytest.raises(ConfirmationError, match="expired"):
        b.redeem(issued.code, DRAFT, DIGEST)


def test_a_restored_code_works_again_on_any_replica(any_store: StoreUnderTest) -> None:
    a, b = books(any_store)
    issued = a.issue(DRAFT, DIGEST)
    key = b.redeem(issued.code, DRAFT, DIGEST)
    b.restore(key)  # Gmail refused the send: the same yes still stands
    a.redeem(issued.code, DRAFT, DIGEST)


def test_wrong_codes_on_any_replica_lock_every_code_out(any_store: StoreUnderTest) -> None:
    a, b = books(any_store)
    issued = a.issue(DRAFT, DIGEST)
    for attempt in range(MAX_WRONG_CODES):
        with pytest.raises(ConfirmationError, match="not valid"):
            (a if attempt % 2 else b).redeem("ZZZZ-ZZZZ", DRAFT, DIGEST)
    with pytest.raises(ConfirmationError, match="Too many wrong"):
        b.redeem(issued.code, DRAFT, DIGEST)


def race(workers: list[Callable[[], None]]) -> list[BaseException | None]:
    """Runs the workers at the same moment; each one's exception or None."""
    barrier = threading.Barrier(len(workers))
    outcomes: list[BaseException | None] = [None] * len(workers)

    def run(index: int) -> None:
        barrier.wait()
        try:
            workers[index]()
        except BaseException as error:
            outcomes[index] = error

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(workers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_replicas_redeeming_one_code_at_once_send_once(any_store: StoreUnderTest) -> None:
    replicas = [SharedConfirmationBook(any_store.replica(), OWNER, clock=any_store.clock) for _ in range(6)]
    issued = replicas[0].issue(DRAFT, DIGEST)
    outcomes = race([lambda book=book: book.redeem(issued.code, DRAFT, DIGEST) for book in replicas])
    assert outcomes.count(None) == 1
    assert all(isinstance(error, ConfirmationError) for error in outcomes if error is not None)


def test_the_send_limit_counts_every_replica(any_store: StoreUnderTest) -> None:
    a, b = SharedSendGuard(any_store.store, OWNER, 3), SharedSendGuard(any_store.replica(), OWNER, 3)
    a.take()
    b.take()
    assert a.remaining() == b.remaining() == 1
    a.check()
    b.take()
    with pytest.raises(SendLimitError, match="every replica"):
        a.check()
    with pytest.raises(SendLimitError):
        a.take()
    assert b.remaining() == 0
    other = SharedSendGuard(any_store.replica(), "other-person\0me@example.com", 3)
    assert other.remaining() == 3  # limits are per person and account


def test_replicas_racing_for_the_last_sends_get_exactly_the_limit(any_store: StoreUnderTest) -> None:
    guards = [SharedSendGuard(any_store.replica(), OWNER, 4) for _ in range(10)]
    outcomes = race([guard.take for guard in guards])
    assert outcomes.count(None) == 4
    assert all(isinstance(error, SendLimitError) for error in outcomes if error is not None)
    assert guards[0].remaining() == 0


def test_the_quota_budget_is_shared_by_the_replicas(any_store: StoreUnderTest) -> None:
    waits: list[float] = []
    clock = any_store.clock
    clock.now = 1_800_000_000.0  # the start of a window (burst 20 / rate 10: 2 s windows; leases of 2 units)
    a = SharedQuotaLimiter(any_store.store, OWNER, 10.0, 20.0, clock=clock, sleep=waits.append)
    b = SharedQuotaLimiter(any_store.replica(), OWNER, 10.0, 20.0, clock=clock, sleep=waits.append)
    assert a.acquire(15) == 0.0
    assert b.acquire(5) == 0.0  # the window's budget, spent by two replicas together
    assert b.acquire(10) == pytest.approx(2.0 + 1.0)  # the next window, plus 10 units at 10 per second
    assert waits == [pytest.approx(3.0)]
    other = SharedQuotaLimiter(any_store.replica(), "someone else", 10.0, 20.0, clock=clock, sleep=waits.append)
    assert other.acquire(20) == 0.0  # budgets are per person and account
    clock.now += 2.0
    assert a.acquire(20) == 0.0  # a new window


def test_small_requests_spend_a_lease_without_a_store_round_trip(any_store: StoreUnderTest) -> None:
    clock = any_store.clock
    clock.now = 1_800_000_000.0
    limiter = SharedQuotaLimiter(any_store.store, OWNER, 100.0, 250.0, clock=clock, sleep=lambda _: None)
    window = f"{limiter._owner}:{int(clock.now // limiter.window_s)}"
    for _ in range(12):  # 12 history checks of 2 units: within one lease of 25 units
        assert limiter.acquire(2) == 0.0
    assert any_store.store.incr(QUOTA, window, 0, 10) == 25  # one round trip took the lease; none since
    limiter.acquire(2)
    assert any_store.store.incr(QUOTA, window, 0, 10) == 50  # the next lease


def test_a_request_state_sealed_by_one_replica_opens_on_another() -> None:
    vault_key = b"Zm9yLXRlc3RzLW9ubHktYS1mZXJuZXQta2V5LTMyYj0="
    sealed = request_state_security(vault_key).codec.seal(b'{"held":"token"}')
    assert request_state_security(vault_key).codec.unseal(sealed) == b'{"held":"token"}'  # built separately
    with pytest.raises(InvalidRequestState):
        request_state_security(b"another-deployment-s-vault-key").codec.unseal(sealed)
    rotated = request_state_security(b"the-new-vault-key", previous=[vault_key])
    assert rotated.codec.unseal(sealed) == b'{"held":"token"}'  # the overlap of a rotation
    assert key_ring(vault_key)[0] != vault_key and len(key_ring(vault_key)[0]) == 32  # derived, not the key
