"""Test controls: injected faults, the per-user concurrency limit, and the request log.

A fault applies to the next `count` requests it matches. Matching is on the HTTP method and a regex searched
in the path (batch parts are matched by their own inner path, `/token` by "/token"). Without `path_regex` a
fault matches Gmail API calls only (`^(/upload)?/gmail/v1/`: single requests and batch parts, not the outer
batch POST and not `/token`), except the token-endpoint faults `invalid_grant` and `invalid_rapt`, which default
to `^/token$`. Faults are tried
in the order they were added; the first live match is consumed.

The request log records every outer HTTP request except the control plane itself, so tests and benchmarks can
count round trips and see per-part outcomes of batches.
"""

from __future__ import annotations

import copy
import re
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

HANG_CAP_S = 120.0
LOG_CAP = 50_000  # entries kept; a long demo or benchmark run must not grow without bound
API_PATHS = r"^(/upload)?/gmail/v1/"
TOKEN_PATH = r"^/token$"
_FAULT_KEYS = {
    "match",
    "method",
    "path_regex",
    "count",
    "status",
    "reason",
    "message",
    "retry_after",
    "latency_ms",
    "hang",
    "reset",
    "invalid_grant",
    "invalid_rapt",
}


@dataclass
class Fault:
    """One injected fault; `remaining` counts down as matching requests consume it."""

    id: int
    remaining: int
    method: str | None = None
    path_regex: str = API_PATHS
    status: int | None = None
    reason: str | None = None
    message: str | None = None
    retry_after: str | None = None
    latency_ms: float = 0
    hang_s: float = 0  # 0: no hang; else hang at most this long (or until the client gives up)
    reset: bool = False
    invalid_grant: bool = False
    invalid_rapt: bool = False  # a Workspace organisation's periodic re-authentication (a token-endpoint fault)
    _pattern: re.Pattern[str] | None = field(default=None, repr=False, compare=False)

    def matches(self, method: str, path: str) -> bool:
        if self.method and self.method.upper() != method.upper():
            return False
        if self._pattern is None:
            self._pattern = re.compile(self.path_regex)
        return self._pattern.search(path) is not None

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("_pattern")
        return data


def parse_fault(spec: dict[str, Any], fault_id: int) -> Fault:
    """Validates a fault spec (the JSON of POST /_emulator/faults); ValueError explains what is wrong."""
    unknown = set(spec) - _FAULT_KEYS
    if unknown:
        raise ValueError(f"unknown fault keys: {sorted(unknown)}")
    match = dict(spec.get("match") or {})
    if set(match) - {"method", "path_regex"}:
        raise ValueError("match takes only method and path_regex")
    method = match.get("method", spec.get("method"))
    invalid_grant = bool(spec.get("invalid_grant", False))
    invalid_rapt = bool(spec.get("invalid_rapt", False))
    on_token = invalid_grant or invalid_rapt
    path_regex = match.get("path_regex", spec.get("path_regex")) or (TOKEN_PATH if on_token else API_PATHS)
    try:
        re.compile(path_regex)
    except re.error as exc:
        raise ValueError(f"bad path_regex: {exc}") from exc
    hang = spec.get("hang", False)
    hang_s = 0.0 if hang in (False, None, 0) else HANG_CAP_S if hang is True else float(hang)
    count = int(spec.get("count", 1))
    status = spec.get("status")
    fault = Fault(
        id=fault_id,
        remaining=count,
        method=str(method).upper() if method else None,
        path_regex=str(path_regex),
        status=int(status) if status is not None else None,
        reason=spec.get("reason"),
        message=spec.get("message"),
        retry_after=str(spec["retry_after"]) if spec.get("retry_after") is not None else None,
        latency_ms=float(spec.get("latency_ms") or 0),
        hang_s=min(hang_s, HANG_CAP_S),
        reset=bool(spec.get("reset", False)),
        invalid_grant=invalid_grant,
        invalid_rapt=invalid_rapt,
    )
    if count < 1:
        raise ValueError("count must be >= 1")
    if fault.status is not None and not 400 <= fault.status <= 599:
        raise ValueError("status must be an HTTP error status (400-599)")
    if not (fault.status or fault.latency_ms or fault.hang_s or fault.reset or on_token):
        raise ValueError("a fault needs one of status, latency_ms, hang, reset, invalid_grant, invalid_rapt")
    return fault


class FaultBook:
    """The live faults. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []
        self._next_id = 1

    def add(self, spec: dict[str, Any]) -> Fault:
        with self._lock:
            fault = parse_fault(spec, self._next_id)
            self._next_id += 1
            self._faults.append(fault)
            return copy.copy(fault)

    def take(self, method: str, path: str) -> Fault | None:
        """Consumes one use of the first live fault matching the request, if any."""
        with self._lock:
            for fault in self._faults:
                if fault.remaining > 0 and fault.matches(method, path):
                    fault.remaining -= 1
                    taken = copy.copy(fault)
                    self._faults = [f for f in self._faults if f.remaining > 0]
                    return taken
        return None

    def live(self) -> list[dict[str, Any]]:
        with self._lock:
            return [fault.as_json() for fault in self._faults]

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()


class ConcurrencyGate:
    """Per-user in-flight API request counter; beyond `limit`, requests get 429 like Gmail's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.limit: int | None = None
        self.in_flight = 0
        self.peak = 0

    def set_limit(self, limit: int | None) -> None:
        if limit is not None and limit < 0:
            raise ValueError("limit must be >= 0 or null")
        with self._lock:
            self.limit = limit

    def acquire(self, wanted: int = 1) -> int:
        """Takes up to `wanted` slots and returns how many it got (all of them when there is no limit)."""
        with self._lock:
            granted = wanted if self.limit is None else max(0, min(wanted, self.limit - self.in_flight))
            self.in_flight += granted
            self.peak = max(self.peak, self.in_flight)
            return granted

    def release(self, slots: int) -> None:
        with self._lock:
            self.in_flight -= slots


class RequestLog:
    """Every outer request with its outcome; entries are filled in when the answer is sent. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[dict[str, Any]] = []
        self._seq = 0

    def start(self, method: str, path: str, query: str) -> dict[str, Any]:
        with self._lock:
            self._seq += 1
            entry: dict[str, Any] = {
                "seq": self._seq,
                "method": method,
                "path": path,
                "query": query,
                "status": None,
                "batch_parts": None,
                "parts": [],
                "fault": None,
                "started_at": time.time(),
                "duration_ms": None,
                "_t0": time.perf_counter(),
            }
            self._entries.append(entry)
            if len(self._entries) > LOG_CAP:
                del self._entries[: len(self._entries) - LOG_CAP]
            return entry

    def finish(self, entry: dict[str, Any], status: int | None) -> None:
        with self._lock:
            entry["status"] = status
            entry["duration_ms"] = round((time.perf_counter() - entry["_t0"]) * 1000, 2)

    def add_part(self, entry: dict[str, Any], method: str, path: str, status: int | None) -> None:
        with self._lock:
            entry["parts"].append({"method": method, "path": path, "status": status})

    def entries(self, since: int = 0) -> list[dict[str, Any]]:
        """Copies of the entries with `seq` > since, oldest first."""
        with self._lock:
            return [
                {k: copy.deepcopy(v) for k, v in entry.items() if not k.startswith("_")}
                for entry in self._entries
                if entry["seq"] > since
            ]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
