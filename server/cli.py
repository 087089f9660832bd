"""A terminal MCP client for this server: `python -m server.cli [--demo] search|get|thread|attachment|labels|tour`.

It starts `python -m server.main` as a subprocess and speaks MCP to it over stdio, exactly as Claude Desktop
does, so every command exercises the whole stack. Without `--demo` it uses your real token, which makes it the
quickest check of a real set-up.

    python -m server.cli --demo tour
    python -m server.cli search "from:alice newer_than:30d" --max 5
    python -m server.cli get 18c2f0a1b2c3d4e5 --format metadata --json
    python -m server.cli thread 18c2f0a1b2c3d4e5
    python -m server.cli attachment 18c2f0a1b2c3d4e5 1
    python -m server.cli search "is:unread" --account work      (an account authorized with --account work)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TextIO

from server.hints import program_name
from server.runtime.config import PROJECT_ROOT

RULE = "─" * 78


class ServerFailed(Exception):
    """The server subprocess ended before or while answering; the message is its own account of why."""


@asynccontextmanager
async def connect(demo: bool, verbose: bool) -> AsyncIterator[Any]:
    """An MCP client session with a freshly started server subprocess.

    The server's stderr goes to a scratch file (or the terminal with --verbose): when it cannot start, the
    client would only see "Connection closed" inside an exception group; the server's own error lines say why.
    """
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "server.main", *(["--demo"] if demo else [])],
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
        cwd=str(PROJECT_ROOT),
    )
    with tempfile.TemporaryFile("w+", encoding="utf-8") as captured:
        errlog: TextIO = sys.stderr if verbose else captured
        inside = False  # an exception raised by the caller's own code in the session is not the server's failure
        try:
            async with Client(stdio_client(params, errlog=errlog), mode="auto") as client:
                inside = True
                yield client
                inside = False
        except Exception as exc:
            captured.seek(0)
            reason = server_error_lines(captured.read())
            if inside and not reason:
                raise
            raise ServerFailed(reason or f"the server stopped ({exc!r:.200})") from None


def server_error_lines(stderr_text: str) -> str:
    """The server's ERROR log lines (JSON) as plain text: `invalid setting: GMAIL_MCP_ENRICH_TOP_K must be ...`."""
    lines: list[str] = []
    for line in stderr_text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            if line.strip() and not lines:  # a traceback or a message before logging started
                lines.append(line.strip())
            continue
        if isinstance(record, dict) and record.get("level") in ("ERROR", "CRITICAL"):
            detail = record.get("detail") or record.get("error") or ""
            lines.append(f"{record.get('event', 'error')}: {detail}".rstrip(": "))
    return "\n".join(lines[-5:])


def describe_block(block: Any) -> str:
    """A content block as a terminal shows it: text as is, an image or a resource link as one line."""
    if block.type == "text":
        return block.text
    if block.type == "image":
        return f"[image content: {block.mime_type}, {len(block.data) * 3 // 4:,} bytes]"
    if block.type == "resource_link":
        return f"[link: {block.uri}]"
    return f"[{block.type} content]"


def show(result: Any, as_json: bool, out: TextIO) -> bool:
    """Prints a tool result; returns False when it was an error. `--json` prints the whole result (isError, the
    error's category and hint in `_meta`, the structured content and the text)."""
    if as_json:
        payload = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        out.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    else:
        text = [describe_block(block) for block in result.content if block.type != "resource_link"]
        links = [block for block in result.content if block.type == "resource_link"]
        if links:
            text.append(f"[{len(links)} resource links: {links[0].uri}, ...]")
        out.write("\n".join(text) + "\n")
    return not result.is_error


