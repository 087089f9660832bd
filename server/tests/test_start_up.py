"""Start-up. The server process defers the MCP SDK's `mcp/__init__.py` and `mcp/server/__init__.py`
(`server/protocol/sdk_packages.py`): safe only while they do nothing but re-export, and invisible to anyone who
asks for what they re-export. Pinned against the installed SDK, in fresh interpreters and over stdio. Also over
stdio: the garbage collector, off while the server is built, is back on when it serves (`main.collect_from_now_on`)."""

from __future__ import annotations

import ast
import gc
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from server.main import collect_from_now_on
from server.protocol.sdk_packages import PACKAGES, defer_sdk_package_inits
from server.runtime.config import PROJECT_ROOT
from server.tests.support.emulator import emulator_env
from server.tests.support.raw_jsonrpc import INITIALIZED, initialize, run_fresh
from server.toolsets import ALWAYS_ON_TOOLS

pytestmark = pytest.mark.slow  # fresh interpreters: the slow tier (`pytest -m slow`)


def init_source(package: str) -> tuple[Path, ast.Module]:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.origin is not None and spec.origin.endswith("__init__.py")
    path = Path(spec.origin)
    return path, ast.parse(path.read_text("utf-8"))


def does_more_than_reexport(statement: ast.stmt, package: str) -> bool:
    """Anything but a docstring, an import from the SDK itself (`mcp...`, relative, `mcp_types...`) and a literal
    `__all__`: a call, a definition, a third-party import, a conditional would all make skipping it unsafe."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return False
    if isinstance(statement, ast.ImportFrom):
        return not (statement.level > 0 or (statement.module or "").split(".")[0] in ("mcp", "mcp_types"))
    if isinstance(statement, ast.Import):
        return not all(alias.name.split(".")[0] in ("mcp", "mcp_types") for alias in statement.names)
    if isinstance(statement, ast.Assign) and [ast.unparse(target) for target in statement.targets] == ["__all__"]:
        value = statement.value
        return not (
            isinstance(value, (ast.List, ast.Tuple))
            and all(isinstance(item, ast.Constant) and isinstance(item.value, str) for item in value.elts)
        )
    return True


def test_the_deferred_sdk_inits_only_import_and_reexport() -> None:
    """An SDK upgrade that makes either `__init__` do real work (register something, configure logging, patch)
    fails here: then the deferral must go (`server/protocol/sdk_packages.py`, `console_main`)."""
    for package in PACKAGES:
        path, tree = init_source(package)
        extra = [ast.unparse(node)[:120] for node in tree.body if does_more_than_reexport(node, package)]
        assert extra == [], f"{path} now does more than re-export: {extra}"
        exported = next(node for node in tree.body if isinstance(node, ast.Assign))
        assert ast.literal_eval(exported.value), f"{path} lost its __all__"


def test_the_guard_sees_real_work() -> None:
    source = "from .x import y\nimport logging\nlogging.basicConfig()\nif True:\n    pass\n__all__ = [name]\n"
    flagged = [ast.unparse(node) for node in ast.parse(source).body if does_more_than_reexport(node, "mcp")]
    assert flagged == ["import logging", "logging.basicConfig()", "if True:\n    pass", "__all__ = [name]"]


def test_it_does_nothing_where_mcp_is_already_imported() -> None:
    import mcp.server

    before = {name: sys.modules[name] for name in PACKAGES}
    assert defer_sdk_package_inits() is False
    assert {name: sys.modules[name] for name in PACKAGES} == before and hasattr(mcp, "Client")


def test_in_a_fresh_process_the_server_loads_neither_the_client_side_nor_mcpserver() -> None:
    seen = run_fresh(
        """
        import json, sys
        from server.protocol.sdk_packages import deferred, defer_sdk_package_inits
        assert defer_sdk_package_inits() is True
        import server.protocol.dispatch, server.protocol.stdio_pipes, server.protocol.http_guard
        loaded = lambda prefix: any(name == prefix or name.startswith(prefix + ".") for name in sys.modules)
        print(json.dumps({
            "client": loaded("mcp.client"), "mcpserver": loaded("mcp.server.mcpserver"),
            "lowlevel": loaded("mcp.server.lowlevel"), "deferred": [deferred("mcp"), deferred("mcp.server")],
        }))
        """
    )
    assert seen == {"client": False, "mcpserver": False, "lowlevel": True, "deferred": [True, True]}


def test_a_name_the_inits_reexport_is_found_once_asked_for() -> None:
    """Deferred, not skipped: `from mcp import ...` and `from mcp.server import ...` run the real `__init__`s then,
    in the same module objects, and get the very objects the full import gives."""
    seen = run_fresh(
        """
        import json, sys
        from server.protocol.sdk_packages import deferred, defer_sdk_package_inits
        defer_sdk_package_inits()
        package = sys.modules["mcp"]
        from mcp.server.lowlevel.server import Server as LowLevel
        from mcp import Client, stdio_server
        from mcp.server import MCPServer, Server
        import mcp.client.client, mcp.server.mcpserver, mcp.server.stdio
        print(json.dumps({
            "same_module": sys.modules["mcp"] is package,
            "objects": [Client is mcp.client.client.Client, stdio_server is mcp.server.stdio.stdio_server,
                        Server is LowLevel, MCPServer is mcp.server.mcpserver.MCPServer],
            "all": sorted(mcp.__all__) == sorted(set(mcp.__all__)) and "Client" in mcp.__all__,
            "deferred": [deferred("mcp"), deferred("mcp.server")],
        }))
        """
    )
    assert seen == {"same_module": True, "objects": [True] * 4, "all": True, "deferred": [False, False]}


def test_threads_asking_at_once_wait_for_the_one_run_and_a_failed_run_is_retried() -> None:
    seen = run_fresh(
        """
        import json, sys, threading
        from server.protocol.sdk_packages import deferred, defer_sdk_package_inits
        defer_sdk_package_inits()
        package = sys.modules["mcp"]
        real_loader = package.__spec__.loader

        running, second_asks = threading.Event(), threading.Event()

        class FailsOnce:
            calls = 0
            def exec_module(self, module):
                FailsOnce.calls += 1
                if FailsOnce.calls == 1:
                    raise RuntimeError("first run fails")
                running.set()
                second_asks.wait(10)  # the run is under way when the other thread asks
                real_loader.exec_module(module)

        package.__spec__.loader = FailsOnce()
        try:
            package.Client
        except RuntimeError:
            failed_first = True
        still_deferred = deferred("mcp")
        found, errors = [], []

        def ask(name):
            if name == "stdio_client":
                second_asks.set()
            try:
                found.append(getattr(package, name).__name__)
            except Exception as error:
                errors.append(repr(error))

        threads = [threading.Thread(target=ask, args=(name,)) for name in ("Client", "stdio_client")]
        threads[0].start(); running.wait(10); threads[1].start()
        for thread in threads:
            thread.join()
        print(json.dumps({"failed_first": failed_first, "still_deferred": still_deferred, "found": sorted(found),
                          "errors": errors, "runs": FailsOnce.calls, "deferred": deferred("mcp")}))
        """
    )
    assert seen == {
        "failed_first": True,
        "still_deferred": True,
        "found": ["Client", "stdio_client"],
        "errors": [],
        "runs": 2,
        "deferred": False,
    }


PROBE = """
import gc, json, os, sys
import server.main as entry

