"""Start-up imports only what `tools/list` needs: what the toolsets import inside their handlers (attachment
extraction, part location, saving, repeated-text detection) is loaded by the warm-up after the listing, so neither
the start nor a first call waits for it. Checked in fresh interpreters, against the toolsets' own source."""

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
from server.protocol.sdk_packages import defer_sdk_package_inits
defer_sdk_package_inits()
import server.main
from server.protocol.dispatch import build_server
from server.protocol.stdio_pipes import stdio_channel
"""


def test_the_handlers_defer_some_imports() -> None:
    assert {"server.content.extract", "server.content.text.repeats"} <= imported_by_handlers()


def test_what_the_server_imports_to_start_leaves_out_what_only_handlers_need() -> None:
    deferred = sorted(imported_by_handlers())
    seen = run_fresh(START + f"print(json.dumps(sorted(set({deferred!r}) & set(sys.modules))))")
    assert seen == [], "imported at start-up after all (a module-level import elsewhere?)"


def test_the_warm_up_imports_everything_the_handlers_import_later() -> None:
    deferred = sorted(imported_by_handlers())
    seen = run_fresh(
        START
        + f"""
from server.protocol.warm_up import WarmUp

class Idle:
    def warm_up(self):
        pass

warm_up = WarmUp(Idle())
warm_up.start()
warm_up._thread.join(30)
print(json.dumps(sorted(set({deferred!r}) - set(sys.modules))))
"""
    )
    assert seen == [], "add these to WarmUp._run (server/protocol/warm_up.py)"


def test_the_warm_up_builds_every_model_of_the_offered_tools_that_start_up_left_for_first_use() -> None:
    """Tool models are built on first use (`defer_build`); what a first call would build (the listed tools' models
    and every model their fields hold) the warm-up builds instead, before any worker thread needs it."""
    seen = run_fresh(
        START
        + """
from server.protocol.calls import ToolCatalog
from server.protocol.dispatch import _models_of
from server.protocol.warm_up import WarmUp
from server.toolsets.common import build_models

class Idle:
    names = ["default"]
    default_name = "default"
    def warm_up(self):
        pass
    def granted_scopes(self, name):
        return None

catalog = ToolCatalog(Idle())
models = _models_of(catalog.offered().values())
before = sum(not model.__pydantic_complete__ for model in models)
warm_up = WarmUp(Idle(), prepare=lambda: build_models(models))
warm_up.start()
warm_up._thread.join(30)
from server.toolsets.messages.search import SearchResultItem
from server.toolsets.envelope import Security
print(json.dumps({"before": before, "after": sum(not model.__pydantic_complete__ for model in models),
                  "nested": [SearchResultItem.__pydantic_complete__, Security.__pydantic_complete__]}))
"""
    )
    assert seen["before"] > 0 and seen["after"] == 0 and seen["nested"] == [True, True]
