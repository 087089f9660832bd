"""The benchmark's bookkeeping (pure functions): round trips from the emulator log, percentiles, request shapes.

No timing is asserted anywhere; these only pin how bench/search_bench.py counts.
"""

from __future__ import annotations

from bench.harness import describe_requests, percentile, round_trips


def entry(path: str, start: float, duration_ms: float, batch_parts: int | None = None) -> dict:
    return {"path": path, "started_at": start, "duration_ms": duration_ms, "batch_parts": batch_parts}


def test_overlapping_requests_are_one_round_trip_sequential_ones_are_not():
    sequential = [entry("/gmail/v1/users/me/messages", 0.0, 100), entry("/batch/gmail/v1", 0.101, 100, 10)]
    parallel = [entry(f"/gmail/v1/users/me/messages/{n}", 0.001 * n, 100) for n in range(10)]
    assert round_trips(sequential) == 2
    assert round_trips(parallel) == 1
    assert round_trips([*sequential, entry("/gmail/v1/users/me/messages/x", 0.05, 10)]) == 2
    assert round_trips([]) == 0


def test_request_shapes_read_like_the_table():
    gets = [entry(f"/gmail/v1/users/me/messages/{n}", n, 1) for n in range(10)]
    assert describe_requests([entry("/gmail/v1/users/me/messages", 0, 1), *gets]) == "list + 10 x get"
    assert describe_requests([entry("/token", 0, 1), entry("/batch/gmail/v1", 1, 1, 10)]) == "token + batch(10)"


def test_nearest_rank_percentiles():
    values = list(range(1, 21))
    assert percentile(values, 0.95) == 19 and percentile(values, 0.5) == 10 and percentile([7.0], 0.95) == 7.0


def _report(cpu_ms: float, capsys, *, wall_ms: float = 210.0, cold_start_s: float = 0.5) -> tuple[bool, str]:
    from bench.measure import Overhead, Row, Sizes
    from bench.report import print_report

    row = Row("search", 2, walls_ms=[wall_ms] * 20, requests=[2] * 20, trips=[2] * 20, shape="list + batch")
    naive = Row("naive", 2, walls_ms=[1100.0] * 20, requests=[11] * 20, trips=[11] * 20, shape="list + 10 gets")
    passed = print_report(
        rtt_ms=100,
        runs=20,
        mode="legacy",
        rows=[row],
        naive=naive,
        overhead={"search": Overhead(cpu_ms=[cpu_ms] * 50, outside_gmail_ms=[3.0] * 50)},
        cold_start_s=cold_start_s,
        cold_runs=5,
        sizes=Sizes(2900, 10, 360, 3900, 0, 0),
        tools_list_bytes=5000,
        elapsed_s=1,
    )
    return passed, capsys.readouterr().out


def test_the_report_says_whether_every_target_passed(capsys):
    """search_bench exits non-zero exactly when a line of its report reads FAIL."""
    passed, out = _report(3.0, capsys)
    assert passed and "FAIL" not in out
    passed, out = _report(3.0, capsys, wall_ms=300.0)  # 1.5x the ideal 2 round trips: what a user waits for
    assert not passed and "FAILED targets: search" in out


def test_server_cpu_and_start_up_are_reported_without_a_target(capsys):
    passed, out = _report(60.0, capsys, cold_start_s=9.0)
    assert passed and "FAIL" not in out
    assert "p50 60.00 / p95 60.00 ms" in out and "9.000 s" in out and out.count("(reported, no target)") == 2
