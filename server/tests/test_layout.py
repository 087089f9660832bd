"""The folders keep their promises: which layer may import which, module sizes, and a docstring per package.

Imports are read with `ast` from every import statement in a file, inside functions too, relative ones resolved,
so a lazy `from server.gmail import ...` in a content module fails here as surely as a top-level one.

The running server is a total order of layers (`LAYERS`, lowest first): a module imports only from its own layer
or a lower one, and no set of modules imports itself in a circle. The emulator and the demo mailbox are
development tools: they may import the product, the product never imports them (demo mode starts the emulator
through one function).
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
# Lowest first. A module belongs to the layer of the longest name that contains it; `server` alone is the package
# face (its version), a leaf.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("server.content",),  # pure: Gmail payloads and attachment bytes -> bounded text, trust findings
    ("server", "server.hints", "server.errors", "server.scopes"),  # leaf modules: constants, small value types
    ("server.runtime",),  # process concerns that know no tools: settings, logging, metrics, token crypto, audit
    ("server.gmail",),  # the client's helpers: error table, retry, quota, batch, caches, history
    ("server.auth", "server.gmail_client", "server.tools"),  # credentials; the only Gmail I/O; what a tool is
    ("server.toolsets",),  # the tools, grouped
    ("server.app",),  # composition: account registry, toolset choice, doctor, demo mode
    ("server.remote",),  # the HTTP side that knows people: sign-in, state store, Google grants
    ("server.protocol",),  # MCP adapters
    # entry points, and the pieces only they use (the consent page of auth_cli, the demo tour of cli)
    ("server.main", "server.cli", "server.auth_cli", "server.consent_flow", "server.cli_tour"),
)
NOT_RUNTIME = ("tests", "emulator", "demo")  # folders of server/ that are not the running server
MAX_LINES = 400
SIZE_EXEMPT = {"server/demo/generator/content.py"}  # a data table of demo mail text, not logic


def where(path: Path) -> str:
    return path.relative_to(PROJECT_ROOT).as_posix()


def package_of(path: Path) -> str:
    return ".".join(path.relative_to(PROJECT_ROOT).parent.parts)


def resolve(node: ast.ImportFrom, package: str) -> str:
    """The absolute module a `from ... import` statement in `package` names."""
    if not node.level:
        return node.module or ""
    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
    return ".".join([*anchor, *([node.module] if node.module else [])])


def imported_names(source: str, package: str) -> set[str]:
    """Every module an import in `source` names (for `from a import b`: both `a` and `a.b`), relative ones resolved
    against `package`, plus `importlib.import_module("...")` / `__import__("...")` with a literal name."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = resolve(node, package)
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


def layer_of(module: str) -> int | None:
    """The index in LAYERS of the longest layer name that is `module` or contains it; None for no layer."""
    best: tuple[int, int] | None = None
    for index, names in enumerate(LAYERS):
        for name in names:
            matches = module == name if name == "server" else within(module, (name,))
            if matches and (best is None or len(name) > best[0]):
                best = (len(name), index)
    if best is None and module.startswith("server.__"):  # `from server import __version__`
        return LAYERS.index(next(names for names in LAYERS if "server" in names))
    return None if best is None else best[1]


def module_name(path: Path) -> str:
    parts = path.relative_to(PROJECT_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def upward_imports(paths: list[Path]) -> list[str]:
    found = []
    for path in paths:
        own = layer_of(module_name(path))
        for name in sorted(imported_names(path.read_text("utf-8"), package_of(path))):
            theirs = layer_of(name) if name.startswith("server.") or name == "server" else None
            if own is not None and theirs is not None and theirs > own:
                found.append(f"{where(path)} (layer {own}) imports {name} (layer {theirs})")
    return found


def import_graph(paths: list[Path]) -> dict[str, set[str]]:
    """Module -> the modules among `paths` it imports. `from a import b` names module `a.b` when that is one,
    else `a`; a name `a.b.C` counts as the module `a.b` that holds it."""
    modules = {module_name(path): path for path in paths}

    def holder(name: str) -> str:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = package_of(path)
        targets = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(holder(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = resolve(node, package)
                targets.update(holder(f"{base}.{alias.name}") for alias in node.names)
        graph[name] = targets - {"", name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted: every import circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_layer_checks_can_fail() -> None:
    assert layer_of("server.gmail.cache") == 3 and layer_of("server.gmail_client") == 4
    assert layer_of("server") == 1 and layer_of("server.__version__") == 1 and layer_of("server.app") == 6
    assert layer_of("server.emulator") is None and layer_of("server.mainframe") is None
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_every_module_of_the_running_server_has_a_layer() -> None:
    assert [where(path) for path in runtime_files() if layer_of(module_name(path)) is None] == []


def test_no_module_imports_a_layer_above_its_own() -> None:
    assert_none(upward_imports(runtime_files()))


def test_no_import_cycles_in_the_server_the_emulator_or_the_demo_mailbox() -> None:
    everything = [path for path in python_files(SERVER) if path.relative_to(SERVER).parts[0] != "tests"]
    assert cycles(import_graph(everything)) == []


def test_content_is_pure() -> None:
    assert_none(offenders(python_files(SERVER / "content"), CONTENT_MUST_NOT_IMPORT))


def test_gmail_helpers_and_content_know_nothing_of_mcp() -> None:
    assert_none(offenders(python_files(SERVER / "gmail") + python_files(SERVER / "content"), MCP))


def test_protocol_knows_nothing_of_google() -> None:
    assert_none(offenders(python_files(SERVER / "protocol"), GOOGLE))


def test_protocol_serves_what_the_toolsets_declare_without_knowing_gmail() -> None:
    """Resources, prompts and instructions come from the toolsets (`ResourceSpec`, `PromptSpec`, `instructions`):
    no protocol module imports the Gmail layer, its client, credentials or scopes, nor names a gmail:// URI, and
    the resource and prompt adapters import no toolset."""
    protocol = python_files(SERVER / "protocol")
    gmail = ("server.gmail", "server.gmail_client", "server.auth", "server.scopes")
    assert_none(offenders(protocol, gmail))
    adapters = [SERVER / "protocol" / "resources.py", SERVER / "protocol" / "prompts.py"]
    assert_none(offenders(adapters, ("server.toolsets", "server.app")))
    assert [where(path) for path in protocol if "gmail://" in path.read_text("utf-8")] == []


def test_the_running_server_never_imports_the_tests() -> None:
    assert_none(offenders(runtime_files(), ("server.tests",)))


def test_only_demo_mode_reaches_for_the_emulator_or_the_demo_mailbox() -> None:
    others = [path for path in runtime_files() if path != SERVER / "app" / "demo_mode.py"]
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
