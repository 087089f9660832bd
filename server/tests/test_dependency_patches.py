"""No surgery on other people's code: the running server does not change its dependencies behind their backs.

Read with `ast` from every runtime module of server/ (not tests, emulator or demo), this fails on:

- an assignment, augmented assignment, `del` or `setattr` on an attribute of something imported from outside
  `server` (a module, a class: `http.client.parse_headers = ...`, `SomeLibraryClass.flag = True`);
- a private attribute (`_name`) set from outside on an object, unless the server's own classes define that
  attribute (another library's object: `authorized._request = ...`);
- a write to `sys.modules` (`sys.modules[name] = ...`, `del`, `.update`, `.setdefault`, `.pop`);
- an import of a dependency's private module or name (`googleapiclient._auth`, `from mcp.server import _x`);
- a subclass of a dependency's class that overrides one of its private methods (`def _execute`).

Each exception is listed in ALLOWED with the reason it is kept; an entry that no longer matches anything fails
too, so the list stays the list of what is really done.
"""

from __future__ import annotations

import ast
from pathlib import Path

from server.runtime.config import PROJECT_ROOT

SERVER = PROJECT_ROOT / "server"
NOT_RUNTIME = ("tests", "emulator", "demo")
SYS_MODULES_WRITES = ("update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__")

ALLOWED = {
    "server/gmail/single_attempt.py: overrides private httplib2.Http._conn_request": (
        "Sends and writes never go out twice: httplib2 re-sends a request (POST included) on a stale connection. "
        "check_compatible() refuses to send if httplib2 stops routing requests through this method."
    ),
    "server/gmail/batch.py: overrides private BatchHttpRequest._refresh_and_apply_credentials": (
        "A 401 part refreshes through the session's one-shot token request (one attempt, the client's timeout) "
        "instead of a timeout-less httplib2.Http() and google-auth's sleeping retries."
    ),
    "server/gmail/batch.py: overrides private BatchHttpRequest._execute": (
        "Calls the library's own _execute, then answers a part missing from Gmail's reply as a 503 for that "
        "part (a transient error) instead of the KeyError that fails the whole batch."
    ),
    "server/gmail/sessions.py: sets private attribute self.http._request": (
        "AuthorizedHttp refreshes after a 401 through this google-auth transport; it has no parameter for it. "
        "The one-shot request (auth.single_attempt_request) stops google-auth's hidden 3-try retry loop."
    ),
    "server/gmail/write_endpoints.py: sets private attribute authorized._request": (
        "The same one-shot token request for the AuthorizedHttp of a never-repeated send/draft."
    ),
    "server/protocol/http.py: assigns AppStatus.should_exit": (
        "sse-starlette's own shutdown flag, raised once the lifespan ends: the guard drains event streams "
        "itself so calls in flight finish (see http._drain_streams_ourselves)."
    ),
}


def dependency_module(node: ast.AST) -> str | None:
    """The module a `from X import ...` names, when X is a dependency (not `server`, not `__future__`)."""
    if isinstance(node, ast.ImportFrom) and not node.level and node.module:
        return node.module if node.module.split(".")[0] not in ("server", "__future__") else None
    return None


