"""The examples in README.md and docs/*.md, checked against the demo mailbox and the commands they show.

A checked example is a fenced block right after a comment naming the command that prints it:

    <!-- checked: gmail-mcp-cli --demo search "from:example@gmail.com" --max 2 -->
    ```text
    ...what the command prints...
    ```

The command runs as `python -m server.cli ...` (the same program as the installed `gmail-mcp-cli`) with dates
shown in UTC. The block must match the output line for line, except that a line `...` stands for any number of
lines, and the random value of the mail markers (`[mail 1a2b3c4d]`) and the seconds a run took are not compared.
Every other 16-hex id in the docs must be a message or thread id of the demo mailbox, unless a comment
`<!-- new ids: ID ... -->` names it as mail the example itself creates.

Refresh every example that has no `...` from what the commands print now:

    .venv/bin/python -m server.tests.support.doc_examples --update
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from server.runtime.config import PROJECT_ROOT

CHECKED = re.compile(r"<!-- checked: (?P<command>.+?) -->\n```[a-z]*\n(?P<body>.*?)```\n", re.S)
NEW_IDS = re.compile(r"<!-- new ids: (?P<ids>[0-9a-f ]+) -->")
HEX_ID = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{16}(?![0-9A-Za-z])")
PROGRAMS = {"gmail-mcp-cli": ["-m", "server.cli"], "gmail-mcp": ["-m", "server.main"]}


@dataclass(frozen=True)
class Example:
    path: Path
    command: str
    body: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(PROJECT_ROOT)}: {self.command}"


def doc_files() -> list[Path]:
    return [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]


def examples(path: Path) -> list[Example]:
    text = path.read_text(encoding="utf-8")
    return [Example(path, match["command"], match["body"]) for match in CHECKED.finditer(text)]


def normalize(text: str) -> list[str]:
    text = re.sub(r"\[(/?)mail [0-9a-f]{8}\]", r"[\1mail 1a2b3c4d]", text)
    text = re.sub(r"(tool calls in )[0-9.]+ s", r"\g<1>N s", text)
    return [line.rstrip() for line in text.rstrip("\n").split("\n")]


def run(command: str) -> str:
    """What the command prints now (stdout, then stderr if it failed)."""
    program, *args = shlex.split(command)
    clean = {key: value for key, value in os.environ.items() if not key.startswith("GMAIL_")}
    done = subprocess.run(
        [sys.executable, *PROGRAMS[program], *args],
        env={**clean, "PYTHONPATH": str(PROJECT_ROOT), "GMAIL_MCP_TIMEZONE": "UTC"},
        cwd=str(PROJECT_ROOT),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    return done.stdout + (done.stderr if done.returncode else "")


def mismatch(shown: str, printed: str) -> str | None:
    """None when `shown` (with `...` elisions) matches `printed`; else the first line that differs."""
    want, have = normalize(shown), normalize(printed)
    position = 0
    skipping = False
    for line in want:
        if line == "...":
            skipping = True
            continue
        if skipping:
            while position < len(have) and have[position] != line:
                position += 1
            skipping = False
        if position >= len(have) or have[position] != line:
            got = have[position] if position < len(have) else "(end of output)"
            return f"shown:   {line!r}\nprinted: {got!r}"
        position += 1
    if not skipping and position < len(have):
        return f"printed more than shown, from: {have[position]!r}"
    return None


def unknown_ids(path: Path, known: set[str]) -> list[str]:
    text = path.read_text(encoding="utf-8")
    created = {found for match in NEW_IDS.finditer(text) for found in match["ids"].split()}
    return sorted({found for found in HEX_ID.findall(text) if found not in known | created})


def demo_ids() -> set[str]:
    from server.demo import DEMO_MAILBOX
    from server.emulator.mailbox_store import load_mailbox

    store = load_mailbox(DEMO_MAILBOX)
    return {message.id for message in store.messages} | {message.thread_id for message in store.messages}


def outputs(found: list[Example]) -> dict[Example, str]:
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(found, pool.map(lambda example: run(example.command), found), strict=True))


def update() -> int:
    """Rewrites each example without `...` from what its command prints now; reports the others that differ."""
    status = 0
    for path in doc_files():
        found = examples(path)
        if not found:
            continue
        printed = outputs(found)
        text = path.read_text(encoding="utf-8")
        for example in found:
            if mismatch(example.body, printed[example]) is None:
                continue
            if "\n...\n" in f"\n{example.body}":
                print(f"edit by hand (it elides lines): {example.where}", file=sys.stderr)
                status = 1
                continue
            fresh = "\n".join(normalize(printed[example])) + "\n"
            marker = f"<!-- checked: {example.command} -->\n```text\n"
            text = text.replace(f"{marker}{example.body}```", f"{marker}{fresh}```", 1)
            print(f"updated: {example.where}")
        path.write_text(text, encoding="utf-8")
    return status


if __name__ == "__main__":
    sys.exit(update() if "--update" in sys.argv[1:] else 0)
