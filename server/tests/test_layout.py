"""The folders keep their promises: which layer may import which, module sizes, and a docstring per package.

Imports are read with `ast` from every import statement in a file, inside functions too, relative ones resolved,
so a lazy `from server.gmail import ...` in a content module fails here as surely as a top-level one.
"""

from __future__ import annotations

import ast
from pathlib import Path

from server.runtime.config import PROJECT_ROOT

SERVER = PROJECT_ROOT / "server"
GOOGLE = ("googleapiclient", "google", "google_auth_httplib2", "google_auth_oauthlib")
MCP = ("mcp", "mcp_types")  # the SDK 2.x ships its protocol types as the separate package mcp_types
CONTENT_MUST_NOT_IMPORT = (
    "server.gmail",
    "server.gmail_client",
    "server.auth",
    "server.protocol",
    "server.runtime",
    "server.tools",
    "server.toolsets",
    "httplib2",
    *GOOGLE,
    *MCP,
)
NOT_RUNTIME = ("tests", "emulator", "demo")  # folders of server/ that are not the running server
MAX_LINES = 400
SIZE_EXEMPT = {"server/demo/generator/content.py"}  # a data table of demo mail text, not logic


def where(path: Path) -> str:
    return path.relative_to(PROJECT_ROOT).as_posix()


def package_of(path: Path) -> str:
    return ".".join(path.relative_to(PROJECT_ROOT).parent.parts)


def imported_names(source: str, package: str) -> set[str]:
    """Every module an import in `source` names (for `from a import b`: both `a` and `a.b`), relative ones resolved
    against `package`, plus `importlib.import_module("...")` / `__import__("...")` with a literal name."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.add(node.args[0].value)
    return names


def within(name: str, modules: tuple[str, ...]) -> bool:
    """Whether `name` is one of `modules` or inside one of them."""
    return any(name == module or name.startswith(module + ".") for module in modules)


def python_files(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*.py") if "__pycache__" not in path.parts)


def runtime_files() -> list[Path]:
    """Everything under server/ except the tests, the emulator and the demo mailbox package."""
    return [path for path in python_files(SERVER) if path.relative_to(SERVER).parts[0] not in NOT_RUNTIME]


def offenders(paths: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    found = []
    for path in paths:
        imported = imported_names(path.read_text("utf-8"), package_of(path))
        found += [f"{where(path)} imports {name}" for name in sorted(imported) if within(name, forbidden)]
    return found


def assert_none(found: list[str]) -> None:
    assert not found, "\n".join(found)


def test_the_import_scan_sees_lazy_relative_and_dynamic_imports() -> None:
    source = (
        "import json\n"
        "def later():\n"
        "    from ...gmail import errors\n"
        "    from . import tidy\n"
        "    import importlib\n"
        "    return importlib.import_module('mcp.client')\n"
    )
    found = imported_names(source, "server.content.text")
    assert {"json", "server.gmail", "server.gmail.errors", "server.content.text.tidy", "mcp.client"} <= found
    assert within("server.gmail.errors", ("server.gmail",)) and not within("server.gmail_client", ("server.gmail",))
    assert not within("google_auth_httplib2", ("google",))  # a prefix of a name is not the package


def test_content_is_pure() -> None:
    assert_none(offenders(python_files(SERVER / "content"), CONTENT_MUST_NOT_IMPORT))


def test_gmail_helpers_and_content_know_nothing_of_mcp() -> None:
    assert_none(offenders(python_files(SERVER / "gmail") + python_files(SERVER / "content"), MCP))


def test_protocol_knows_nothing_of_google() -> None:
    assert_none(offenders(python_files(SERVER / "protocol"), GOOGLE))


def test_the_running_server_never_imports_the_tests() -> None:
    assert_none(offenders(runtime_files(), ("server.tests",)))


def test_only_demo_mode_reaches_for_the_emulator_or_the_demo_mailbox() -> None:
    others = [path for path in runtime_files() if path != SERVER / "runtime" / "demo_mode.py"]
    assert_none(offenders(others, ("server.emulator", "server.demo")))


def test_modules_stay_under_400_lines() -> None:
    checked = [path for path in python_files(SERVER) if path.relative_to(SERVER).parts[0] not in ("tests", "emulator")]
    sizes = {where(path): len(path.read_text("utf-8").splitlines()) for path in checked}
    assert {name: lines for name, lines in sizes.items() if lines > MAX_LINES and name not in SIZE_EXEMPT} == {}


def test_every_package_has_an_init_with_a_docstring() -> None:
    folders = sorted({path.parent for path in python_files(SERVER)})
    missing = [where(folder) for folder in folders if not (folder / "__init__.py").exists()]
    assert missing == []
    undocumented = []
    for folder in folders:
        docstring = ast.get_docstring(ast.parse((folder / "__init__.py").read_text("utf-8"))) or ""
        if not docstring.splitlines() or not docstring.splitlines()[0].strip():
            undocumented.append(where(folder))
    assert undocumented == []


def test_property_tests_take_their_example_counts_from_the_profiles() -> None:
    """Profiles are registered in conftest.py only; no test fixes `max_examples` to a number of its own."""
    found = []
    for path in python_files(SERVER / "tests"):
        if path.name == "conftest.py":
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            called = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if called in ("register_profile", "load_profile"):
                found.append(f"{path.name}:{node.lineno} {called}")
            for keyword in node.keywords:
                if keyword.arg == "max_examples" and isinstance(keyword.value, ast.Constant):
                    found.append(f"{path.name}:{node.lineno} max_examples={keyword.value.value}")
    assert found == []
