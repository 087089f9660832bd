"""The tools, grouped in toolsets; each module declares its tools' models, handlers, renderers, annotations, scopes.

A new read tool goes into an existing toolset or a new module here, and its toolset into `ALL_TOOLSETS`.
"""

from __future__ import annotations

from server.tools import Toolset, ToolSpec
from server.toolsets.changes import CHANGES
from server.toolsets.messages import MESSAGES

ALL_TOOLSETS: tuple[Toolset, ...] = (MESSAGES, CHANGES)
ALL_TOOLS: dict[str, ToolSpec] = {spec.name: spec for toolset in ALL_TOOLSETS for spec in toolset.tools}
