"""`completion/complete` through a real MCP client session in both protocol eras, against the emulator serving the
demo mailbox: thread and message ids of the newest mail (prompt arguments and resource templates), label names,
account names, fixed choices; prefix matching without regard to case, at most 100 values with `hasMore`, a read
that fails answering no values, and a minute of reuse counted in Gmail requests with an injected clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import mcp_types as types
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from server import demo
from server.emulator import Emulator, start_emulator
from server.protocol.calls import ToolCatalog
from server.protocol.completions import KEEP_S, MAX_VALUES, Completer, matching
from server.protocol.dispatch import build_server
from server.protocol.prompts import PromptBook
from server.protocol.resources import ResourceReader
from server.tests.support.reading import api_calls, emulator_context
from server.tools import CompletionSpec, PromptArgument, PromptSpec, Toolset, ToolSpec
from server.toolsets import ALL_TOOLSETS

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Emulator, Path]]:
    with start_emulator(demo.DEMO_MAILBOX, rebase_dates=True) as emulator:
        yield emulator, emulator.write_token(tmp_path_factory.mktemp("completions") / "token.json")


def prompt_with(*names: str) -> PromptSpec:
    """A prompt taking arguments of these names (the completions follow the names, whichever prompt has them)."""
    return PromptSpec(
        name="with-arguments",
        title="With arguments",
        description="A test prompt.",
        tool="gmail_search_messages",
        arguments=tuple(PromptArgument(name=name, description=name) for name in names),
        text=lambda _arguments: "text",
    )


def with_test_prompt(*names: str, completions: tuple[CompletionSpec, ...] = ()) -> tuple[Toolset, ...]:
    extra = Toolset(
        name="test_prompts", description="", tools=(), prompts=(prompt_with(*names),), completions=completions
    )
    return (*ALL_TOOLSETS, extra)


def prompt(name: str) -> types.PromptReference:
    return types.PromptReference(type="ref/prompt", name=name)


def template(uri: str) -> types.ResourceTemplateReference:
    return types.ResourceTemplateReference(type="ref/resource", uri=uri)


def test_matching_is_by_prefix_without_case_and_by_later_parts_of_nested_labels():
    names = ["INBOX", "Family", "Family/Kids", "Kids club", "Work/Inbox zero"]
    assert matching(names, "fam") == ["Family", "Family/Kids"]
    assert matching(names, "KIDS") == ["Kids club", "Family/Kids"]  # prefixes first, then later parts
    assert matching(names, "inbox") == ["INBOX", "Work/Inbox zero"]
    assert matching(names, "") == names
    assert matching(names, "zzz") == []


@pytest.mark.parametrize("mode", MODES)
async def test_thread_and_message_ids_complete_from_the_newest_mail(running, mode):
    emulator, _ = running
    newest = emulator.store.find(demo.NOTABLE["offsite-1"].subject)[-1]
    thread_prefix = newest.thread_id[:6].upper()  # ids are hex: typed in capitals, still matched
    async with Client(build_server(emulator_context(*running)), mode=mode) as client:
        threads = await client.complete(prompt("summarize-thread"), {"name": "thread_id", "value": thread_prefix})
        by_template = await client.complete(
            template("gmail://threads/{id}"), {"name": "id", "value": newest.thread_id[:6]}
        )
        messages = await client.complete(template("gmail://messages/{id}"), {"name": "id", "value": newest.id[:6]})
        days = await client.complete(prompt("triage-inbox"), {"name": "days", "value": "3"})
    assert newest.thread_id in threads.completion.values
    assert all(value.lower().startswith(thread_prefix.lower()) for value in threads.completion.values)
    assert threads.completion.values == by_template.completion.values
    assert newest.id in messages.completion.values
    assert days.completion.values == ["3", "30", "365"] and days.completion.has_more is False


@pytest.mark.parametrize("mode", MODES)
async def test_label_names_and_accounts_complete_for_arguments_of_those_names(running, mode):
    server = build_server(emulator_context(*running), toolsets=with_test_prompt("label", "account"))
    async with Client(server, mode=mode) as client:
        family = await client.complete(prompt("with-arguments"), {"name": "label", "value": "fAm"})
        kids = await client.complete(prompt("with-arguments"), {"name": "label", "value": "kids"})
        accounts = await client.complete(prompt("with-arguments"), {"name": "account", "value": ""})
    assert family.completion.values == ["Family", "Family/Kids"]
    assert family.completion.total == 2 and family.completion.has_more is False
    assert kids.completion.values == ["Family/Kids"]
    assert accounts.completion.values == ["default"]


@pytest.mark.parametrize("mode", MODES)
async def test_at_most_100_values_with_the_total_and_has_more(running, mode):
    many = CompletionSpec(names=("code",), choices=tuple(f"code-{n:03}" for n in range(250)))
    server = build_server(emulator_context(*running), toolsets=with_test_prompt("code", completions=(many,)))
    async with Client(server, mode=mode) as client:
        everything = await client.complete(prompt("with-arguments"), {"name": "code", "value": "CODE-"})
        some = await client.complete(prompt("with-arguments"), {"name": "code", "value": "code-24"})
    assert len(everything.completion.values) == MAX_VALUES == 100
    assert everything.completion.values[0] == "code-000" and everything.completion.total == 250
    assert everything.completion.has_more is True
    assert some.completion.values == [f"code-24{n}" for n in range(10)] and some.completion.has_more is False


@pytest.mark.parametrize("mode", MODES)
async def test_unknown_prompts_templates_and_arguments_are_invalid_params(running, mode):
    async with Client(build_server(emulator_context(*running)), mode=mode) as client:
        with pytest.raises(MCPError) as no_prompt:
            await client.complete(prompt("no-such-prompt"), {"name": "days", "value": ""})
        with pytest.raises(MCPError) as no_argument:
            await client.complete(prompt("summarize-thread"), {"name": "label", "value": ""})
        with pytest.raises(MCPError) as no_template:
            await client.complete(template("gmail://drafts/{id}"), {"name": "id", "value": ""})
        with pytest.raises(MCPError) as no_part:
            await client.complete(template("gmail://threads/{id}"), {"name": "thread", "value": ""})
        nothing_declared = await client.complete(prompt("summarize-thread"), {"name": "thread_id", "value": "zz"})
    assert {error.value.error.code for error in (no_prompt, no_argument, no_template, no_part)} == {-32602}
    assert "Unknown prompt 'no-such-prompt'" in no_prompt.value.error.message
    assert "it has: thread_id" in no_argument.value.error.message
    assert nothing_declared.completion.values == [] and nothing_declared.completion.total == 0


@pytest.mark.parametrize("mode", MODES)
async def test_a_read_that_fails_or_an_unreachable_account_answers_no_values(running, mode):
    emulator, _ = running
    emulator.reset()
    emulator.add_fault(status=403, reason="forbidden", message="no", path_regex="/labels", count=5)
    server = build_server(emulator_context(*running), toolsets=with_test_prompt("label", "account"))
    try:
        async with Client(server, mode=mode) as client:
            failed = await client.complete(prompt("with-arguments"), {"name": "label", "value": ""})
            elsewhere = await client.complete(
                prompt("with-arguments"), {"name": "label", "value": ""}, context_arguments={"account": "wrok"}
            )
            still_served = await client.complete(prompt("triage-inbox"), {"name": "days", "value": "1"})
    finally:
        emulator.reset()
    assert failed.completion.values == [] and failed.completion.has_more is False
    assert elsewhere.completion.values == []
    assert still_served.completion.values == ["1", "14"]


async def test_a_mailbox_list_is_read_once_a_minute_per_account(running):
    emulator, _ = running
    emulator.reset()
    now = [1000.0]
    catalog = ToolCatalog(emulator_context(*running), with_test_prompt("label"))
    resources = ResourceReader(catalog)
    completer = Completer(resources, PromptBook(resources), clock=lambda: now[0])

    async def labels(value: str, request: Any = None) -> list[str]:
        params = types.CompleteRequestParams(
            ref=prompt("with-arguments"), argument=types.CompletionArgument(name="label", value=value)
        )
        return (await completer.on_completion(request, params)).completion.values

    first = await labels("f")
    again = await labels("fa")
    reads_within_the_minute = [call for call in api_calls(emulator.requests()) if call[1].endswith("/labels")]
    now[0] += KEEP_S + 1
    later = await labels("family/")
    reads = [call for call in api_calls(emulator.requests()) if call[1].endswith("/labels")]
    assert first == again == ["Family", "Family/Kids"] and later == ["Family/Kids"]
    assert len(reads_within_the_minute) == 1 and len(reads) == 2


def signed_in(subject: str) -> Any:
    """The SDK's request context of a remote request by the person `subject` (`remote.person.person_of`)."""
    token = SimpleNamespace(subject=subject, client_id="client", scopes=["gmail.read"], claims={})
    return SimpleNamespace(request=SimpleNamespace(scope={"user": SimpleNamespace(access_token=token)}))