def for_account(arguments: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The tool arguments, naming the account when --account was given."""
    account = getattr(args, "account", None)
    return {**arguments, "account": account} if account else arguments


async def call_and_show(args: argparse.Namespace, tool: str, arguments: dict[str, Any]) -> int:
    async with connect(args.demo, args.verbose) as client:
        result = await client.call_tool(tool, for_account(arguments, args))
    return 0 if show(result, args.json, sys.stdout) else 1


def search_arguments(args: argparse.Namespace) -> dict[str, Any]:
    arguments: dict[str, Any] = {"query": args.query, "max_results": args.max}
    if args.newer_than_days is not None:
        arguments["newer_than_days"] = args.newer_than_days
    if args.label:
        arguments["label_ids"] = args.label
    if args.page_token:
        arguments["page_token"] = args.page_token
    return for_account(arguments, args)


async def run_search(args: argparse.Namespace) -> int:
    return await call_and_show(args, "gmail_search_messages", search_arguments(args))


async def run_get(args: argparse.Namespace) -> int:
    arguments: dict[str, Any] = {"message_id": args.message_id, "format": args.format}
    if args.max_body_chars:
        arguments["max_body_chars"] = args.max_body_chars
    if args.offset:
        arguments["offset"] = args.offset
    return await call_and_show(args, "gmail_get_message", arguments)


async def run_thread(args: argparse.Namespace) -> int:
    arguments: dict[str, Any] = {"thread_id": args.thread_id, "format": args.format}
    if args.message_range:
        arguments["message_range"] = args.message_range
    return await call_and_show(args, "gmail_get_thread", arguments)


async def run_attachment(args: argparse.Namespace) -> int:
    arguments: dict[str, Any] = {"message_id": args.message_id, "attachment": args.attachment}
    if args.offset:
        arguments["offset"] = args.offset
    if args.save:
        arguments["save"] = True
    return await call_and_show(args, "gmail_read_attachment", arguments)


async def run_labels(args: argparse.Namespace) -> int:
    return await call_and_show(args, "gmail_list_labels", {"labels": args.label} if args.label else {})


async def run_tour(args: argparse.Namespace) -> int:
    from server.cli_tour import run_tour as tour

    async with connect(args.demo, args.verbose) as client:
        return await tour(
            client,
            demo=args.demo,
            as_json=args.json,
            out=sys.stdout,
            show=show,
            with_account=lambda arguments: for_account(arguments, args),
        )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("gmail-mcp-cli", "server.cli"), description="Talk to the Gmail MCP server."
    )
    # The shared flags work before or after the command (`--demo tour` and `tour --demo`): the sub-commands'
    # copies default to SUPPRESS so they never overwrite a flag given before the command.
    common = argparse.ArgumentParser(add_help=False)
    for target, default in ((parser, False), (common, argparse.SUPPRESS)):
        target.add_argument("--demo", action="store_true", default=default, help="use the bundled demo mailbox")
        target.add_argument(
            "--json",
            action="store_true",
            default=default,
            help="print the whole MCP result as JSON (isError, the error's category and hint in _meta, content)",
        )
        target.add_argument("--verbose", action="store_true", default=default, help="show the server's stderr log")
        target.add_argument("--account", default=None if target is parser else argparse.SUPPRESS, help="account name")
    commands = parser.add_subparsers(dest="command", required=True)

    search = commands.add_parser("search", parents=[common], help="search messages")
    search.add_argument("query", help='Gmail query, e.g. "from:alice is:unread" ("" with a filter)')
    search.add_argument("--max", type=int, default=10, help="max results (1-50)")
    search.add_argument("--newer-than-days", type=int)
    search.add_argument("--label", action="append", help="label filter (repeatable)")
    search.add_argument("--page-token")
    search.set_defaults(run=run_search)

    get = commands.add_parser("get", parents=[common], help="read one message")
    get.add_argument("message_id")
    get.add_argument("--format", choices=["full", "metadata"], default="full")
    get.add_argument("--max-body-chars", type=int)
    get.add_argument("--offset", type=int)
    get.set_defaults(run=run_get)

    thread = commands.add_parser("thread", parents=[common], help="read a whole conversation")
    thread.add_argument("thread_id")
    thread.add_argument("--format", choices=["full", "metadata"], default="full")
    thread.add_argument("--message-range", help='e.g. "1-10"')
    thread.set_defaults(run=run_thread)

    attachment = commands.add_parser("attachment", parents=[common], help="read an attachment as text")
    attachment.add_argument("message_id")
    attachment.add_argument("attachment", help="part id (from get) or file name")
    attachment.add_argument("--offset", type=int)
    attachment.add_argument("--save", action="store_true", help="also save it (needs GMAIL_MCP_DOWNLOAD_DIR)")
    attachment.set_defaults(run=run_attachment)

    labels = commands.add_parser("labels", parents=[common], help="list labels with counts")
    labels.add_argument("--label", action="append", help="only this label (repeatable)")
    labels.set_defaults(run=run_labels)

    tour = commands.add_parser("tour", parents=[common], help="a short guided run through the tools")
    tour.set_defaults(run=run_tour)
    return parser


def main(argv: list[str] | None = None) -> int:
    import anyio

    args = build_parser().parse_args(argv)
    try:
        return anyio.run(args.run, args)
    except KeyboardInterrupt:
        return 130
    except ServerFailed as failure:
        print(f"The Gmail MCP server could not start or stopped:\n{failure}", file=sys.stderr)
        return 1


def console_main() -> None:
    """The `gmail-mcp-cli` command."""
    sys.exit(main())


if __name__ == "__main__":
    console_main()
