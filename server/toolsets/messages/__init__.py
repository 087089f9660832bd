"""The first toolset, read-only: search messages and read one (`gmail.readonly`)."""

from __future__ import annotations

from server.tools import Toolset
from server.toolsets.messages.read import GET_MESSAGE
from server.toolsets.messages.search import SEARCH_MESSAGES
from server.toolsets.offers import DAYS, MESSAGE_IDS, MESSAGE_RESOURCE, READ_INSTRUCTIONS, THREAD_IDS, TRIAGE_INBOX

MESSAGES = Toolset(
    name="messages",
    description="Search Gmail and read messages.",
    tools=(SEARCH_MESSAGES, GET_MESSAGE),
    resources=(MESSAGE_RESOURCE,),
    prompts=(TRIAGE_INBOX,),
    completions=(THREAD_IDS, MESSAGE_IDS, DAYS),
    instructions=READ_INSTRUCTIONS,
)
