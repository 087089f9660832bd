"""The tools, grouped in toolsets; each module declares its tools' models, handlers, renderers, annotations, scopes.

A new read tool goes into an existing toolset or a new module here, and its toolset into `ALL_TOOLSETS`. The
write toolsets (`drafts`, `labels`, `send`, `filters`) and `contacts` are opt-in: listed only when enabled and
granted. (The always-on label listing is the `label_list` toolset: `labels` is the name a person enables label
changes by.)
"""

from __future__ import annotations

from server.tools import Toolset, ToolSpec
from server.toolsets.attachments import ATTACHMENTS
from server.toolsets.changes import CHANGES
from server.toolsets.cleanup import CLEANUP
from server.toolsets.contacts import CONTACTS
from server.toolsets.drafts import DRAFTS, SEND
from server.toolsets.filters import FILTERS
from server.toolsets.labeling import LABELING
from server.toolsets.labels import LABELS
from server.toolsets.messages import MESSAGES
from server.toolsets.threads import THREADS
from server.toolsets.unsubscribe import UNSUBSCRIBE_TOOLS

ALL_TOOLSETS: tuple[Toolset, ...] = (MESSAGES, THREADS, ATTACHMENTS, LABELS, CHANGES, DRAFTS, LABELING, SEND)
ALL_TOOLSETS += (CONTACTS, FILTERS, CLEANUP, UNSUBSCRIBE_TOOLS)  # issue 24: contacts, filters, cleanup, unsubscribe
ALL_TOOLS: dict[str, ToolSpec] = {spec.name: spec for toolset in ALL_TOOLSETS for spec in toolset.tools}
# What a server lists with nothing enabled: every tool but the opt-in write groups'.
ALWAYS_ON_TOOLS: dict[str, ToolSpec] = {
    spec.name: spec for toolset in ALL_TOOLSETS if not toolset.opt_in for spec in toolset.tools
}
