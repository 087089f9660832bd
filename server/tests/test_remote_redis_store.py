"""The Redis store's own promises, on real redis-server processes: choosing it from the environment (password,
database number, TLS), namespaced keys that all expire, a plain error when it cannot be reached at start-up, a
transient error while it is down and recovery by itself when it is back."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from server.remote.redis_store import RedisStore, describe_url
from server.remote.sqlite_store import FILE_NAME, SQLiteStore
from server.remote.store import CODE, CONFIRM, CONSENT, KEYRING, QUOTA, SENT, StoreUnavailable
from server.remote.store_choice import open_store, store_namespace
from server.tests.support.redis_server import RedisServer, free_port, fresh_namespace, require_binary
from server.tests.support.tls import self_signed

PASSWORD = "s3cret-store-pass"


def test_without_a_server_binary_tests_skip_locally_and_fail_in_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a folder with no redis-server or valkey-server in it
    monkeypatch.delenv("GMAIL_MCP_TEST_REDIS_SERVER", raising=False)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no valkey-server or redis-server on PATH"):
        require_binary()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"CI must have it \(.ci/run installs it\)"):
        require_binary()


def test_unset_means_the_embedded_store_and_other_schemes_are_refused(tmp_path: Path) -> None:
    store = open_store({"GMAIL_MCP_STATE_DIR": str(tmp_path / "state"), "GMAIL_MCP_STORE": " "})
    assert isinstance(store, SQLiteStore) and store.path == tmp_path / "state" / FILE_NAME
    store.close()
    for value, shown in (("http://store:6379", "http://"), ("store:6379", "store://"), ("valkey", "not a URL")):
        with pytest.raises(ValueError, match="redis:// or rediss://") as refused:
            open_store({"GMAIL_MCP_STORE": value})
        assert shown in str(refused.value)


def test_an_option_the_client_does_not_take_is_a_configuration_error(redis_server: RedisServer) -> None:
    with pytest.raises(ValueError, match="option the Redis client does not take"):
        open_store({"GMAIL_MCP_STORE": f"{redis_server.url}?socket_timeot=2"})


def test_an_embedded_store_that_cannot_be_created_says_where(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreUnavailable, match="cannot be opened at start-up") as refused:
        open_store({"GMAIL_MCP_STATE_DIR": str(blocker / "state")})
    assert "GMAIL_MCP_STATE_DIR" in str(refused.value)


def test_the_namespace_is_per_deployment() -> None:
    assert store_namespace({}) == "gmail-mcp"
    assert store_namespace({"GMAIL_MCP_PUBLIC_URL": "https://Mail.Example.com/"}) == "gmail-mcp:mail.example.com"
    assert store_namespace({"GMAIL_MCP_PUBLIC_URL": "https://a.example:8443/team/"}) == "gmail-mcp:a.example:8443/team"
    assert store_namespace({"GMAIL_MCP_STORE_NAMESPACE": " prod-eu ", "GMAIL_MCP_PUBLIC_URL": "https://x"}) == "prod-eu"
    with pytest.raises(ValueError, match="without spaces"):
        store_namespace({"GMAIL_MCP_STORE_NAMESPACE": "two words"})


def test_addresses_in_messages_never_carry_the_password() -> None:
    assert describe_url(f"rediss://app:{PASSWORD}@store.internal:6380/2?x=1") == "rediss://app@store.internal:6380/2"
    assert describe_url(f"redis://:{PASSWORD}@store") == "redis://store"


def test_keys_are_namespaced_and_every_key_expires(redis_server: RedisServer) -> None:
    """Two deployments on one server: each sees only its own entries; every key either wrote has a lifetime."""
    first = open_store({"GMAIL_MCP_STORE": redis_server.url, "GMAIL_MCP_STORE_NAMESPACE": fresh_namespace()})
    second = open_store({"GMAIL_MCP_STORE": redis_server.url, "GMAIL_MCP_STORE_NAMESPACE": fresh_namespace()})
    assert isinstance(first, RedisStore) and isinstance(second, RedisStore)
    try:
        first.put(CONSENT, "person", {"v": 1}, ttl_s=600)
        first.add(KEYRING, "period-1", {"key": "k"}, ttl_s=7200)
        first.put(CODE, "used", {"v": 1}, ttl_s=60)
        first.take(CODE, "used")
        first.incr(SENT, "person", 1, ttl_s=3600)
        first.incr(QUOTA, "person", 5, ttl_s=86400)
        assert second.get(CONSENT, "person") is None and second.incr(SENT, "person", 1, ttl_s=60) == 1
        with redis.Redis.from_url(redis_server.url) as raw:
            keys = sorted(key.decode() for key in raw.scan_iter(match=f"{first.namespace}:*"))
            assert keys == [
                f"{first.namespace}:consent:person",
                f"{first.namespace}:keyring:period-1",
                f"{first.namespace}:quota:person",
                f"{first.namespace}:sent:person",
            ]
            assert all(raw.pttl(key) > 0 for key in keys)
        assert first.sweep() == 0  # Redis expires keys itself
        before = first.round_trips
        first.get(CONSENT, "person")
        first.incr(SENT, "person", 1, ttl_s=3600)
        assert first.round_trips - before == 2  # one command each (the counter's script included)
    finally:
        first.close()
        second.close()


def test_password_and_database_number_come_from_the_url(tmp_path: Path) -> None:
    server = RedisServer(require_binary(), tmp_path / "redis", "--requirepass", PASSWORD).start()
    try:
        url = f"redis://:{PASSWORD}@127.0.0.1:{server.port}/3"
        store = open_store({"GMAIL_MCP_STORE": url, "GMAIL_MCP_STORE_NAMESPACE": "ns"})
        store.put(CONFIRM, "c", {"v": 1}, ttl_s=60)
        with redis.Redis(port=server.port, password=PASSWORD, db=3) as raw:
            assert raw.get("ns:confirm:c") == b'{"v":1}'
        with redis.Redis(port=server.port, password=PASSWORD, db=0) as raw:
            assert raw.dbsize() == 0
        store.close()
        for wrong in (f"redis://:not-the-pass-42@127.0.0.1:{server.port}/0", f"redis://127.0.0.1:{server.port}/0"):
            with pytest.raises(StoreUnavailable, match="cannot be reached at start-up") as refused:
                open_store({"GMAIL_MCP_STORE": wrong})
            assert "not-the-pass-42" not in str(refused.value) and PASSWORD not in str(refused.value)
    finally:
        server.stop()


def test_an_unreachable_store_at_start_up_is_named_plainly() -> None:
    url = f"redis://:{PASSWORD}@127.0.0.1:{free_port()}/0"  # nothing listens there
    with pytest.raises(StoreUnavailable) as refused:
        open_store({"GMAIL_MCP_STORE": url})
    message = str(refused.value)
    assert "cannot be reached at start-up" in message and "GMAIL_MCP_STORE" in message
    assert f"redis://127.0.0.1:{url.rsplit(':', 1)[1].split('/')[0]}/0" in message
    assert PASSWORD not in message


def test_a_store_that_goes_away_is_a_transient_error_and_comes_back_by_itself(tmp_path: Path) -> None:
    """redis-server stopped mid-test, then started again on the same port: while it is down every operation
    raises StoreUnavailable (transient, with a hint) and readiness says no; the first operation after the restart
    succeeds on the same store object. Nothing was persisted (`--save ''`), so entries from before are gone."""
    server = RedisServer(require_binary(), tmp_path / "redis").start()
    store = open_store({"GMAIL_MCP_STORE": server.url, "GMAIL_MCP_STORE_NAMESPACE": "restart"})
    try:
        store.put(CONFIRM, "before", {"v": 1}, ttl_s=60)
        assert store.incr(SENT, "person", 1, ttl_s=60) == 1
        server.stop()
        for operation in (
            lambda: store.get(CONFIRM, "before"),
            lambda: store.take(CONFIRM, "before"),
            lambda: store.add(CONFIRM, "x", {}, ttl_s=60),
            lambda: store.incr(SENT, "person", 1, ttl_s=60),
            store.ping,
        ):
            with pytest.raises(StoreUnavailable) as down:
                operation()
            error = down.value.to_dict()
            assert error["category"] == "transient" and error["retryable"] is True
            assert "GMAIL_MCP_STORE" in error["hint"] and f"127.0.0.1:{server.port}" in error["message"]
        assert store.ready() is False
        server.start()
        assert store.get(CONFIRM, "before") is None  # the first call after the restart: answered, not an error
        assert store.ready() is True
        assert store.incr(SENT, "person", 1, ttl_s=60) == 1  # the Lua script is loaded again by itself
        assert store.add(CONFIRM, "after", {"v": 2}, ttl_s=60) and store.take(CONFIRM, "after") == {"v": 2}
    finally:
        store.close()
        server.stop()


def test_tls_with_rediss_verifies_the_server(tmp_path: Path) -> None:
    certificate, key = self_signed(tmp_path / "tls", "127.0.0.1")
    server = RedisServer(require_binary(), tmp_path / "redis", "--requirepass", PASSWORD, tls=(certificate, key))
    server.start()
    try:
        url = f"rediss://:{PASSWORD}@127.0.0.1:{server.port}/1?ssl_ca_certs={certificate}"
        store = open_store({"GMAIL_MCP_STORE": url})
        store.put(CONSENT, "k", {"over": "tls"}, ttl_s=60)
        assert store.get(CONSENT, "k") == {"over": "tls"}
        store.close()
        with pytest.raises(StoreUnavailable, match="cannot be reached at start-up"):  # a server nobody vouches for
            open_store({"GMAIL_MCP_STORE": f"rediss://:{PASSWORD}@127.0.0.1:{server.port}/1"})
        with pytest.raises(StoreUnavailable):  # plain text to a TLS port
            open_store({"GMAIL_MCP_STORE": f"redis://:{PASSWORD}@127.0.0.1:{server.port}/1?socket_timeout=2"})
    finally:
        server.stop()
