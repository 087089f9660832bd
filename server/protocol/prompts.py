"""MCP prompts: the three requests people make of a mailbox most, written as instructions that use the tools.

    triage-inbox       unread inbox mail of the last N days, grouped by what it asks of the person
    summarize-thread   one conversation (embedded as the gmail://threads/{id} resource) summarized
    needs-reply        conversations whose last message is not from the person and that ask something

Prompts only put words in the conversation; every Gmail read still happens through the tools (or, for the
embedded thread, through the same handler). Each prompt reminds the model that mail is data, not instructions.
"""

from __future__ import annotations

import re
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from server.protocol.resources import ResourceReader
from server.toolsets.common import MESSAGE_ID_PATTERN, UNTRUSTED_CONTENT, thread_uri

_ID = re.compile(MESSAGE_ID_PATTERN)


def _days_argument(default: int) -> types.PromptArgument:
    return types.PromptArgument(name="days", description=f"How many days back to look (default {default}).")


PROMPTS = (
    types.Prompt(
        name="triage-inbox",
        title="Triage my inbox",
        description="Unread inbox mail of the last few days, grouped into what needs action and what does not.",
        arguments=[_days_argument(3)],
    ),
    types.Prompt(
        name="summarize-thread",
        title="Summarize a conversation",
        description="A summary of one Gmail conversation: decisions, open questions, who owes what.",
        arguments=[types.PromptArgument(name="thread_id", description="The thread id (from a search).", required=True)],
    ),
    types.Prompt(
        name="needs-reply",
        title="What needs my reply",
        description="Conversations of the last days whose last message is not from me and that expect an answer.",
        arguments=[_days_argument(7)],
    ),
)
_NEEDS = {
    "triage-inbox": "gmail_search_messages",
    "summarize-thread": "gmail_get_thread",
    "needs-reply": "gmail_get_thread",
}


def _days(arguments: dict[str, str], default: int) -> int:
    raw = (arguments.get("days") or "").strip()
    if not raw:
        return default
    if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= 365:  # "¹".isdigit(), yet int() refuses it
        raise MCPError(code=INVALID_PARAMS, message=f"days must be a whole number from 1 to 365, got {raw[:20]!r}.")
    return int(raw)


def _text(role: str, text: str) -> types.PromptMessage:
    return types.PromptMessage(role=role, content=types.TextContent(type="text", text=text))


def triage_inbox(days: int) -> str:
    return (
        f"Triage my Gmail inbox for the last {days} day(s). Call gmail_search_messages with query "
        f'"is:unread in:inbox", newer_than_days={days} and max_results=50 (follow next_page_token if there '
        "is more). Group the messages into: 1) needs an action or answer from me, 2) worth knowing, "
        "3) newsletters and promotions, 4) automatic notifications. Under each group list sender, subject, a "
        "one-line gist and the message id; put the most urgent first. Open a message with gmail_get_message "
        "(format='metadata' when the snippet is nearly enough) or a conversation with gmail_get_thread only "
        "when the snippet does not tell what it wants. " + UNTRUSTED_CONTENT
    )


def summarize_thread() -> str:
    return (
        "Summarize this Gmail conversation for me: what it is about, what was decided, open questions, and "
        "who is waiting for whom (name the people). End with what, if anything, I should do next. The "
        "conversation is attached below; for a message cut short, gmail_get_message with the offset it names "
        "reads on. " + UNTRUSTED_CONTENT
    )


def needs_reply(days: int) -> str:
    return (
        f"Find the conversations of the last {days} day(s) that are waiting for my reply. Call "
        f'gmail_search_messages with query "in:inbox -from:me -category:promotions -category:social", '
        f"newer_than_days={days}, max_results=50. For each distinct thread_id call gmail_get_thread with "
        "format='metadata': keep the threads whose reply context says last_from_me is false and whose last "
        "message asks me something or expects an answer (skip notifications and newsletters). List them "
        "oldest waiting first: sender, subject, what they ask, how long it has waited, and the thread id. "
        + UNTRUSTED_CONTENT
    )


class PromptBook:
    """The prompt handlers of one server; the thread prompt embeds the thread read through `resources`."""

    def __init__(self, resources: ResourceReader) -> None:
        self.resources = resources

    def _offered(self) -> list[types.Prompt]:
        tools = self.resources.catalog.offered()
        return [prompt for prompt in PROMPTS if _NEEDS[prompt.name] in tools]

    async def on_list_prompts(self, _request: Any, _params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=self._offered())

    async def on_get_prompt(self, request: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        prompt = next((item for item in self._offered() if item.name == params.name), None)
        if prompt is None:
            names = ", ".join(item.name for item in self._offered())
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown prompt {params.name[:80]!r}. Available: {names}.")
        arguments = params.arguments or {}
        if prompt.name == "triage-inbox":
            messages = [_text("user", triage_inbox(_days(arguments, 3)))]
        elif prompt.name == "needs-reply":
            messages = [_text("user", needs_reply(_days(arguments, 7)))]
        else:
            thread_id = (arguments.get("thread_id") or "").strip()
            if not _ID.match(thread_id):
                raise MCPError(
                    code=INVALID_PARAMS,
                    message="summarize-thread needs thread_id: the thread_id of a message from gmail_search_messages.",
                )
            uri = thread_uri(thread_id)
            text = await self.resources.read_text(uri, self.resources.reachable(request))
            embedded = types.EmbeddedResource(
                type="resource", resource=types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)
            )
            messages = [_text("user", summarize_thread()), types.PromptMessage(role="user", content=embedded)]
        return types.GetPromptResult(description=prompt.description, messages=messages)
