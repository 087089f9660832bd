"""Tables for the terminal (and for bench/README.md): figures beside their targets, PASS or FAIL. The server's
CPU per call and its start-up are reported without a target (a change that more than doubles either is explained
in its commit)."""

from __future__ import annotations

import os
import statistics
from collections import Counter

from bench.harness import percentile
from bench.measure import Overhead, Row, Sizes

WALL_FACTOR = 1.25  # wall p50 may exceed the ideal (round trips x RTT) by this factor
TEXT_BYTES_PER_RESULT = 500
TOOLS_LIST_BYTES = 10 * 1024  # every read tool: search, get, thread, attachment, labels, changes


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def _usual(values: list[int]) -> int:
    """The count most runs had (a stray retry shows up in max, not here)."""
    return Counter(values).most_common(1)[0][0]


def scenario_lines(rows: list[Row], naive: Row, rtt_ms: float) -> list[str]:
    head = (
        f"{'scenario':<24}{'requests':<22}{'RT':>4}{'new conn':>10}{'p50 ms':>9}{'p95 ms':>9}"
        f"{'ideal ms':>10}{'p50/ideal':>11}  target"
    )
    lines = [head, "-" * len(head)]
    for row in [*rows, naive]:
        p50, p95 = statistics.median(row.walls_ms), percentile(row.walls_ms, 0.95)
        ideal = row.ideal_trips * rtt_ms
        ratio = p50 / ideal if ideal else float("nan")
        trips = _usual(row.trips)
        requests = f"{_usual(row.requests)}: {row.shape}"
        if row is naive:
            target = "baseline (no target)"
        else:
            ok = max(row.trips) == row.ideal_trips and ratio <= WALL_FACTOR
            target = f"{row.ideal_trips} RT, <= {WALL_FACTOR}x ideal: {_verdict(ok)}"
        lines.append(
            f"{row.name:<24}{requests:<22}{trips:>4}{row.new_connections:>10}{p50:>9.1f}{p95:>9.1f}"
            f"{ideal:>10.0f}{ratio:>11.2f}  {target}"
        )
    return lines


def figure_lines(
    overhead: dict[str, Overhead], cold_start_s: float, cold_runs: int, sizes: Sizes, tools_list_bytes: int
) -> list[str]:
    lines = [f"{'figure':<46}{'value':<34}target", "-" * 110]
    for name, figures in overhead.items():
        if figures.cpu_ms:
            p50, p95 = statistics.median(figures.cpu_ms), percentile(figures.cpu_ms, 0.95)
            lines.append(
                f"{'server CPU per call, ' + name:<46}{f'p50 {p50:.2f} / p95 {p95:.2f} ms':<34}- (reported, no target)"
            )
        outside = figures.outside_gmail_ms
        lines.append(
            f"{'  latency outside Gmail (upper bound)':<46}"
            f"{f'p50 {statistics.median(outside):.2f} / p95 {percentile(outside, 0.95):.2f} ms':<34}-"
        )
    lines.append(f"{f'cold start (median of {cold_runs})':<46}{f'{cold_start_s:.3f} s':<34}- (reported, no target)")
    per_result = sizes.text_bytes / max(sizes.enriched, 1)
    lines.append(
        f"{'text content per enriched result (search 10)':<46}"
        f"{f'{per_result:.0f} B (widest {sizes.max_result_bytes} B)':<34}"
        f"<= {TEXT_BYTES_PER_RESULT} B: {_verdict(per_result <= TEXT_BYTES_PER_RESULT)}"
    )
    lines.append(f"{'text content, whole answer (search 10)':<46}{f'{sizes.text_bytes} B':<34}-")
    clean = sizes.nulls_in_structured == 0 and sizes.thread_ids_in_text == 0
    lines.append(
        f"{'structuredContent (search 10)':<46}{f'{sizes.structured_bytes} B':<34}"
        f"no nulls ({sizes.nulls_in_structured}), no thread ids in text ({sizes.thread_ids_in_text}): "
        f"{_verdict(clean)}"
    )
    lines.append(
        f"{'tools/list answer':<46}{f'{tools_list_bytes} B':<34}"
        f"<= {TOOLS_LIST_BYTES} B: {_verdict(tools_list_bytes <= TOOLS_LIST_BYTES)}"
    )
    return lines


def print_report(
    *,
    rtt_ms: float,
    runs: int,
    mode: str,
    rows: list[Row],
    naive: Row,
    overhead: dict[str, Overhead],
    cold_start_s: float,
    cold_runs: int,
    sizes: Sizes,
    tools_list_bytes: int,
    elapsed_s: float,
) -> bool:
    """Prints the tables; returns whether every target passed."""
    load = f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "?"
    print(
        f"Gmail MCP server over stdio (MCP {mode}), emulator RTT {rtt_ms:g} ms, demo mailbox, "
        f"{runs} timed calls per scenario; {os.cpu_count()} CPUs, load average {load} at the end\n"
        "RT = sequential round trips seen by the emulator; ideal = the task's limit (search: list + batch = 2 RT, "
        "get: 1 RT) x RTT\n"
    )
    lines = scenario_lines(rows, naive, rtt_ms)
    figures = figure_lines(overhead, cold_start_s, cold_runs, sizes, tools_list_bytes)
    print("\n".join(lines))
    print()
    print("\n".join(figures))
    failed = [line.split("  ")[0].strip() for line in [*lines, *figures] if line.endswith(_verdict(False))]
    print(f"\n(benchmark took {elapsed_s:.0f} s)")
    if failed:
        print(f"FAILED targets: {'; '.join(failed)}")
    return not failed
