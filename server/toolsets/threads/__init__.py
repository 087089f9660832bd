"""Conversations (`gmail.readonly`): `gmail_get_thread`."""

from __future__ import annotations

from server.tools import Toolset, ToolSpec
from server.toolsets.common import UNTRUSTED_CONTENT
from server.toolsets.offers import NEEDS_REPLY, SUMMARIZE_THREAD, THREAD_RESOURCE
from server.toolsets.threads.get_thread import get_thread
from server.toolsets.threads.models import GetThreadInput, GetThreadResult
from server.toolsets.threads.render import render_thread

GET_THREAD = ToolSpec(
    name="gmail_get_thread",
    title="Read a Gmail conversation",
    description=(
        "Read a whole conversation by thread_id: each message oldest first (sent mail included) with sender, "
        "recipients, date, labels, attachments and its own words without quoted history, plus the reply "
        "context (In-Reply-To, References, recipients). " + UNTRUSTED_CONTENT
    ),
    input_model=GetThreadInput,
    output_model=GetThreadResult,
    run=get_thread,
    render=render_thread,
)

THREADS = Toolset(
    name="threads",
    description="Read whole conversations.",
    tools=(GET_THREAD,),
    resources=(THREAD_RESOURCE,),
    prompts=(SUMMARIZE_THREAD, NEEDS_REPLY),
)
