"""The bot's Prometheus metrics, on a `CollectorRegistry` of its own (no globals: tests build
several bots in one process)."""

from __future__ import annotations

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.gc_collector import GCCollector

# a `_created` series beside every counter only doubles the scrape
prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]

# upstream calls take from tens of ms to tens of seconds
LATENCY_BUCKETS = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._counters: dict[str, Counter] = {}
        self._gauges: dict[str, Gauge] = {}
        GCCollector(registry=self.registry)  # python_gc_collections_total and others
        self._latency = Histogram(
            "gdocs_upstream_latency_seconds",
            "Upstream MCP tool call latency, retries included.",
            ("server", "tool"),
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )

    # called on the event loop's thread only: the first use registers without a lock
    def count(self, name: str, help_text: str, amount: float = 1.0, **labels: str) -> None:
        """Add to counter `name` (created with `help_text` and these label names on first use)."""
        if name not in self._counters:
            self._counters[name] = Counter(name, help_text, sorted(labels), registry=self.registry)
        counter = self._counters[name]
        (counter.labels(**labels) if labels else counter).inc(amount)

    def set_gauge(self, name: str, help_text: str, value: float, **labels: str) -> None:
        if name not in self._gauges:
            self._gauges[name] = Gauge(name, help_text, sorted(labels), registry=self.registry)
        gauge = self._gauges[name]
        (gauge.labels(**labels) if labels else gauge).set(value)

    def request(self, kind: str, outcome: str) -> None:
        """One Slack command/event/action finished (`outcome`: ok, error code, ignored…)."""
        help_text = "Slack requests handled, by kind and outcome."
        self.count("gdocs_requests_total", help_text, kind=kind, outcome=outcome)

    def cache(self, cache: str, hit: bool) -> None:
        help_text = "Cache lookups, by cache and result (hit or miss)."
        self.count("gdocs_cache_total", help_text, cache=cache, result="hit" if hit else "miss")

    def quota_fallback(self) -> None:
        help_text = "Questions answered by search because answer_query quota was spent."
        self.count("gdocs_quota_fallbacks_total", help_text)

    def upstream(self, server: str, tool: str, outcome: str, seconds: float) -> None:
        """One upstream tool call (retries included) and how long it took."""
        help_text = "Upstream MCP tool calls, by server, tool and outcome."
        self.count(
            "gdocs_upstream_calls_total", help_text, server=server, tool=tool, outcome=outcome
        )
        self._latency.labels(server=server, tool=tool).observe(seconds)

    def counter_value(self, name: str, **labels: str) -> float:
        """Sum of a counter over the series matching `labels` (for tests and /readyz)."""
        return sum(
            sample.value
            for family in self.registry.collect()
            for sample in family.samples
            if sample.name == name and labels.items() <= sample.labels.items()
        )

    def render(self) -> str:
        return generate_latest(self.registry).decode()
