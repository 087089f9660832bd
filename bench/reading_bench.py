"""Reading conversations and attachments: requests, round trips, wall time and bytes, next to the naive way.

    .venv/bin/python -m bench.reading_bench [--rtt-ms 50] [--runs 10] [--mode legacy|auto]

Starts the Gmail emulator (`--latency-ms RTT`, demo mailbox) and `python -m server.main` as subprocesses, drives
the server with the MCP Python client, and reads requests and round trips from the emulator's request log.

- Thread: `gmail_get_thread` on the demo's threads, and on a generated 100-message thread whose replies quote the
  whole history (as most mail programs do), against the naive way, one `messages.get(full)` per message (what
  servers without a thread tool make the model do), whose bodies repeat every quoted reply.
- Attachment: `gmail_read_attachment` on the demo's XLSX, DOCX and PDF against the naive answer, the file's
  base64 (what servers that "return the attachment" hand the model).
- tools/list: the answer listing every read tool, which each conversation pays for.

Bytes are UTF-8 bytes of what the model reads: the tool's text content, or for the naive way the decoded bodies
(thread) or the base64 data (attachment). Exits non-zero when a target fails.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` and `server` importable from the repo root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import EmulatorProcess, emulator_process, round_trips
from bench.measure import _client
from bench.naive import naive_service
from server.tests.support.reading import write_long_thread

LONG_THREAD = 100

THREAD_QUERIES = ("subject:Lisbon offsite", "subject:Project Phoenix kickoff", '"Test meeting on Thursday"')
ATTACHMENTS = ("offsite-budget.xlsx", "offsite-agenda-v2.docx", "Casa-do-Largo-quote-2026-118.pdf")
TOOLS_LIST_LIMIT = 10 * 1024


def shape(entries: list[dict[str, Any]]) -> str:
    """`threads.get`, `messages.get + attachments.get`, `8 x messages.get`: the Gmail calls one task made."""
    names = []
    for entry in entries:
        path = entry["path"]
        kind = (
            "attachments.get" if "/attachments/" in path else "threads.get" if "/threads/" in path else "messages.get"
        )
        names.append(kind)
    if len(set(names)) == 1 and len(names) > 1:
        return f"{len(names)} x {names[0]}"
    return " + ".join(names) or "-"


@dataclass
class Line:
    name: str
    requests: list[int] = field(default_factory=list)
    trips: list[int] = field(default_factory=list)
    walls_ms: list[float] = field(default_factory=list)
    shape: str = ""
    model_bytes: int = 0  # what the model reads

    def add(self, entries: list[dict[str, Any]], wall_ms: float) -> None:
        entries = [entry for entry in entries if entry["path"] != "/token"]
        self.requests.append(len(entries))
        self.trips.append(round_trips(entries))
        self.walls_ms.append(wall_ms)
        self.shape = shape(entries)


async def measure_tool(
    client: Any, emulator: EmulatorProcess, name: str, tool: str, arguments: dict, runs: int
) -> Line:
    line = Line(name)
    for _ in range(runs):
        since = emulator.last_seq()
        started = time.perf_counter()
        result = await client.call_tool(tool, arguments)
        wall = (time.perf_counter() - started) * 1000
        if result.is_error:
            raise RuntimeError(f"{name}: {result.content[0].text}")
        line.add(emulator.requests(since), wall)
        line.model_bytes = sum(len(block.text.encode()) for block in result.content if block.type == "text")
    return line


def naive_thread(service: Any, emulator: EmulatorProcess, thread_id: str, runs: int) -> Line:
    """One messages.get(full) per message of the thread (ids from a cheap threads.get minimal, not counted)."""
    from server.content.message import parse_message

    ids = [
        m["id"]
        for m in service.users().threads().get(userId="me", id=thread_id, format="minimal").execute()["messages"]
    ]
    line = Line(f"naive: {len(ids)} x messages.get")
    for _ in range(runs):
        since = emulator.last_seq()
        started = time.perf_counter()
        resources = [service.users().messages().get(userId="me", id=message_id).execute() for message_id in ids]
        line.add(emulator.requests(since), (time.perf_counter() - started) * 1000)
        line.model_bytes = sum(len((parse_message(r).body_text or "").encode()) for r in resources)
    return line


def naive_attachment(service: Any, emulator: EmulatorProcess, message_id: str, filename: str, runs: int) -> Line:
    """messages.get, then attachments.get, and the file's base64 handed over as is."""
    line = Line("naive: base64 of the file")
    messages = service.users().messages()
    for _ in range(runs):
        since = emulator.last_seq()
        started = time.perf_counter()
        full = messages.get(userId="me", id=message_id).execute()
        part = _find_part(full["payload"], filename)
        data = messages.attachments().get(userId="me", messageId=message_id, id=part["body"]["attachmentId"]).execute()
        line.add(emulator.requests(since), (time.perf_counter() - started) * 1000)
        line.model_bytes = len(base64.b64encode(base64.urlsafe_b64decode(data["data"] + "==")))
    return line


