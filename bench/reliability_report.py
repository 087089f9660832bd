"""Runs the reliability suites (server/tests/test_reliability_*.py) and prints what they proved, in figures.

    .venv/bin/python -m bench.reliability_report            # all suites, ~1 minute on 2 cores
    .venv/bin/python -m bench.reliability_report -k fuzz    # extra arguments go to pytest

The suites record their figures (fault cases passed, fuzz cases run, hostile messages, leak scans, ...) as JSON
lines in the file named by GMAIL_MCP_RELIABILITY_TALLY; this script points that at a temporary file, runs
pytest, and summarises. Exit status: pytest's, or 1 when any leak was found.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # a path run cannot import `bench`: say how to run it instead
    sys.exit("Run it from the checkout as a module: python -m bench.reliability_report")

from server.tests.support.reliability import TALLY_ENV  # noqa: E402 - after the guard above


def run_suites(pytest_args: list[str], tally_path: Path) -> tuple[int, float]:
    suites = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "server" / "tests").glob("test_reliability_*.py"))
    env = {**os.environ, TALLY_ENV: str(tally_path)}
    started = time.monotonic()
    # Every case of these files, the slow ones included (the default run leaves those out).
    selection = ["-m", "not live"]
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *selection, *suites, *pytest_args], cwd=ROOT, env=env
    )
    return completed.returncode, time.monotonic() - started


def summarise(entries: list[dict[str, Any]]) -> tuple[list[str], int]:
    """The report lines and the number of leaks found."""
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in entries:
        by_kind[entry["kind"]].append(entry)

    def total(kind: str, field: str = "count") -> int:
        return sum(int(entry.get(field, 0)) for entry in by_kind[kind])

    faults = [entry["case"] for entry in by_kind["fault_case"] + by_kind["lifecycle_case"]]
    fuzz_layers = ", ".join(
        f"{entry['count']:,} {entry['layer']}{' ' + entry['tool'] if 'tool' in entry else ''}"
        for entry in by_kind["fuzz_cases"]
    )
    leaks = total("leak_scan", "leaks")
    lines = [
        f"Fault cases passed:        {len(faults)}",
        *(f"    - {case}" for case in faults),
        f"Fuzz cases run:            {total('fuzz_cases'):,}  ({fuzz_layers})",
        f"Malformed stdin lines:     {total('garbage_lines')} answered or ignored per JSON-RPC, session kept serving",
        f"Hostile messages run:      {len(by_kind['hostile_message'])}",
        *(
            f"    - {entry['case']}: worst call {entry['seconds']} s, answer {entry['answer_bytes']:,} bytes"
            for entry in by_kind["hostile_message"]
        ),
    ]
    for entry in by_kind["hostile_peak_rss"]:
        lines.append(f"    server peak RSS:       {entry['megabytes']} MB")
    lines.append(f"Hostile attachments read:  {len(by_kind['hostile_attachment'])}")
    lines.extend(
        f"    - {entry['case']}: {entry['seconds']} s, answer {entry['answer_bytes']:,} bytes"
        for entry in by_kind["hostile_attachment"]
    )
    for entry in by_kind["hostile_attachment_peak_rss"]:
        lines.append(f"    server peak RSS:       {entry['megabytes']} MB")
    for entry in by_kind["load"]:
        lines.append(
            f"Load:                      {entry['count']} concurrent calls in {entry['concurrent_s']} s over one stdio "
            f"session; slowest ping during a stuck call {entry['max_ping_ms']} ms"
        )
    for entry in by_kind["quota_burst"]:
        lines.append(
            f"Quota limiter:             burst of {entry['count']} gets vs a 3-request concurrency limit: "
            f"{entry['unpaced_429s']} x 429 unpaced, {entry['paced_429s']} paced"
        )
    lines.append(f"Leak scans:                {total('leak_scan'):,} texts (logs, results, errors) scanned")
    lines.append(f"Leaks found:               {leaks}")
    return lines, leaks


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as scratch:
        tally_path = Path(scratch) / "tally.jsonl"
        status, elapsed = run_suites(argv, tally_path)
        text = tally_path.read_text(encoding="utf-8") if tally_path.exists() else ""
    lines, leaks = summarise([json.loads(line) for line in text.splitlines()])
    print("\nReliability summary")
    print("-------------------")
    print("\n".join(lines))
    print(f"pytest exit status {status}, {elapsed:.1f} s")
    return status or (1 if leaks else 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
