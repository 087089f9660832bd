"""The first toolset, read-only: search messages and read one (`gmail.readonly`)."""

from __future__ import annotations

from server.tools import Toolset
from server.toolsets.messages.read import GET_MESSAGE
from server.toolsets.messages.search import SEARCH_MESSAGES

MESSAGES = Toolset(
    name="messages",
    description="Search Gmail and read messages.",
    tools=(SEARCH_MESSAGES, GET_MESSAGE),
)
