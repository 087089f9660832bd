"""The Dockerfile, checked as text (no container engine in CI): a non-root numeric user, nothing secret in the
image or its build context, the token folder as a volume, read-only root filesystem friendly, a health check on
/healthz, and a command that serves HTTP on the exposed port with the installed entry point."""

from __future__ import annotations

import ast
import json
import re
import shlex
from pathlib import Path

import pytest

from server.runtime.config import PROJECT_ROOT

DOCKERFILE = PROJECT_ROOT / "Dockerfile"
SECRET_NAMES = ("GMAIL_MCP_HTTP_TOKEN", "GMAIL_MCP_TOKEN_KEY", "client_secret", "refresh_token", "PASSWORD")
SECRET_FILES = ("credentials.json", ".token.json", ".env", "tokens")


def instructions(path: Path = DOCKERFILE) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    joined, pending = [], ""
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("#") and not pending:
            continue
        pending += line.rstrip("\\").strip() + " " if line.rstrip().endswith("\\") else line.strip()
        if not line.rstrip().endswith("\\"):
            if pending.strip():
                joined.append(pending.strip())
            pending = ""
    return [(text.split(None, 1)[0].upper(), text.split(None, 1)[1] if " " in text else "") for text in joined]


def final_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(index for index, (name, _) in enumerate(steps) if name == "FROM")
    return steps[last_from:]


def exec_form(arguments: str) -> list[str]:
    return json.loads(arguments)


def test_the_server_runs_as_a_numeric_non_root_user():
    users = [args for name, args in final_stage() if name == "USER"]
    assert users, "the final stage sets no USER"
    user = users[-1].split(":")[0]
    assert user.isdigit() and int(user) >= 1000  # numeric: Kubernetes' runAsNonRoot can verify it


def test_no_secret_is_baked_into_the_image_or_its_build_context():
    for name, args in instructions():
        if name in ("ENV", "ARG", "LABEL"):
            for secret in SECRET_NAMES:
                assert secret.lower() not in args.lower(), f"{name} {args}"
        if name in ("COPY", "ADD"):
            sources = [part for part in shlex.split(args) if not part.startswith("--")][:-1]
            for source in sources:
                assert Path(source).name not in SECRET_FILES, f"{name} {args}"
    ignored = {line.strip() for line in (PROJECT_ROOT / ".dockerignore").read_text().splitlines()}
    assert {"credentials.json", ".token.json", "tokens/", ".env", ".git", ".venv"} <= ignored


def test_the_token_folder_is_a_volume_and_the_home_points_at_it():
    stage = final_stage()
    volumes = [exec_form(args) for name, args in stage if name == "VOLUME"]
    env = " ".join(args for name, args in stage if name == "ENV")
    assert ["/data"] in volumes and "GMAIL_MCP_HOME=/data" in env


def test_read_only_root_filesystem_friendly():
    stage = final_stage()
    env = " ".join(args for name, args in stage if name == "ENV")
    assert "PYTHONDONTWRITEBYTECODE=1" in env and "HOME=/tmp" in env  # no .pyc, no writes to a home folder
    build = " ".join(args for name, args in instructions() if name == "RUN")
    assert "compileall" in build  # bytecode made at build time instead


def test_health_check_and_command_serve_http_on_the_exposed_port():
    stage = final_stage()
    (health,) = [args for name, args in stage if name == "HEALTHCHECK"]
    command = exec_form(health[health.index("CMD") + 3 :].strip())
    assert command[:2] == ["python", "-c"] and "/healthz" in command[2]
    ast.parse(command[2])  # valid Python
    (exposed,) = [args for name, args in stage if name == "EXPOSE"]
    assert f"127.0.0.1:{exposed}/healthz" in command[2]
    (entrypoint,) = [exec_form(args) for name, args in stage if name == "ENTRYPOINT"]
    (cmd,) = [exec_form(args) for name, args in stage if name == "CMD"]
    assert entrypoint == ["gmail-mcp"] and cmd == ["--http", f"0.0.0.0:{exposed}"]
    assert 'gmail-mcp = "server.main:console_main"' in (PROJECT_ROOT / "pyproject.toml").read_text()


def test_the_image_installs_the_pinned_runtime_dependencies_only():
    build = " ".join(args for name, args in instructions() if name == "RUN")
    assert re.search(r"pip install --constraint requirements\.txt \.", build)
    versions = [args for name, args in instructions() if name == "FROM"]
    assert all(re.match(r"python:3\.1[0-3]-slim", version) for version in versions), versions


@pytest.mark.parametrize("bad", ["USER root", "USER 0"])
def test_the_checks_can_fail(tmp_path, bad):
    broken = tmp_path / "Dockerfile"
    broken.write_text(DOCKERFILE.read_text().replace("USER 10001:10001", bad))
    last = [args for name, args in instructions(broken) if name == "USER"][-1].split(":")[0]
    assert not (last.isdigit() and int(last) >= 1000)