def report(code):
    loaded = sorted(name for name in sys.modules if name.split(".")[0] == "mcp")
    collector = {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}
    sys.stderr.write("MODULES " + json.dumps(loaded) + "\\n" + "GC " + json.dumps(collector) + "\\n")
    sys.stderr.flush()
    os._exit(code)

entry.exit_now = report
if sys.argv.pop() == "full":
    import mcp  # the SDK imported in full first: the deferral is a no-op
entry.console_main()
"""


def serve_over_stdio(env: dict[str, str], variant: str) -> tuple[list[dict], bytes, list[str], dict]:
    requests = [
        initialize(),
        INITIALIZED,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "gmail_search_messages", "arguments": {"query": "in:inbox", "max_results": 2}},
        },
    ]
    process = subprocess.Popen(
        [sys.executable, "-c", PROBE, variant],
        env=env,
        cwd="/",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("".join(json.dumps(request) + "\n" for request in requests).encode())
    process.stdin.flush()
    lines = [process.stdout.readline() for _ in range(3)]  # keep stdin open until the answers are in
    rest, stderr = process.communicate(timeout=30)
    assert process.returncode == 0 and rest == b"", stderr.decode()[-2000:]
    reports = dict(line.split(" ", 1) for line in stderr.decode().splitlines() if line.startswith(("MODULES ", "GC ")))
    return [json.loads(line) for line in lines], lines[1], json.loads(reports["MODULES"]), json.loads(reports["GC"])


def test_the_server_serves_over_stdio_with_the_inits_deferred_and_lists_the_same_bytes(demo_emulator, tmp_path):
    env = {
        **os.environ,
        "PYTHONPATH": str(PROJECT_ROOT),
        **emulator_env(demo_emulator, demo_emulator.write_token(tmp_path / "token.json")),
        "GMAIL_MCP_WARM_UP": "0",
    }
    answers, listing, modules, collector = serve_over_stdio(env, "lean")
    _, full_listing, full_modules, _ = serve_over_stdio(env, "full")
    assert [answer["id"] for answer in answers] == [1, 2, 3]
    assert {tool["name"] for tool in answers[1]["result"]["tools"]} == set(ALWAYS_ON_TOOLS)
    assert answers[2]["result"]["isError"] is False
    assert answers[2]["result"]["structuredContent"]["result_count"] == 2
    assert listing == full_listing  # tools/list byte for byte as with the SDK imported in full
    assert "mcp.server.lowlevel.server" in modules and "mcp.client" not in modules
    assert "mcp.server.mcpserver" not in modules
    assert "mcp.client" in full_modules  # the comparison is real: the full import does load the client side
    # off while the server was built (`console_main`), then the start-up objects frozen and collection back on
    assert collector["enabled"] is True and collector["frozen"] > 50_000


def test_collection_resumes_once_the_server_is_built() -> None:
    frozen = gc.get_freeze_count()
    gc.disable()
    try:
        collect_from_now_on()
        assert gc.isenabled() and gc.get_freeze_count() > frozen
    finally:
        gc.unfreeze()  # this test process keeps collecting everything, as before
        gc.enable()
    collect_from_now_on()  # with the collector on (tests calling `main()`): nothing happens
    assert gc.isenabled() and gc.get_freeze_count() == 0
