"""What a tool is, and which tools a server offers.

A tool declares itself in one `ToolSpec`: its name, title and description, the pydantic models of its input and
result (the schemas a client sees are generated from them), the handler that does the work, the renderer that
writes the compact text the model reads, its annotations (read-only, destructive, idempotent, open-world) and the
Gmail scopes it can work with. Tools come in toolsets (`server/toolsets/`): the read-only ones are always on;
a toolset that writes is `opt_in`, offered only when the person enabled it in configuration. Either way a tool
is listed only when the account's token holds one of its scopes.

Handlers are plain functions `(ToolContext, validated input) -> result model`; they never see the MCP SDK
(`server/protocol/` adapts them) and reach Gmail only through `ctx.gmail` (`server/gmail/interface.py`). Besides
its text, a tool may add content blocks (`blocks`): an image, or links to resources; the dispatcher turns these
neutral descriptions into the SDK's content types. A handler whose action needs the person's explicit yes
(sending mail) returns a `ConfirmationRequest` instead: the dispatcher asks the person the way the client allows
and runs the second phase only on an explicit accept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from server import scopes
from server.errors import GmailError, InvalidInputError
from server.gmail.account_cache import AccountCache
from server.gmail.interface import GmailApi
from server.runtime.config import DEFAULT_ACCOUNT
from server.runtime.observability import Metrics
from server.runtime.write_safety import WriteSafety


@dataclass(frozen=True)
class ToolContext:
    """What a handler works with: one account's Gmail, the search options, and the metrics it reports to."""

    gmail: GmailApi
    enrich_top_k: int
    metrics: Metrics
    account: str = DEFAULT_ACCOUNT
    download_dir: Path | None = None  # GMAIL_MCP_DOWNLOAD_DIR: where attachments may be saved; None: never
    thread_max_chars: int = 60_000  # GMAIL_MCP_THREAD_MAX_CHARS: bound on one gmail_get_thread answer
    # None only until __post_init__ makes one (a frozen dataclass cannot default to a per-instance cache).
    cache: AccountCache = field(default=None, compare=False, repr=False)  # type: ignore[assignment]
    safety: WriteSafety = field(default_factory=WriteSafety, compare=False)  # dry run, confirmations, limit, audit

    def __post_init__(self) -> None:
        if self.cache is None:  # one per context, so it lives as long as the account's context (the session)
            object.__setattr__(self, "cache", AccountCache(self.gmail))

    # A ready context is its own source: tests and single-account embeddings pass one straight to the server.
    @property
    def names(self) -> list[str]:
        return [self.account]

    @property
    def default_name(self) -> str:
        return self.account

    def context_for(self, account: str | None) -> ToolContext:
        if account not in (None, self.account):
            raise InvalidInputError(
                f"No account named {account!r}.", hint=f"Leave account out (the only account is {self.account!r})."
            )
        return self

    def granted_scopes(self, account: str | None) -> frozenset[str] | None:
        return None

    def mailbox_of(self, account: str | None) -> str | None:
        return None

    def explain(self, error: GmailError, account: str | None) -> GmailError:
        return error

    def warm_up(self) -> None:
        """Nothing to prepare: a ready context (tests, embeddings) sends no request it was not asked for."""


class ContextSource(Protocol):
    """Where the dispatcher gets a handler's context (`app/accounts.py`'s registry, or a ToolContext)."""

    @property
    def names(self) -> list[str]:
        """The configured accounts, the default first."""
        ...

    @property
    def default_name(self) -> str: ...

    def context_for(self, account: str | None) -> ToolContext: ...

    def granted_scopes(self, account: str | None) -> frozenset[str] | None:
        """The scopes the account's token holds; None when unknown (no token yet)."""
        ...

    def mailbox_of(self, account: str | None) -> str | None:
        """The Google address of the account (blocking: may ask Gmail once); None when it cannot be known."""
        ...

    def explain(self, error: GmailError, account: str | None) -> GmailError:
        """The error as the person should read it: naming the account and its own consent command."""
        ...

    def warm_up(self) -> None:
        """Prepares what the first tool call would wait for; called once per session, off the event loop."""
        ...


Refusal = Literal["declined", "cancelled"]


@dataclass(frozen=True)
class ConfirmationRequest:
    """What a handler returns when its action may happen only after the person says yes (a send).

    `question` is shown to the person (everything that leaves the mailbox). The dispatcher asks through
    elicitation when the client declared it (an `elicitation/create` request in handshake-era sessions, an
    `InputRequiredResult` round trip in 2026-07-28 ones) and calls `proceed(ctx)` only after an explicit accept,
    `refused(how)` after a decline or a cancel. A client that cannot ask gets `without_asking(ctx)`: a result that
    does nothing but hand the model the summary and a single-use code for a second call.
    """

    question: str
    proceed: Callable[[ToolContext], BaseModel]
    refused: Callable[[Refusal], BaseModel]
    without_asking: Callable[[ToolContext], BaseModel]
    consent: str = "Send this email now"  # the checkbox the person ticks to say yes (elicitation)


