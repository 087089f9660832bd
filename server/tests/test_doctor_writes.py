"""`--check` with write tools enabled: one line per group the token cannot serve (naming the consent command),
and one line saying how writes will behave (dry run, send limit, audit log, attachment folder)."""

from __future__ import annotations

from server.tests.test_doctor import check
from server.toolsets import ALL_TOOLSETS


def env(emulator, tmp_path, scopes, **extra):
    token = emulator.write_token(tmp_path / "token.json", scopes=scopes)
    return {
        "GMAIL_API_ENDPOINT": emulator.url,
        "GMAIL_TOKEN_URI": emulator.token_uri,
        "GMAIL_TOKEN_PATH": str(token),
        "GMAIL_MCP_WRITE_TOOLS": "drafts,labels,send",
        **extra,
    }


def test_groups_lacking_their_scope_are_named_with_the_command(emulator, tmp_path):
    result = check(tmp_path, env(emulator, tmp_path, ["readonly", "compose"]))
    assert result.returncode == 0, result.stdout
    [warning] = [line for line in result.stdout.splitlines() if line.startswith("[warn]") and "tools" in line]
    assert "'labels' tools are enabled but the token lacks their scope (modify)" in warning
    assert "--scopes readonly,modify" in warning
    assert "writes are real; at most 10 sends an hour" in result.stdout
    assert "attaching local files: off" in result.stdout


def test_a_fully_granted_dry_run_setup_says_so(emulator, tmp_path):
    folder = tmp_path / "outbox"
    folder.mkdir()
    extra = {
        "GMAIL_MCP_DRY_RUN": "1",
        "GMAIL_MCP_SEND_LIMIT_PER_HOUR": "3",
        "GMAIL_MCP_AUDIT_LOG": str(tmp_path / "audit.jsonl"),
        "GMAIL_MCP_ATTACH_DIR": str(folder),
    }
    result = check(tmp_path, env(emulator, tmp_path, ["readonly", "compose", "modify"], **extra))
    assert "[  ok] write tools enabled and granted: drafts, labels, send" in result.stdout
    assert "DRY RUN (nothing is changed or sent)" in result.stdout and "at most 3 sends an hour" in result.stdout
    assert str(tmp_path / "audit.jsonl") in result.stdout and f"attachments only from {folder}" in result.stdout
    assert not [line for line in result.stdout.splitlines() if line.startswith("[warn]") and "tools" in line]


def test_an_unknown_group_stops_the_server_with_the_valid_names(tmp_path):
    result = check(tmp_path, {"GMAIL_MCP_WRITE_TOOLS": "drafts,sendmail"})
    assert result.returncode == 2
    valid = ", ".join(sorted(toolset.name for toolset in ALL_TOOLSETS if toolset.opt_in))  # drafts, labels, send...
    assert "unknown write tool group(s) sendmail" in result.stderr and f"valid: {valid}" in result.stderr
