"""`--auth oauth` configuration: every misconfiguration stops the start with a plain message naming the variable,
and the scope maps follow what the toolsets declare.

Evidence: Google's "Using OAuth 2.0 for Web Server Applications" (a Web client's authorized redirect URIs must hold
the exact callback, else `redirect_uri_mismatch`); MCP authorization spec 2025-11-25 (the resource identifier is
the URL clients use, https).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from server import scopes
from server.remote.oauth_config import load_oauth_settings, public_resource, scope_maps, write_tool_groups
from server.runtime.config import PROJECT_ROOT
from server.toolsets import ALL_TOOLSETS

CALLBACK = "https://mail.example.net/oauth/google/callback"


def client_file(tmp_path: Path, *redirects: str, kind: str = "web") -> Path:
    path = tmp_path / f"{kind}.json"
    body = {"client_id": "id.apps.googleusercontent.com", "client_secret": "s3cret", "redirect_uris": list(redirects)}
    path.write_text(json.dumps({kind: body}))
    return path


def settings(tmp_path: Path, env: dict[str, str], *, loopback: bool = False, enabled: frozenset[str] = frozenset()):
    return load_oauth_settings(loopback_bind=loopback, toolsets=ALL_TOOLSETS, enabled=enabled, home=tmp_path, env=env)


def test_a_complete_configuration(tmp_path: Path) -> None:
    env = {
        "GMAIL_MCP_PUBLIC_URL": "https://mail.example.net/",
        "GMAIL_MCP_GOOGLE_CLIENT_FILE": str(client_file(tmp_path, CALLBACK)),
        "GMAIL_MCP_ALLOWED_USERS": "ada@example.net,@example.org",
    }
    got = settings(tmp_path, env, enabled=frozenset({"drafts", "send", "labels"}))
    assert (got.public_url, got.issuer, got.callback_url) == (
        "https://mail.example.net/mcp",
        "https://mail.example.net",
        CALLBACK,
    )
    assert got.state_dir == tmp_path / "state" and got.state_dir.is_dir()
    assert got.mcp_scopes == ("gmail.read", "gmail.drafts", "gmail.labels", "gmail.send")
    assert got.google_scopes_for(["gmail.read"]) == [scopes.READONLY]
    assert got.google_scopes_for(got.mcp_scopes) == [scopes.READONLY, scopes.COMPOSE, scopes.MODIFY]


def test_scope_maps_follow_the_toolsets_declarations() -> None:
    google = scope_maps(ALL_TOOLSETS, frozenset({"drafts", "send", "labels"}))[1]
    # drafts.send needs gmail.compose (Gmail API reference, users.drafts.send: compose, modify or mail.google.com)
    assert google == {
        "gmail.read": (scopes.READONLY,),
        "gmail.drafts": (scopes.COMPOSE,),
        "gmail.send": (scopes.COMPOSE,),
        "gmail.labels": (scopes.MODIFY,),
    }
    assert scope_maps(ALL_TOOLSETS, frozenset())[0] == ("gmail.read",)
    groups = write_tool_groups(ALL_TOOLSETS)
    assert groups["gmail_create_draft"] == "drafts" and groups["gmail_send_draft"] == "send"
    assert "gmail_search_messages" not in groups


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"GMAIL_MCP_PUBLIC_URL": ""}, "GMAIL_MCP_PUBLIC_URL"),
        ({"GMAIL_MCP_PUBLIC_URL": "http://mail.example.net/mcp"}, "GMAIL_MCP_PUBLIC_URL"),
        ({"GMAIL_MCP_PUBLIC_URL": "https://mail.example.net/mcp?x=1"}, "GMAIL_MCP_PUBLIC_URL"),
        ({"GMAIL_MCP_GOOGLE_CLIENT_FILE": ""}, "GMAIL_MCP_GOOGLE_CLIENT_FILE"),
        ({"GMAIL_MCP_GOOGLE_CLIENT_FILE": "/nonexistent/client.json"}, "GMAIL_MCP_GOOGLE_CLIENT_FILE"),
        ({"GMAIL_MCP_ALLOWED_USERS": ""}, "GMAIL_MCP_ALLOWED_USERS"),
    ],
)
def test_each_misconfiguration_names_its_variable(tmp_path: Path, change: dict[str, str], named: str) -> None:
    env = {
        "GMAIL_MCP_PUBLIC_URL": "https://mail.example.net/mcp",
        "GMAIL_MCP_GOOGLE_CLIENT_FILE": str(client_file(tmp_path, CALLBACK)),
        "GMAIL_MCP_ALLOWED_USERS": "ada@example.net",
        **change,
    }
    with pytest.raises(ValueError, match=named):
        settings(tmp_path, env)


def test_the_client_file_must_be_a_web_client_with_this_servers_callback(tmp_path: Path) -> None:
    base = {"GMAIL_MCP_PUBLIC_URL": "https://mail.example.net/mcp", "GMAIL_MCP_ALLOWED_USERS": "@example.net"}
    wrong_callback = client_file(tmp_path, "https://other.example/oauth/google/callback")
    with pytest.raises(ValueError, match=f"GMAIL_MCP_GOOGLE_CLIENT_FILE .* lack {CALLBACK}"):
        settings(tmp_path, {**base, "GMAIL_MCP_GOOGLE_CLIENT_FILE": str(wrong_callback)})
    desktop = client_file(tmp_path, CALLBACK, kind="installed")
    with pytest.raises(ValueError, match=r"GMAIL_MCP_GOOGLE_CLIENT_FILE: .*Desktop app client"):
        settings(tmp_path, {**base, "GMAIL_MCP_GOOGLE_CLIENT_FILE": str(desktop)})


def test_loopback_needs_no_allow_list_and_may_be_plain_http(tmp_path: Path) -> None:
    local = "http://127.0.0.1:8080/oauth/google/callback"
    env = {
        "GMAIL_MCP_PUBLIC_URL": "http://127.0.0.1:8080/mcp",
        "GMAIL_MCP_GOOGLE_CLIENT_FILE": str(client_file(tmp_path, local, CALLBACK)),
    }
    assert settings(tmp_path, env, loopback=True).allowed_users == ""
    with pytest.raises(ValueError, match="GMAIL_MCP_ALLOWED_USERS"):  # a public URL in front of a loopback bind
        settings(tmp_path, {**env, "GMAIL_MCP_PUBLIC_URL": "https://mail.example.net/mcp"}, loopback=True)
    assert public_resource("https://mail.example.net/gmail/") == "https://mail.example.net/gmail"


def run_main(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GMAIL_")}
    return subprocess.run(
        [sys.executable, "-m", "server.main", *args],
        env={**clean, "PYTHONPATH": str(PROJECT_ROOT), "GMAIL_MCP_HOME": env.pop("HOME_DIR"), **env},
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_server_exits_non_zero_with_the_variable_named(tmp_path: Path) -> None:
    missing = run_main("--http", "127.0.0.1:0", "--auth", "oauth", env={"HOME_DIR": str(tmp_path)})
    assert missing.returncode == 2 and "GMAIL_MCP_PUBLIC_URL" in missing.stderr and missing.stdout == ""
    no_http = run_main("--auth", "oauth", env={"HOME_DIR": str(tmp_path)})
    assert no_http.returncode == 2 and "--http" in no_http.stderr
    no_key = run_main(
        "--http",
        "127.0.0.1:0",
        "--auth",
        "oauth",
        env={
            "HOME_DIR": str(tmp_path),
            "GMAIL_MCP_PUBLIC_URL": "http://127.0.0.1:8080/mcp",
            "GMAIL_MCP_GOOGLE_CLIENT_FILE": str(client_file(tmp_path, "http://127.0.0.1:8080/oauth/google/callback")),
            "GMAIL_MCP_TOKEN_ENCRYPTION": "env",
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        },
    )
    assert no_key.returncode == 2 and "GMAIL_MCP_TOKEN_KEY" in no_key.stderr, no_key.stderr


def test_behind_a_proxy_the_public_host_and_origin_are_accepted_on_a_loopback_bind(tmp_path: Path) -> None:
    """A TLS proxy (Caddy, nginx) forwards the public Host to a loopback bind, and the consent page posts from the
    public origin: both pass the DNS-rebinding checks; strangers still do not."""
    from server.protocol.http_guard import host_allowed, origin_allowed
    from server.protocol.oauth_app import with_public_origin
    from server.runtime.http_config import load_http_settings

    env = {
        "GMAIL_MCP_PUBLIC_URL": "https://mail.example.net/mcp",
        "GMAIL_MCP_GOOGLE_CLIENT_FILE": str(client_file(tmp_path, CALLBACK)),
        "GMAIL_MCP_ALLOWED_USERS": "@example.net",
    }
    options = with_public_origin(load_http_settings("127.0.0.1:8080", {}), settings(tmp_path, env, loopback=True))
    assert host_allowed("mail.example.net", options) and origin_allowed("https://mail.example.net", options)
    assert not host_allowed("evil.example", options) and not origin_allowed("https://evil.example", options)


@pytest.mark.parametrize("toolset", [t for t in ALL_TOOLSETS if t.opt_in], ids=lambda t: t.name)
def test_every_write_group_asks_google_for_scopes_each_of_its_tools_works_with(toolset):
    """A group's MCP scope must lead to Google scopes its tools accept: contacts once fell back to gmail.modify,
    which the People API refuses, and filters to gmail.modify, broader than gmail.settings.basic."""
    _mcp, google = scope_maps(ALL_TOOLSETS, frozenset({toolset.name}))
    asked = set(google["gmail." + toolset.name]) | {scopes.READONLY}
    assert all(not spec.scopes.isdisjoint(asked) for spec in toolset.tools)
    if toolset.name in scopes.BUNDLES:  # what `auth_cli.py --scopes <group>` asks for locally
        assert set(scopes.BUNDLES[toolset.name]) <= asked
    assert scopes.FULL not in asked and (toolset.name not in ("contacts", "filters") or scopes.MODIFY not in asked)
