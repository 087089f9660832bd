"""`--auth oauth`: what the filters and cleanup tools remember is each person's own, and never lands on the server's
disk beside a token file that is not theirs.

In remote mode there is no token file per person: the server's own `token_path` (from its settings) is shared by
everyone, so a filter record kept beside it would tell one person that another's filters were "created here" (and
let them be deleted without a yes). Real parts: the remote app on loopback, the official MCP client, the emulator
playing Google with two people, each with a mailbox of their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.emulator import Emulator
from server.tests.support.accounts import WORK_OWNER, two_account_emulator
from server.tests.support.emulator import OWNER
from server.tests.support.http_server import mcp_client
from server.tests.support.remote_http import RemoteRun, remote_server

pytestmark = pytest.mark.anyio
GOOGLE = "https://www.googleapis.com/auth/"
WRITES = frozenset({"filters", "cleanup"})
MCP_SCOPES = ["gmail.read", "gmail.filters", "gmail.cleanup"]
SKIP_CAFE = {"from_address": "news@cafe.example", "skip_inbox": True}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with two_account_emulator(tmp_path_factory.mktemp("records")) as running:
        yield running


@pytest.fixture
def remote(emulator: Emulator, tmp_path: Path) -> Iterator[RemoteRun]:
    emulator.reset()
    with remote_server(emulator, tmp_path, write_tools=WRITES) as run:
        yield run


def sign_in(remote: RemoteRun, email: str) -> str:
    subject = remote.sign_in(
        email, scopes=[GOOGLE + "gmail.readonly", GOOGLE + "gmail.modify", GOOGLE + "gmail.settings.basic"]
    )
    return remote.token_for(subject, scopes=MCP_SCOPES).access_token


def headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def create_filter(remote: RemoteRun, token: str) -> Any:
    async with mcp_client(remote.url, "legacy", headers(token)) as client:
        asked = await client.call_tool("gmail_create_filter", SKIP_CAFE)
        assert not asked.is_error, asked.content[0].text
        code = asked.structured_content["confirmation_code"]
        done = await client.call_tool("gmail_create_filter", {**SKIP_CAFE, "confirmation_code": code})
        assert not done.is_error, done.content[0].text
        return (await client.call_tool("gmail_list_filters", {})).structured_content


async def test_a_filter_record_is_the_persons_own_and_never_written_beside_the_servers_token(
    remote: RemoteRun, emulator: Emulator, tmp_path: Path
) -> None:
    mine, hers = sign_in(remote, OWNER), sign_in(remote, WORK_OWNER)
    listed = await create_filter(remote, mine)
    assert [f["created_here"] for f in listed["filters"]] == [True]
    # Nothing on the server's disk: no record beside its token path (the remote server's settings point at one).
    token_path = remote.remote.gate.people.settings.token_path
    assert not list(token_path.parent.glob("*.filters.json")) and not list(tmp_path.rglob("*.filters.json"))
    # The same filter for her: her own mailbox's, her own record.
    async with mcp_client(remote.url, "legacy", headers(hers)) as client:
        before = (await client.call_tool("gmail_list_filters", {})).structured_content
        assert before["filters"] == []
        theirs = await create_filter(remote, hers)
    assert [f["created_here"] for f in theirs["filters"]] == [True]
    mine_again = await create_filter_list(remote, mine)
    assert len(mine_again["filters"]) == 1  # each person sees only the filter of their own mailbox


async def create_filter_list(remote: RemoteRun, token: str) -> Any:
    async with mcp_client(remote.url, "legacy", headers(token)) as client:
        return (await client.call_tool("gmail_list_filters", {})).structured_content


async def test_a_cleanup_preview_of_one_person_cannot_be_run_by_another(remote: RemoteRun) -> None:
    mine, hers = sign_in(remote, OWNER), sign_in(remote, WORK_OWNER)
    async with mcp_client(remote.url, "legacy", headers(mine)) as client:
        preview = await client.call_tool("gmail_cleanup_preview", {"query": "in:anywhere", "action": "mark_read"})
    assert not preview.is_error, preview.content[0].text
    preview_id = preview.structured_content["preview_id"]
    async with mcp_client(remote.url, "legacy", headers(hers)) as client:
        undo = await client.call_tool("gmail_cleanup_undo", {"preview_id": preview_id})
        run = await client.call_tool("gmail_cleanup_run", {"preview_id": preview_id, "confirmation_code": "x"})
    assert undo.is_error and run.is_error
    assert preview_id in undo.content[0].text or "preview" in undo.content[0].text.lower()


async def test_a_person_attaches_their_bytes_never_a_file_of_the_servers_folder(emulator: Emulator, tmp_path: Path):
    """The server's attachment folder belongs to whoever runs it, not to the people signed in: in remote mode a
    draft takes the person's bytes (`attach_content`) and refuses file names, even with GMAIL_MCP_ATTACH_DIR set."""
    folder = tmp_path / "operator-files"
    folder.mkdir()
    (folder / "payroll.csv").write_text("name,salary\n")
    emulator.reset()
    with remote_server(
        emulator, tmp_path / "run", write_tools=frozenset({"drafts"}), settings_overrides={"attach_dir": folder}
    ) as run:
        token = run.token_for(run.sign_in(OWNER)).access_token
        draft = {"to": ["a@b.example"], "subject": "s", "body": "b"}
        async with mcp_client(run.url, "legacy", headers(token)) as client:
            refused = await client.call_tool("gmail_create_draft", {**draft, "attachments": ["payroll.csv"]})
            data = {"filename": "note.txt", "mime_type": "text/plain", "data_base64": "aGk="}
            sent = await client.call_tool("gmail_create_draft", {**draft, "attach_content": [data]})
    assert refused.is_error and "payroll.csv" not in refused.content[0].text.split("Hint")[-1]
    assert "attach_content" in refused.content[0].text
    assert not sent.is_error, sent.content[0].text
    posts = [e for e in emulator.requests() if e["method"] == "POST" and e["path"].endswith("/drafts")]
    assert len(posts) == 1  # only the draft with the person's own bytes was saved


async def test_contacts_resolve_in_each_persons_own_address_book(emulator: Emulator, tmp_path: Path):
    """The People API answers (and this server's warm-up and refusal memory) are each person's own: the same name
    finds her colleagues for her and nobody for me."""
    emulator.reset()
    people = [GOOGLE + "contacts.readonly", GOOGLE + "contacts.other.readonly"]
    with remote_server(emulator, tmp_path / "run", write_tools=frozenset({"contacts"})) as run:
        tokens = []
        for who in (WORK_OWNER, OWNER):
            subject = run.sign_in(who, scopes=[GOOGLE + "gmail.readonly", *people])
            tokens.append(run.token_for(subject, scopes=["gmail.read", "gmail.contacts"]).access_token)
        found = []
        for token in tokens:
            async with mcp_client(run.url, "legacy", headers(token)) as client:
                result = await client.call_tool("gmail_find_contacts", {"query": "Colleague"})
            assert not result.is_error, result.content[0].text
            found.append(result.structured_content)
    hers, mine = found
    assert hers["status"] == "ambiguous" and all(c["email"].endswith("@work.example") for c in hers["candidates"])
    assert mine["status"] == "no_match" and not mine.get("candidates")
