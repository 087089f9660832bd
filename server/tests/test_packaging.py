"""Packaging: the wheel that `pip install .` builds carries the three commands, the demo mailbox and neither the
tests nor the demo mailbox generator; its dependency ranges admit the exact pins setup_env installs; and the
installed `gmail-mcp --demo` answers `initialize` and `tools/list` over stdio from any working directory.

The `packaging` tier: `.ci/run` builds the wheel in its own step and runs these against it (GMAIL_MCP_WHEEL);
`pytest -m packaging` alone builds one first."""

from __future__ import annotations

import configparser
import email.parser
import json
import os
import shutil
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from server.runtime.config import PROJECT_ROOT

pytestmark = pytest.mark.packaging

COMMANDS = {
    "gmail-mcp": "server.main:console_main",
    "gmail-mcp-auth": "server.auth_cli:console_main",
    "gmail-mcp-cli": "server.cli:console_main",
}
BUILD_LITTER = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".ruff_cache", ".hypothesis")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = os.environ.get("GMAIL_MCP_WHEEL", "").strip()
    if built:
        return Path(built).resolve(strict=True)
    out = tmp_path_factory.mktemp("wheel")
    # From a copy of the sources: an in-tree build would reuse (and leave) build/lib, stale files and all.
    source = tmp_path_factory.mktemp("source") / "project"
    shutil.copytree(PROJECT_ROOT, source, ignore=shutil.ignore_patterns(*BUILD_LITTER))
    # No build isolation: the pinned setuptools of requirements.txt builds it, with no download.
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), "."],
        cwd=source,
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = out.glob("gmail_mcp_server-*.whl")
    return built


def _metadata(wheel: Path, name: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        (member,) = [item for item in archive.namelist() if item.endswith(f".dist-info/{name}")]
        return archive.read(member).decode()


def test_wheel_declares_the_three_commands(wheel):
    entry_points = configparser.ConfigParser()
    entry_points.read_string(_metadata(wheel, "entry_points.txt"))
    assert dict(entry_points["console_scripts"]) == COMMANDS
    for target in COMMANDS.values():
        module, function = target.split(":")
        assert callable(getattr(__import__(module, fromlist=[function]), function))


def test_wheel_ships_the_demo_mailbox_and_neither_the_tests_nor_the_generator(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert {"server/demo/mailbox.mbox", "server/demo/__init__.py", "server/emulator/__main__.py"} <= set(names)
    assert not [name for name in names if name.startswith(("server/tests/", "server/demo/generator/"))]
    # `--demo` reads the mailbox and the constants beside it; the 3,400 lines that generate it stay in the checkout
    assert sorted(name for name in names if name.startswith("server/demo/")) == [
        "server/demo/__init__.py",
        "server/demo/mailbox.mbox",
    ]


def test_dependency_ranges_admit_the_pinned_versions(wheel):
    declared = [
        Requirement(value)
        for key, value in email.parser.Parser().parsestr(_metadata(wheel, "METADATA")).items()
        if key == "Requires-Dist" and "extra ==" not in value
    ]
    pins = {}
    for line in (PROJECT_ROOT / "requirements.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            pinned = Requirement(line)
            exact = [spec.version for spec in pinned.specifier if spec.operator == "=="]
            if exact:
                pins[pinned.name.lower()] = exact[0]
    assert {requirement.name.lower() for requirement in declared} <= set(pins), "a runtime dependency is not pinned"
    for requirement in declared:
        assert requirement.specifier.contains(pins[requirement.name.lower()]), requirement


def exchange_over_stdio(argv: list[str], env: dict[str, str], cwd: Path | str) -> list[dict]:
    """`initialize` and `tools/list` sent to a server started with `argv`: its two answers."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]  # fmt: skip
    server = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd, text=True
    )
    watchdog = threading.Timer(60, server.kill)  # a hung server fails the test instead of blocking readline
    watchdog.start()
    try:
        lines = []
        for request in requests:  # one answer per request with an id, read before the next is sent
            server.stdin.write(json.dumps(request) + "\n")
            server.stdin.flush()
            if "id" in request:
                lines.append(server.stdout.readline())
    finally:
        server.stdin.close()
        server.wait(timeout=30)
        watchdog.cancel()
    answers = [json.loads(line) for line in lines]
    assert answers[0]["result"]["serverInfo"]["name"] == "gmail"
    return answers


def server_package_seen(env: dict[str, str], cwd: Path | str) -> Path:
    where = subprocess.run(
        [sys.executable, "-s", "-c", "import server; print(server.__file__)"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(where.stdout.strip())


def test_installed_command_serves_the_demo_over_stdio(wheel, tmp_path):
    """The wheel unpacked alone on the path (its dependencies from this environment), started the way the
    `gmail-mcp` console script starts it, from `/`, with no project folder in sight."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    module, function = COMMANDS["gmail-mcp"].split(":")
    launcher = f"import sys; sys.argv[0] = 'gmail-mcp'; from {module} import {function}; {function}()"
    env = {**os.environ, "PYTHONPATH": str(site), "GMAIL_MCP_HOME": str(tmp_path / "home")}
    answers = exchange_over_stdio([sys.executable, "-s", "-c", launcher, "--demo"], env, "/")
    assert {tool["name"] for tool in answers[1]["result"]["tools"]} >= {"gmail_search_messages", "gmail_get_message"}
    assert server_package_seen(env, "/").is_relative_to(site), "the server ran from the checkout, not from the wheel"


def test_the_claude_desktop_bundle_serves_the_tools_its_manifest_lists(tmp_path):
    """The .mcpb that packaging/mcpb/build.sh made (GMAIL_MCP_BUNDLE; .ci/run sets it), unpacked, its launcher run
    as Claude Desktop runs it (`uv run --directory <folder> gmail_mcp_extension.py`; here with this environment's
    Python and dependencies), from another folder: the tools it lists are the manifest's."""
    bundle = os.environ.get("GMAIL_MCP_BUNDLE", "").strip()
    if not bundle:
        pytest.skip("no bundle: build one with packaging/mcpb/build.sh and set GMAIL_MCP_BUNDLE (.ci/run does)")
    folder = tmp_path / "extension"
    zipfile.ZipFile(bundle).extractall(folder)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    env = {**os.environ, "GMAIL_MCP_HOME": str(tmp_path / "home")}
    env.pop("PYTHONPATH", None)
    argv = [sys.executable, "-s", str(folder / manifest["server"]["entry_point"]), "--demo"]
    answers = exchange_over_stdio(argv, env, tmp_path)
    assert [tool["name"] for tool in answers[1]["result"]["tools"]] == [tool["name"] for tool in manifest["tools"]]
    assert server_package_seen(env, folder).is_relative_to(folder), "the server ran from the checkout"