async def test_one_persons_kept_list_never_answers_another(running):
    """Remote mode: two people whose accounts share a name each get their own read (no cache is shared)."""
    emulator, _ = running
    emulator.reset()
    catalog = ToolCatalog(emulator_context(*running), with_test_prompt("label"))
    resources = ResourceReader(catalog)
    completer = Completer(resources, PromptBook(resources), clock=lambda: 1000.0)
    for request in (signed_in("alice-sub"), signed_in("alice-sub"), signed_in("bob-sub"), None):
        params = types.CompleteRequestParams(
            ref=prompt("with-arguments"), argument=types.CompletionArgument(name="label", value="fam")
        )
        assert (await completer.on_completion(request, params)).completion.values == ["Family", "Family/Kids"]
    reads = [call for call in api_calls(emulator.requests()) if call[1].endswith("/labels")]
    assert len(reads) == 3  # alice once, bob once, the local person once


def test_every_completion_a_toolset_declares_reads_an_offered_read_tool_or_gives_choices():
    tools: dict[str, ToolSpec] = {spec.name: spec for toolset in ALL_TOOLSETS for spec in toolset.tools}
    declared = [spec for toolset in ALL_TOOLSETS for spec in toolset.completions]
    assert {name for spec in declared for name in spec.names} >= {"thread_id", "message_id", "label", "days"}
    for spec in declared:
        assert spec.choices or (spec.tool in tools and spec.values is not None)
        if spec.tool is not None:
            assert tools[spec.tool].annotations.read_only  # completing never changes the mailbox
            tools[spec.tool].input_model.model_validate(dict(spec.arguments))  # arguments the tool accepts
