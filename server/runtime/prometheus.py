"""The design document's metrics in Prometheus text format, for `/metrics` in HTTP mode (`prometheus-client`).

Each account's `Metrics` is an `ExportedMetrics`: it keeps the in-process summary (the shutdown log line) and
feeds the same events to counters and histograms labelled by account. Exposed series:

    gmail_mcp_tool_calls_total{tool,account,outcome}     outcome: ok, or the error category (auth_error, ...)
    gmail_mcp_tool_latency_seconds{tool,account}          histogram
    gmail_mcp_search_pages{account}                       histogram of messages.list pages per search
    gmail_mcp_gmail_rate_limited_total{account}           429 / rate-limit answers from Gmail
    gmail_mcp_enrichment_attempts_total{account}          search results enriched with sender/subject/date
    gmail_mcp_enrichment_failures_total{account}          ... whose enrichment failed
    gmail_mcp_cache_total{account,cache,outcome}          cache: search or summary; outcome: hits, misses, refreshed
    gmail_mcp_history_checks_total{account}               history.list requests that validated cached answers
    gmail_mcp_http_auth_failures_total{reason}            missing or wrong credential
    gmail_mcp_http_requests_in_flight                     POST requests being served

Success rate per tool: `sum by (tool) (rate(gmail_mcp_tool_calls_total{outcome="ok"}[5m])) /
sum by (tool) (rate(gmail_mcp_tool_calls_total[5m]))`. A registry of its own, not the process-global one, so
two servers in one process (tests) never share counters.
"""

from __future__ import annotations

from typing import Any

from server.runtime.observability import Metrics

LATENCY_BUCKETS_S = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
PAGE_BUCKETS = (1, 2, 3, 5, 10)


class Exporter:
    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry()
        by_account: dict[str, Any] = {"registry": self.registry, "labelnames": ["account"]}
        self.calls = Counter(
            "gmail_mcp_tool_calls",
            "Tool calls by tool, account and outcome (ok or the error category).",
            ["tool", "account", "outcome"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "gmail_mcp_tool_latency_seconds",
            "Tool call latency, from arguments received to result ready.",
            ["tool", "account"],
            buckets=LATENCY_BUCKETS_S,
            registry=self.registry,
        )
        self.pages = Histogram(
            "gmail_mcp_search_pages", "messages.list pages fetched per search.", buckets=PAGE_BUCKETS, **by_account
        )
        self.rate_limited = Counter("gmail_mcp_gmail_rate_limited", "Rate-limit answers from Gmail.", **by_account)
        self.enrich_attempts = Counter(
            "gmail_mcp_enrichment_attempts", "Search results enriched with sender, subject and date.", **by_account
        )
        self.enrich_failures = Counter(
            "gmail_mcp_enrichment_failures", "Search results whose enrichment failed.", **by_account
        )
        self.cache = Counter(
            "gmail_mcp_cache",
            "Cache outcomes by account, cache (search, summary) and outcome (hits, misses, refreshed).",
            ["account", "cache", "outcome"],
            registry=self.registry,
        )
        self.history_checks = Counter(
            "gmail_mcp_history_checks", "history.list requests that validated cached answers.", **by_account
        )
        self.auth_failures = Counter(
            "gmail_mcp_http_auth_failures",
            "Failed HTTP authentications (missing or wrong credential).",
            ["reason"],
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "gmail_mcp_http_requests_in_flight", "POST requests being served.", registry=self.registry
        )

    def metrics_for(self, account: str) -> ExportedMetrics:
        return ExportedMetrics(self, account)

    def render(self) -> tuple[bytes, str]:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class ExportedMetrics(Metrics):
    """One account's metrics: the in-process summary, and the same events as Prometheus series."""

    def __init__(self, exporter: Exporter, account: str) -> None:
        super().__init__()
        self._exporter = exporter
        self._account = account

    def record_call(self, tool: str, *, ok: bool, latency_ms: float, category: str | None = None) -> None:
        super().record_call(tool, ok=ok, latency_ms=latency_ms, category=category)
        outcome = "ok" if ok else (category or "error")
        self._exporter.calls.labels(tool, self._account, outcome).inc()
        self._exporter.latency.labels(tool, self._account).observe(latency_ms / 1000)

    def record_pages(self, pages: int) -> None:
        super().record_pages(pages)
        self._exporter.pages.labels(self._account).observe(pages)

    def record_rate_limited(self) -> None:
        super().record_rate_limited()
        self._exporter.rate_limited.labels(self._account).inc()

    def record_enrichment(self, *, attempted: int, failed: int) -> None:
        super().record_enrichment(attempted=attempted, failed=failed)
        self._exporter.enrich_attempts.labels(self._account).inc(attempted)
        self._exporter.enrich_failures.labels(self._account).inc(failed)

    def record_cache(self, cache: str, **counts: int) -> None:
        super().record_cache(cache, **counts)
        for outcome, count in counts.items():
            self._exporter.cache.labels(self._account, cache, outcome).inc(count)

    def record_history_check(self) -> None:
        super().record_history_check()
        self._exporter.history_checks.labels(self._account).inc()