def _find_part(node: dict[str, Any], filename: str) -> dict[str, Any]:
    if node.get("filename") == filename:
        return node
    for child in node.get("parts") or []:
        found = _find_part(child, filename) if isinstance(child, dict) else None
        if found:
            return found
    return {}


async def run(args: argparse.Namespace) -> int:
    lines: list[tuple[str, Line, Line]] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gmail-reading-bench-") as scratch_dir:
        scratch = Path(scratch_dir)
        with emulator_process(args.rtt_ms, scratch) as emulator, open(scratch / "server.log", "w") as errlog:
            service = naive_service(emulator.url, emulator.token_uri, emulator.token_path)
            async with _client(emulator, args.mode, errlog) as client:
                tools = await client.list_tools()
                tools_bytes = len(
                    json.dumps(
                        tools.model_dump(mode="json", by_alias=True, exclude_none=True), separators=(",", ":")
                    ).encode()
                )
                for query in THREAD_QUERIES:
                    found = await client.call_tool("gmail_search_messages", {"query": query, "max_results": 1})
                    thread_id = found.structured_content["messages"][0]["thread_id"]
                    await client.call_tool("gmail_get_thread", {"thread_id": thread_id})  # warm: profile, imports
                    ours = await measure_tool(
                        client, emulator, "gmail_get_thread", "gmail_get_thread", {"thread_id": thread_id}, args.runs
                    )
                    lines.append((f"thread: {query}", ours, naive_thread(service, emulator, thread_id, args.runs)))
                for filename in ATTACHMENTS:
                    found = await client.call_tool(
                        "gmail_search_messages", {"query": f"filename:{filename}", "max_results": 1}
                    )
                    message_id = found.structured_content["messages"][0]["id"]
                    arguments = {"message_id": message_id, "attachment": filename}
                    ours = await measure_tool(
                        client, emulator, "gmail_read_attachment", "gmail_read_attachment", arguments, args.runs
                    )
                    lines.append(
                        (
                            f"attachment: {filename}",
                            ours,
                            naive_attachment(service, emulator, message_id, filename, args.runs),
                        )
                    )
        mailbox = write_long_thread(scratch / "long", LONG_THREAD, body_lines=8, quote_history=True)
        with emulator_process(args.rtt_ms, scratch, mailbox) as emulator, open(scratch / "long.log", "w") as errlog:
            service = naive_service(emulator.url, emulator.token_uri, emulator.token_path)
            async with _client(emulator, args.mode, errlog) as client:
                thread_id = service.users().messages().list(userId="me").execute()["messages"][0]["threadId"]
                arguments = {"thread_id": thread_id}
                await client.call_tool("gmail_get_thread", arguments)
                ours = await measure_tool(
                    client, emulator, "gmail_get_thread", "gmail_get_thread", arguments, args.runs
                )
                naive = naive_thread(service, emulator, thread_id, max(args.runs // 3, 1))
                lines.append((f"thread: {LONG_THREAD} messages, whole history quoted", ours, naive))
    return report(lines, tools_bytes, args, time.perf_counter() - started)


def report(lines: list[tuple[str, Line, Line]], tools_bytes: int, args: argparse.Namespace, elapsed: float) -> int:
    failures = 0
    print(f"\nReading bench: RTT {args.rtt_ms:g} ms, {args.runs} runs per line, MCP {args.mode}\n")
    header = f"{'task / way':<46}{'requests':<36}{'RT':>4}{'p50 ms':>9}{'model bytes':>13}  target"
    print(header + "\n" + "-" * (len(header) + 28))
    for task, ours, naive in lines:
        is_thread = task.startswith("thread")
        ok_trips = max(ours.trips) == 1 if is_thread else max(ours.trips) <= 2
        ok_bytes = ours.model_bytes < naive.model_bytes
        verdict = "PASS" if ok_trips and ok_bytes else "FAIL"
        failures += verdict == "FAIL"
        goal = "1 RT" if is_thread else "<= 2 RT"
        print(task)
        for line, target in ((ours, f"{goal}, fewer bytes than naive: {verdict}"), (naive, "baseline")):
            print(
                f"  {line.name:<44}{f'{statistics.median(line.requests):g}: {line.shape}':<36}{max(line.trips):>4}"
                f"{statistics.median(line.walls_ms):>9.1f}{line.model_bytes:>13,}  {target}"
            )
        ratio = f"x{naive.model_bytes / max(ours.model_bytes, 1):.1f}"
        print(f"  {'naive / ours':<93}{ratio:>13}")
    tools_ok = tools_bytes <= TOOLS_LIST_LIMIT
    failures += not tools_ok
    verdict = "PASS" if tools_ok else "FAIL"
    print(f"\ntools/list answer (5 read tools): {tools_bytes:,} B, target <= {TOOLS_LIST_LIMIT:,} B: {verdict}")
    print(f"{elapsed:.1f} s")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/reading_bench.py", description=__doc__.splitlines()[0])
    parser.add_argument("--rtt-ms", type=float, default=50, help="emulated network round trip (default 50)")
    parser.add_argument("--runs", type=int, default=10, help="timed calls per line (default 10)")
    parser.add_argument("--mode", choices=["legacy", "auto"], default="legacy", help="MCP protocol era")
    return asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
