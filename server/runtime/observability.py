"""JSON-lines logging on stderr, value masking, and in-process metrics for the design document's indicators.

stdout belongs to the MCP protocol, so every log line goes to stderr. Secrets never reach a log call: callers
log ids, counts and categories (never message text); `scrub` masks addresses and token-like strings in free text.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from typing import Any

LOGGER_NAME = "gmail_mcp"
MESSAGE_LOGGERS = ("mcp", "sse_starlette", "httpx", "httpcore", "googleapiclient")  # see setup_logging
_STANDARD_ATTRS = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}
_EMAIL = re.compile(r"([A-Za-z0-9._%+-])([A-Za-z0-9._%+-]*)(@[A-Za-z0-9.-]+\.[A-Za-z]{2,})")
_BEARER = re.compile(r"(?i)(bearer\s+|access_token[\"'=: ]+|refresh_token[\"'=: ]+)[A-Za-z0-9._\-/+=]{8,}")


def mask_email(text: str) -> str:
    """`example@gmail.com` -> `ex***@gmail.com` (one letter kept for very short local parts)."""

    def _mask(match: re.Match[str]) -> str:
        local = match.group(1) + match.group(2)
        keep = local[:2] if len(local) > 3 else local[:1]
        return f"{keep}***{match.group(3)}"

    return _EMAIL.sub(_mask, text)


def scrub(text: str) -> str:
    """Last line of defence for free text (exception messages): masks addresses and bearer-looking tokens.

    Every string of every log line passes here, and almost none holds either: a literal `_` (both token names)
    or `bearer`, and an `@`, are needed for a match at all, so the patterns run only where one could."""
    if "_" in text or "bearer" in text.lower():
        text = _BEARER.sub(lambda m: m.group(1) + "[redacted]", text)
    return mask_email(text) if "@" in text else text


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "event": scrub(record.getMessage()),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS and not key.startswith("_"):
                entry[key] = scrub(value) if isinstance(value, str) else value
        if record.exc_info:
            entry["exception"] = scrub(self.formatException(record.exc_info))
        return json.dumps(entry, ensure_ascii=False, default=str)


def setup_logging(level: str = "INFO") -> logging.Logger:
    """Routes the project's and the libraries' logs to stderr as JSON lines (idempotent)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)  # libraries: warnings and up
    # Python warnings (e.g. google-api-core's FutureWarning about old interpreters) would otherwise be printed
    # raw to stderr, breaking the one-JSON-object-per-line log.
    logging.captureWarnings(True)
    logger = logging.getLogger(LOGGER_NAME)
    logger.setLevel(logging.CRITICAL + 1 if level == "QUIET" else getattr(logging, level, logging.INFO))
    quiet = logging.CRITICAL + 1
    if level == "QUIET":
        root.setLevel(quiet)
    # Pinned, not inherited, so nothing that later lowers the root (a library's basicConfig, an embedding app)
    # lets them through: the MCP SDK and sse-starlette log whole JSON-RPC messages at DEBUG (tool results: mail
    # bodies), httpx/httpcore and googleapiclient log request URLs (queries: personal data) at INFO/DEBUG.
    for name in MESSAGE_LOGGERS:
        logging.getLogger(name).setLevel(quiet if level == "QUIET" else logging.WARNING)
    return logger


def get_logger(name: str = "") -> logging.Logger:
    return logging.getLogger(f"{LOGGER_NAME}.{name}" if name else LOGGER_NAME)


def _with_hit_rate(counts: dict[str, int]) -> dict[str, float | int]:
    asked = sum(counts.values())
    return {**counts, "hit_rate": round(counts.get("hits", 0) / asked, 4) if asked else 0.0}


def _percentile(sorted_values: list[float], fraction: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(fraction * (len(sorted_values) - 1))))
    return sorted_values[index]


LATENCY_WINDOW = 10_000  # latencies kept per tool for the percentiles: a long-running server must not grow


