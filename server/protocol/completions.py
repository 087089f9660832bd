"""`completion/complete`: suggestions for prompt arguments and resource template parts, as the toolsets declare
them (`CompletionSpec`: fixed choices, or values read from a tool's result), plus `account`, the accounts the
caller's credential reaches.

An argument is completed by its name, whichever prompt carries it; a template's `{id}` part as the argument its
resource hands the tool (`thread_id` for the thread template). An argument nothing is declared for gets no
suggestions. Candidates match the typed value by prefix, case-insensitively (a nested label "Parent/Child" also by
the start of a later part), at most 100 per answer as the specification caps them, with `total` and `hasMore`
saying how many matched. A tool's values are read with `calls.invoke` (the tools' validation, worker thread, logs
and metrics) for the account the context's `account` names, else the caller's default, and kept a minute per
person and account (`remote.person`: one person's lists never answer another): typing costs no Gmail request per
keystroke. A read that fails answers no values. Only a prompt or
template this server does not offer, or an argument it does not have, is invalid params.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from server.errors import GmailError
from server.protocol.calls import ToolCatalog, invoke, resolve_account
from server.protocol.prompts import PromptBook
from server.protocol.resources import TEMPLATE_PART, ResourceReader
from server.protocol.schemas import ACCOUNT_ARGUMENT
from server.remote.person import person_of
from server.runtime.observability import get_logger
from server.tools import CompletionSpec

log = get_logger("completions")

MAX_VALUES = 100  # the specification: "Maximum 100 items per response"
KEEP_S = 60.0  # how long a mailbox list serves completions before it is read again
TEMPLATE_ARGUMENT = TEMPLATE_PART.strip("{}")


def matching(candidates: list[str], typed: str) -> list[str]:
    """The candidates that start with `typed` (case-insensitive), then those with a later "/" part that does,
    each once, in the candidates' order."""
    key = typed.strip().casefold()
    first = dict.fromkeys(value for value in candidates if value.casefold().startswith(key))
    later = (value for value in candidates if any(part.casefold().startswith(key) for part in value.split("/")[1:]))
    return [*first, *(value for value in dict.fromkeys(later) if value not in first)]


def completion(values: list[str]) -> types.Completion:
    """At most MAX_VALUES of `values`, saying how many there are in all."""
    return types.Completion(values=values[:MAX_VALUES], total=len(values), has_more=len(values) > MAX_VALUES)


class Completer:
    """The completion handler of one server, over its catalog and the prompts and resources it offers."""

    def __init__(
        self,
        resources: ResourceReader,
        prompts: PromptBook,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.resources = resources
        self.prompts = prompts
        self.catalog: ToolCatalog = resources.catalog
        self._clock = clock
        self._kept: dict[tuple[str, str, str], tuple[float, list[str]]] = {}
        declared = (spec for toolset in self.catalog.toolsets for spec in toolset.completions)
        self.specs: dict[str, CompletionSpec] = {name: spec for spec in declared for name in spec.names}

    def argument_kind(self, ref: types.PromptReference | types.ResourceTemplateReference, name: str) -> str:
        """What the argument `name` of `ref` holds (the key of its candidates); MCPError(invalid params) for a
        prompt or template this server does not offer, or an argument it does not have."""
        offered = self.catalog.offered()
        if isinstance(ref, types.PromptReference):
            spec = next((item for item in self.prompts.specs if item.name == ref.name and item.tool in offered), None)
            if spec is None:
                raise MCPError(code=INVALID_PARAMS, message=f"Unknown prompt {ref.name[:80]!r}.")
            if name not in {argument.name for argument in spec.arguments}:
                names = ", ".join(argument.name for argument in spec.arguments) or "none"
                raise MCPError(
                    code=INVALID_PARAMS, message=f"Prompt {spec.name} has no argument {name[:80]!r} (it has: {names})."
                )
            return name
        template = next(
            (item for item in self.resources.specs if item.uri == ref.uri and item.argument and item.tool in offered),
            None,
        )
        if template is None or template.argument is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown resource template {ref.uri[:200]!r}.")
        if name != TEMPLATE_ARGUMENT:
            raise MCPError(
                code=INVALID_PARAMS, message=f"{template.uri} has no part {name[:80]!r} (it has: {TEMPLATE_ARGUMENT})."
            )
        return template.argument

    async def on_completion(self, request: Any, params: types.CompleteRequestParams) -> types.CompleteResult:
        kind = self.argument_kind(params.ref, params.argument.name)
        context = (params.context.arguments if params.context is not None else None) or {}
        try:
            person = person_of(request)
            reachable = self.resources.reachable(request)
            candidates = await self.candidates(
                kind, reachable, context.get("account"), person.subject if person else ""
            )
        except Exception:  # a completion never fails the request: no suggestions instead
            log.exception("completion failed", extra={"argument": kind})
            candidates = []
        return types.CompleteResult(completion=completion(matching(candidates, params.argument.value)))

    async def candidates(
        self, kind: str, reachable: list[str], account: str | None = None, person: str = ""
    ) -> list[str]:
        """Every suggestion for an argument of `kind`, best first, for a caller reaching `reachable` (the remote
        `person`'s subject, or "" for the one person of a local server)."""
        if kind == ACCOUNT_ARGUMENT:
            return list(reachable)
        spec = self.specs.get(kind)
        if spec is None or spec.tool is None or spec.values is None:
            return list(spec.choices) if spec is not None else []
        try:
            name = resolve_account(self.catalog, account, reachable)
        except GmailError:  # the context names an account the caller does not reach
            return []
        key = (person, name, spec.names[0])
        kept = self._kept.get(key)
        if kept is not None and self._clock() - kept[0] < KEEP_S:
            return kept[1]
        tool = self.catalog.offered(reachable).get(spec.tool)
        if tool is None:  # not offered to this caller: nothing to read with
            return []
        arguments = {**spec.arguments, ACCOUNT_ARGUMENT: name}
        outcome = await invoke(self.catalog, tool, arguments, via="completion", reachable=reachable)
        if outcome.error is not None or outcome.result is None:
            return []  # invoke logged why; the next keystroke tries again
        values = spec.values(outcome.result)
        self._kept[key] = (self._clock(), values)
        return values