def third_party_names(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dependency module (or module.name) an import bound it to; `server` imports excluded."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "server":
                    local = alias.asname or alias.name.split(".")[0]
                    names[local] = alias.name if alias.asname else local
        elif module := dependency_module(node):
            for alias in node.names:
                names[alias.asname or alias.name] = f"{module}.{alias.name}"
    return names


def root_name(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def written_targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Delete):
        targets = list(node.targets)
    else:
        return []
    flat: list[ast.expr] = []
    while targets:
        target = targets.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            targets.extend(target.elts)
        else:
            flat.append(target)
    return flat


def own_private_attributes(trees: list[ast.Module]) -> set[str]:
    """The private attributes the server's own classes define (`self._x = ...`, `_x: int` in a class body)."""
    names: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            for target in written_targets(node):
                if isinstance(target, ast.Attribute) and ast.unparse(target.value) in ("self", "cls"):
                    names.add(target.attr)
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    names.update(ast.unparse(target) for target in written_targets(item))
    return {name for name in names if is_private(name)}


def findings(source: str, where: str, own: frozenset[str] | set[str] = frozenset()) -> set[str]:
    """What `source` does to its dependencies, one line each (`where` names the file in the line; `own`: the
    private attributes of the server's own classes, which it may set from outside)."""
    tree = ast.parse(source)
    own = own | own_private_attributes([tree])
    imported = third_party_names(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        for target in written_targets(node):
            text = ast.unparse(target)
            if isinstance(target, ast.Subscript) and ast.unparse(target.value) == "sys.modules":
                found.add(f"{where}: writes sys.modules")
            elif isinstance(target, ast.Attribute) and root_name(target) in imported:
                found.add(f"{where}: assigns {text}")
            elif isinstance(target, ast.Attribute) and is_private(target.attr) and target.attr not in own:
                found.add(f"{where}: sets private attribute {text}")
        if isinstance(node, ast.Call):
            function = ast.unparse(node.func)
            if function == "setattr" and node.args and root_name(node.args[0]) in imported:
                found.add(f"{where}: assigns {ast.unparse(node.args[0])}.* (setattr)")
            if function in (f"sys.modules.{method}" for method in SYS_MODULES_WRITES):
                found.add(f"{where}: writes sys.modules")
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "server" and any(map(is_private, alias.name.split("."))):
                    found.add(f"{where}: imports private {alias.name}")
        if module := dependency_module(node):
            private = [module] if any(map(is_private, module.split("."))) else []
            private += [f"{module}.{alias.name}" for alias in node.names if is_private(alias.name)]
            found.update(f"{where}: imports private {name}" for name in private)
        if isinstance(node, ast.ClassDef):
            bases = [ast.unparse(base) for base in node.bases if root_name(base) in imported]
            for item in node.body:
                if bases and isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_private(item.name):
                    found.add(f"{where}: overrides private {bases[0]}.{item.name}")
    return found


def runtime_files() -> list[Path]:
    return [
        path for path in sorted(SERVER.rglob("*.py")) if not set(path.relative_to(SERVER).parts[:-1]) & set(NOT_RUNTIME)
    ]


def test_runtime_code_changes_no_dependency_outside_the_allow_list() -> None:
    sources = {path.relative_to(PROJECT_ROOT).as_posix(): path.read_text("utf-8") for path in runtime_files()}
    own = own_private_attributes([ast.parse(source) for source in sources.values()])
    seen: set[str] = set()
    for where, source in sources.items():
        seen |= findings(source, where, own)
    assert sorted(seen - ALLOWED.keys()) == [], "patching a dependency: do without it, or allow it with a reason"
    assert sorted(ALLOWED.keys() - seen) == [], "allowed but no longer done: remove it from ALLOWED"
    assert all(len(reason) > 40 for reason in ALLOWED.values())


def test_the_scan_covers_the_runtime_packages() -> None:
    scanned = {path.relative_to(SERVER).parts[0] for path in runtime_files()}
    assert {"gmail", "protocol", "runtime", "content", "toolsets", "main.py"} <= scanned
    assert not scanned & set(NOT_RUNTIME)


SNIPPET = """
import http.client
import sys
import httplib2 as h2
from googleapiclient import _auth
from googleapiclient._helpers import positional
from googleapiclient.http import BatchHttpRequest
from server.gmail import sessions

http.client.parse_headers = lambda fp: fp
h2.iri2uri = None
BatchHttpRequest.MAX_BATCH_LIMIT += 1
setattr(h2, "RETRIES", 1)
sys.modules["mcp"] = object()
sessions.IDLE_SESSIONS = 3  # our own module: fine

class Batch(BatchHttpRequest):
    def _serialize_request(self, request):
        self._cache = {}  # its own state: fine
        request.http._request = None
        return ""

    def public(self):
        return None
"""


def test_the_scan_finds_each_kind_of_patch() -> None:
    assert findings(SNIPPET, "x.py") == {
        "x.py: imports private googleapiclient._auth",
        "x.py: imports private googleapiclient._helpers",
        "x.py: assigns http.client.parse_headers",
        "x.py: assigns h2.iri2uri",
        "x.py: assigns BatchHttpRequest.MAX_BATCH_LIMIT",
        "x.py: assigns h2.* (setattr)",
        "x.py: writes sys.modules",
        "x.py: overrides private BatchHttpRequest._serialize_request",
        "x.py: sets private attribute request.http._request",
    }
