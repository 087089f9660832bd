"""The tools, grouped in toolsets; each module declares its tools' models, handlers, renderers, annotations, scopes.

A new read tool goes into an existing toolset or a new module here, and its toolset into `ALL_TOOLSETS`. The
write toolsets (`drafts`, `labels`, `send`) are opt-in: listed only when enabled and granted.
"""

from __future__ import annotations

from server.tools import Toolset, ToolSpec
from server.toolsets.drafts import DRAFTS, SEND
from server.toolsets.labeling import LABELS
from server.toolsets.messages import MESSAGES

ALL_TOOLSETS: tuple[Toolset, ...] = (MESSAGES, DRAFTS, LABELS, SEND)
ALL_TOOLS: dict[str, ToolSpec] = {spec.name: spec for toolset in ALL_TOOLSETS for spec in toolset.tools}
