"""The opt-in `contacts` toolset: `gmail_find_contacts` turns "Ana" into the addresses it may mean.

Offered only when enabled (`GMAIL_MCP_WRITE_TOOLS=contacts` or `--enable contacts`) and when the token holds one
of the People API read scopes (`auth_cli.py --scopes readonly,contacts` asks for contacts.readonly and
contacts.other.readonly; `directory` adds the Workspace directory). It reads only: it changes nothing anywhere.
"""

from __future__ import annotations

from server import scopes
from server.tools import Toolset, ToolSpec
from server.toolsets.common import UNTRUSTED_CONTENT
from server.toolsets.contacts.find import FindContactsInput, FindContactsResult, find_contacts, render_contacts

FIND_CONTACTS = ToolSpec(
    name="gmail_find_contacts",
    title="Find a person's email address by name",
    description=(
        "Resolve a name or the start of an address ('Ana', 'ana.l') to the people it may mean, from the person's "
        "contacts, their 'other contacts' (addresses Gmail remembers from correspondence) and, when granted, the "
        "Workspace directory; several matches are ranked by how recently and often the person wrote to them. "
        "When several match, ask the person which one they mean: never pick one yourself. " + UNTRUSTED_CONTENT
    ),
    input_model=FindContactsInput,
    output_model=FindContactsResult,
    run=find_contacts,
    render=render_contacts,
    scopes=scopes.CONTACTS,
)

CONTACTS = Toolset(
    name="contacts",
    description="Find people's addresses by name (contacts, other contacts, directory); reads only.",
    tools=(FIND_CONTACTS,),
    opt_in=True,
    instructions=(
        "gmail_find_contacts finds the address of a person named by the user; with several candidates, ask the "
        "user which one they mean."
    ),
)

__all__ = ["CONTACTS"]