@dataclass(frozen=True)
class Annotations:
    """MCP tool annotations: hints a client may use to decide what needs the person's confirmation."""

    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    open_world: bool = True  # every tool talks to Gmail, a world outside the client


READ_ONLY = Annotations()


@dataclass(frozen=True)
class ImageBlock:
    """An image for a model that can see (MCP image content)."""

    data: bytes
    mime_type: str


@dataclass(frozen=True)
class LinkBlock:
    """A link to a resource this server can read (MCP resource_link content)."""

    uri: str
    name: str
    title: str | None = None
    mime_type: str | None = None


Block = ImageBlock | LinkBlock


def no_blocks(_result: Any) -> Sequence[Block]:
    return ()


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    run: Callable[[ToolContext, Any], BaseModel | ConfirmationRequest]
    render: Callable[[Any], str]
    annotations: Annotations = READ_ONLY
    scopes: frozenset[str] = scopes.READ  # any one of these, granted, lets the tool work
    blocks: Callable[[Any], Sequence[Block]] = no_blocks  # content after the text: images, resource links


@dataclass(frozen=True)
class ResourceSpec:
    """A resource served by one of the toolset's tools with default arguments, rendered as the tool renders it.

    `uri` is fixed (`gmail://labels`) or a template with one `{id}` part (`gmail://messages/{id}`) that becomes the
    tool's `argument`. Offered only while the tool is."""

    uri: str
    name: str
    title: str
    description: str
    tool: str
    argument: str | None = None
    mime_type: str = "text/markdown"


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str
    required: bool = False


@dataclass(frozen=True)
class PromptSpec:
    """A prompt: instructions that use the tools, put in the conversation. Offered only while `tool` is.

    `text(arguments)` is the user message (InvalidInputError for a bad argument); `embed(arguments)`, when set,
    names a resource whose text follows it."""

    name: str
    title: str
    description: str
    tool: str
    arguments: tuple[PromptArgument, ...]
    text: Callable[[Mapping[str, str]], str]
    embed: Callable[[Mapping[str, str]], str] | None = None


@dataclass(frozen=True)
class CompletionSpec:
    """Suggestions for the arguments named `names`, of any prompt or as a resource template's argument: `choices`
    as given, or what `values` takes from the result of `tool` called with `arguments` (best first)."""

    names: tuple[str, ...]
    choices: tuple[str, ...] = ()
    tool: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    values: Callable[[Any], list[str]] | None = None


@dataclass(frozen=True)
class Toolset:
    name: str
    description: str
    tools: tuple[ToolSpec, ...]
    opt_in: bool = False  # a toolset that changes the mailbox: offered only when enabled in configuration
    resources: tuple[ResourceSpec, ...] = ()  # what its tools also serve as MCP resources
    prompts: tuple[PromptSpec, ...] = ()
    completions: tuple[CompletionSpec, ...] = ()  # where `completion/complete` finds values for arguments
    instructions: str = ""  # its sentence of the server's instructions (while it is offered)


def grants(spec: ToolSpec, granted: Iterable[str]) -> bool:
    """Whether the scopes `granted` let `spec` work (any one of its scopes suffices)."""
    return scopes.covers(granted, spec.scopes)


def offered_tools(
    toolsets: Iterable[Toolset], *, enabled: frozenset[str], granted: frozenset[str] | None
) -> dict[str, ToolSpec]:
    """The tools a server lists: those of the always-on toolsets and the enabled opt-in ones, whose scopes the
    token covers. With no token yet (`granted` None) the default consent (`gmail.readonly`) is assumed, so the
    read tools are listed and answer with the hint to authorize."""
    held = scopes.DEFAULT_GRANT if granted is None else granted
    return {
        spec.name: spec
        for toolset in toolsets
        if not toolset.opt_in or toolset.name in enabled
        for spec in toolset.tools
        if scopes.covers(held, spec.scopes)
    }


def unavailable_toolsets(
    toolsets: Iterable[Toolset], *, enabled: frozenset[str], granted: frozenset[str] | None
) -> list[tuple[Toolset, frozenset[str]]]:
    """Enabled opt-in toolsets some of whose tools the token does not cover, with the scopes they would need:
    what `--check` and the start-up warning report (never a listed tool that fails on every call)."""
    held = scopes.DEFAULT_GRANT if granted is None else granted
    missing = []
    for toolset in toolsets:
        if toolset.opt_in and toolset.name in enabled:
            needs = [spec.scopes for spec in toolset.tools if not scopes.covers(held, spec.scopes)]
            if needs:
                missing.append((toolset, frozenset().union(*needs)))
    return missing
