"""Who may sign in (`GMAIL_MCP_ALLOWED_USERS`: exact addresses and `@domain` entries, case-insensitive) and which
redirect URIs a dynamic registration may name (https, or http on a loopback address: RFC 8252 7.3 and 8.4)."""

from __future__ import annotations

import pytest

from server.remote.authorization import AllowedUsers
from server.remote.clients import registrable_redirect


def test_addresses_and_domains_are_matched_exactly_and_case_insensitively() -> None:
    allowed = AllowedUsers.parse("Alice@X.com, @Example.ORG\n bob@y.net")
    assert allowed.allows("alice@x.com") and allowed.allows(" ALICE@x.COM ")
    assert allowed.allows("carol@example.org") and allowed.allows("Dave@EXAMPLE.org")
    assert allowed.allows("bob@y.net")
    for refused in (
        "alice@x.com.evil",
        "eve@sub.example.org",
        "eve@notexample.org",
        "alice@y.net",
        "",
        "x@@example.org",
    ):
        assert not allowed.allows(refused), refused
    assert allowed.describe() == "alice@x.com, bob@y.net, any address at example.org"
    assert not AllowedUsers.parse("").allows("alice@x.com")
    assert "nobody" in AllowedUsers.parse("").describe()


@pytest.mark.parametrize("entry", ["alice", "@", "a@b@c", "@x@y", "alice@"])
def test_an_entry_that_is_neither_an_address_nor_a_domain_is_an_error(entry: str) -> None:
    with pytest.raises(ValueError, match="neither an address nor an @domain"):
        AllowedUsers.parse(f"ok@x.com, {entry}")


def test_registrable_redirects() -> None:
    for good in (
        "https://claude.ai/api/mcp/auth_callback",
        "https://app.example:8443/cb?x=1",
        "http://127.0.0.1:33418/callback",
        "http://localhost/cb",
        "http://[::1]:9/cb",
    ):
        assert registrable_redirect(good), good
    for bad in (
        "http://app.example/cb",
        "http://10.0.0.1/cb",
        "cursor://anysphere.cursor-retrieval/oauth/callback",
        "https://app.example/cb#frag",
        "https://user:pw@app.example/cb",
        "https:///cb",
        "javascript:alert(1)",
    ):
        assert not registrable_redirect(bad), bad
