"""Counts of a conformance run from the suite's `checks.json` files (one folder per scenario under RESULTS):
scenarios clean or not, checks by status, and the checks that failed or warned, grouped by scenario.

    python conformance/summary.py dist/conformance-results/server
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

BAD = ("FAILURE", "WARNING")


def scenario_name(folder: Path) -> str:
    """`server-tools-list-2026-11-26T12-18-49-180Z` -> `tools-list` (the suite's folder naming)."""
    name = folder.name.split("-20", 1)[0] if "-20" in folder.name else folder.name
    return name.removeprefix("server-").removeprefix("authorization-")


def summarize(results: Path) -> tuple[Counter[str], dict[str, list[str]], int]:
    statuses: Counter[str] = Counter()
    bad: dict[str, list[str]] = {}
    scenarios = 0
    for checks_file in sorted(results.glob("*/checks.json")):
        scenarios += 1
        scenario = scenario_name(checks_file.parent)
        for check in json.loads(checks_file.read_text("utf-8")):
            statuses[check.get("status", "?")] += 1
            if check.get("status") in BAD:
                bad.setdefault(scenario, []).append(f"{check.get('id')} ({check.get('status')})")
    return statuses, bad, scenarios


def main(argv: list[str]) -> int:
    results = Path(argv[1] if len(argv) > 1 else "dist/conformance-results/server")
    statuses, bad, scenarios = summarize(results)
    counts = ", ".join(f"{count} {status.lower()}" for status, count in sorted(statuses.items()))
    print(f"conformance: {scenarios} scenarios, {scenarios - len(bad)} clean; checks: {counts or 'none'}")
    for scenario, checks in sorted(bad.items()):
        print(f"  {scenario}: {', '.join(checks)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
