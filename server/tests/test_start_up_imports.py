"""Start-up imports only what `tools/list` needs: what the toolsets import inside their handlers (attachment
extraction, part location, saving, repeated-text detection) is loaded by the first call that needs it. Checked in
fresh interpreters, against the toolsets' own source."""

from __future__ import annotations

import ast

import pytest

from server.runtime.config import PROJECT_ROOT
from server.tests.support.raw_jsonrpc import run_fresh

pytestmark = pytest.mark.slow  # fresh interpreters: the slow tier (`pytest -m slow`)


def imported_by_handlers() -> set[str]:
    """Every module an import statement inside a function of server/toolsets names."""
    names: set[str] = set()
    for path in sorted((PROJECT_ROOT / "server" / "toolsets").rglob("*.py")):
        for function in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(function):
                    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                        names.add(node.module)
                    elif isinstance(node, ast.Import):
                        names.update(alias.name for alias in node.names)
    return names


START = """
import json, sys
import server.main
from server.protocol.dispatch import build_server
from server.protocol.stdio_guard import stdio_channel
"""


def test_the_handlers_defer_some_imports() -> None:
    assert {"server.content.extract", "server.content.text.repeats"} <= imported_by_handlers()


def test_what_the_server_imports_to_start_leaves_out_what_only_handlers_need() -> None:
    deferred = sorted(imported_by_handlers())
    seen = run_fresh(START + f"print(json.dumps(sorted(set({deferred!r}) & set(sys.modules))))")
    assert seen == [], "imported at start-up after all (a module-level import elsewhere?)"