class Metrics:
    """Counters for the design document's metrics; thread-safe, summarised once at shutdown. The alert
    thresholds (`alerts.py`) watch the same events as they happen.

    Percentiles are over the last LATENCY_WINDOW calls of each tool; counts cover the whole run.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        from server.runtime.alerts import AlertMonitor

        self.alerts = AlertMonitor(get_logger("alerts"), clock)
        self._lock = threading.Lock()
        self._calls: dict[str, int] = defaultdict(int)
        self._successes: dict[str, int] = defaultdict(int)
        self._latencies: dict[str, deque[float]] = defaultdict(lambda: deque(maxlen=LATENCY_WINDOW))
        self._error_categories: dict[str, int] = defaultdict(int)
        self._pages: dict[int, int] = defaultdict(int)
        self._rate_limited = 0
        self._enriched = 0
        self._enrichment_failures = 0
        self._cache: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self._history_checks = 0
        self._alerts_of_parts = {"rate_limited": 0, "search_p95": 0}  # alerts started in `combined` parts

    def record_call(self, tool: str, *, ok: bool, latency_ms: float, category: str | None = None) -> None:
        with self._lock:
            self._calls[tool] += 1
            self._successes[tool] += ok
            self._latencies[tool].append(latency_ms)
            if category:
                self._error_categories[category] += 1
        if tool == "gmail_search_messages" and ok:
            self.alerts.search_finished(latency_ms)

    def record_pages(self, pages: int) -> None:
        with self._lock:
            self._pages[pages] += 1

    def record_rate_limited(self) -> None:
        with self._lock:
            self._rate_limited += 1
        self.alerts.rate_limited()

    def record_cache(self, cache: str, **counts: int) -> None:
        """Cache outcomes: `hits`, `misses`, and for searches `refreshed` (a cached page a change outdated)."""
        with self._lock:
            for outcome, count in counts.items():
                self._cache[cache][outcome] += count

    def record_history_check(self) -> None:
        with self._lock:
            self._history_checks += 1

    def record_enrichment(self, *, attempted: int, failed: int) -> None:
        with self._lock:
            self._enriched += attempted
            self._enrichment_failures += failed

    @classmethod
    def combined(cls, parts: Iterable[Metrics]) -> Metrics:
        """One Metrics holding the sum of several (the per-account ones): what the aggregate summary reports."""
        total = cls()
        for part in parts:
            with part._lock:
                for tool, calls in part._calls.items():
                    total._calls[tool] += calls
                    total._successes[tool] += part._successes[tool]
                    total._latencies[tool].extend(part._latencies[tool])
                for category, count in part._error_categories.items():
                    total._error_categories[category] += count
                for pages, count in part._pages.items():
                    total._pages[pages] += count
                total._rate_limited += part._rate_limited
                total._enriched += part._enriched
                total._enrichment_failures += part._enrichment_failures
                for cache, counts in part._cache.items():
                    for outcome, count in counts.items():
                        total._cache[cache][outcome] += count
                total._history_checks += part._history_checks
            for alert, started in part._alerts_started().items():
                total._alerts_of_parts[alert] += started
        return total

    def _alerts_started(self) -> dict[str, int]:
        return {
            "rate_limited": self.alerts.rate_limit.started + self._alerts_of_parts["rate_limited"],
            "search_p95": self.alerts.slow_search.started + self._alerts_of_parts["search_p95"],
        }

    def summary(self) -> dict[str, Any]:
        with self._lock:
            tools: dict[str, Any] = {}
            for tool, calls in self._calls.items():
                latencies = sorted(self._latencies[tool])
                tools[tool] = {
                    "calls": calls,
                    "success_rate": round(self._successes[tool] / calls, 4),
                    "latency_ms": {
                        "p50": round(_percentile(latencies, 0.50), 1),
                        "p95": round(_percentile(latencies, 0.95), 1),
                        "p99": round(_percentile(latencies, 0.99), 1),
                    },
                }
            return {
                "tools": tools,
                "errors_by_category": dict(self._error_categories),
                "pages_per_search": {str(k): v for k, v in sorted(self._pages.items())},
                "rate_limited_responses": self._rate_limited,
                "enrichment": {
                    "attempted": self._enriched,
                    "failed": self._enrichment_failures,
                    "failure_rate": round(self._enrichment_failures / self._enriched, 4) if self._enriched else 0.0,
                },
                "cache": {name: _with_hit_rate(counts) for name, counts in sorted(self._cache.items())},
                "history_checks": self._history_checks,
                "alerts_started": self._alerts_started(),
            }
