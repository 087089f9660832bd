"""Start-up: the MCP SDK's top-level package `__init__`s run only if something asks for what they re-export.

`import mcp.server.lowlevel` runs `mcp/__init__.py` first, which imports the whole client side (`Client`,
`ClientSession`, `stdio_client`, ...), and `mcp/server/__init__.py`, which imports the high-level `MCPServer`.
The server uses neither: only `mcp.server.lowlevel`, `mcp.server.request_state`, `mcp.shared.*` and `mcp_types`,
all submodules. The two `__init__`s do nothing but import and re-export (`test_start_up.py` checks the
installed ones), and running them costs ~0.09 s of a ~0.75 s start-up.

`defer_sdk_package_inits()`, called by the server's entry point before anything imports `mcp`, registers the
two packages as bare package modules (their real spec and path, so every submodule imports normally, from the
installed SDK), with their `__init__` code not yet run. Should anything in the process later ask either
package for a name it does not have (`from mcp import Client`, `mcp.server.MCPServer`), the package's own
`__init__` runs right then, in the same module object, and the name is found as usual: deferred, not skipped.
Where `mcp` is already imported (tests import the SDK in-process) this does nothing.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

PACKAGES = ("mcp", "mcp.server")  # parents first: `mcp.server` is found through `mcp.__path__`
_completing = threading.RLock()  # an `__init__` run may need the other package's


def defer_sdk_package_inits() -> bool:
    """Registers `mcp` and `mcp.server` with their `__init__` deferred; False (and nothing done) where either
    is already imported or is not an ordinary package of the installed SDK."""
    if any(name in sys.modules for name in PACKAGES):
        return False
    for index, name in enumerate(PACKAGES):
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            for registered in PACKAGES[:index]:  # leave things as they were: the ordinary import happens instead
                del sys.modules[registered]
            return False
        module = importlib.util.module_from_spec(spec)
        module.__dict__["__getattr__"] = _run_init_on_first_miss(module)
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)
    return True


def _run_init_on_first_miss(module: ModuleType) -> Any:
    """The package's `__getattr__` until its `__init__` ran: runs it once, then looks the name up as usual.

    Other threads asking meanwhile wait for the run (the lock) instead of finding the package half-filled; the
    run's own imports (`from . import types`) see the plain module (`running`); a run that fails is retried by
    the next miss, and the hook leaves the package only once a run succeeded."""
    running = False

    def __getattr__(name: str) -> Any:
        nonlocal running
        with _completing:
            if not running and module.__dict__.get("__getattr__") is __getattr__:
                running = True
                try:
                    module.__spec__.loader.exec_module(module)  # type: ignore[union-attr]
                finally:
                    running = False
                if module.__dict__.get("__getattr__") is __getattr__:  # unless the `__init__` defined its own
                    del module.__dict__["__getattr__"]
        try:
            return module.__dict__[name]
        except KeyError:
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}") from None

    return __getattr__


def deferred(name: str) -> bool:
    """Whether the package `name` is registered and its `__init__` has not run yet."""
    module = sys.modules.get(name)
    return module is not None and "__getattr__" in module.__dict__
