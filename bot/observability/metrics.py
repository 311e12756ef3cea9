"""Prometheus text-format metrics, kept in one injected `Metrics` instance (no globals)."""

from __future__ import annotations

import math
import threading
from collections import defaultdict

# upstream calls take from tens of ms to tens of seconds
LATENCY_BUCKETS = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

_Labels = tuple[tuple[str, str], ...]


def _label_value(value: str) -> str:
    # the exposition format's three escapes: a raw newline would end the sample line
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _fmt_value(value: float) -> str:
    """Every digit (`:g` would show 1234567 as 1.23457e+06): integers plain, else repr."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


def _fmt_labels(labels: _Labels) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_label_value(v)}"' for k, v in labels) + "}"


class Metrics:
    """Counters, gauges, the upstream latency histogram and unlabelled histograms (the
    event loop's lag); `render()` gives Prometheus exposition text."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[str, dict[_Labels, float]] = defaultdict(lambda: defaultdict(float))
        self._hist_counts: dict[_Labels, list[int]] = {}
        self._hist_sum: dict[_Labels, float] = defaultdict(float)
        self._gauges: dict[str, dict[_Labels, float]] = defaultdict(dict)
        #: histograms without labels: name -> (bounds, counts per bound and +Inf, sum)
        self._plain_hists: dict[str, tuple[tuple[float, ...], list[int], list[float]]] = {}
        self._help = {
            "gdocs_requests_total": "Slack requests handled, by kind and outcome.",
            "gdocs_cache_total": "Cache lookups, by cache and result (hit or miss).",
            "gdocs_quota_fallbacks_total": (
                "Questions answered by search because answer_query quota was spent."
            ),
            "gdocs_upstream_calls_total": "Upstream MCP tool calls, by server, tool and outcome.",
        }

    def _inc(self, name: str, labels: _Labels, amount: float = 1.0) -> None:
        with self._lock:
            self._counters[name][labels] += amount

    def count(self, name: str, help_text: str, amount: float = 1.0, **labels: str) -> None:
        """Add to counter `name` (created with `help_text` on first use)."""
        with self._lock:
            self._help.setdefault(name, help_text)
            self._counters[name][tuple(sorted(labels.items()))] += float(amount)

    def set_counter(self, name: str, help_text: str, value: float, **labels: str) -> None:
        """Set counter `name` for `labels` to a total kept elsewhere (it only goes up)."""
        with self._lock:
            self._help.setdefault(name, help_text)
            self._counters[name][tuple(sorted(labels.items()))] = float(value)

    def set_gauge(self, name: str, help_text: str, value: float, **labels: str) -> None:
        """Set gauge `name` for `labels` to `value`."""
        with self._lock:
            self._help.setdefault(name, help_text)
            self._gauges[name][tuple(sorted(labels.items()))] = float(value)

    def declare_histogram(self, name: str, help_text: str, buckets: tuple[float, ...]) -> None:
        """Histogram `name`, shown in /metrics with zero counts until its first observation
        (a scrape right after start-up sees the series instead of nothing)."""
        with self._lock:
            self._help.setdefault(name, help_text)
            self._plain_hists.setdefault(name, (buckets, [0] * (len(buckets) + 1), [0.0]))

    def observe(self, name: str, help_text: str, value: float, buckets: tuple[float, ...]) -> None:
        """One observation of histogram `name` (created with `help_text` and `buckets`)."""
        self.declare_histogram(name, help_text, buckets)
        with self._lock:
            bounds, counts, total = self._plain_hists[name]
            for i, bound in enumerate(bounds):
                if value <= bound:
                    counts[i] += 1
            counts[-1] += 1
            total[0] += value

    def histogram_count(self, name: str) -> int:
        """How many observations histogram `name` has had (for tests)."""
        with self._lock:
            hist = self._plain_hists.get(name)
            return hist[1][-1] if hist is not None else 0

    def gauge_value(self, name: str, **labels: str) -> float | None:
        with self._lock:
            return self._gauges.get(name, {}).get(tuple(sorted(labels.items())))

    def request(self, kind: str, outcome: str) -> None:
        """One Slack command/event/action finished (`outcome`: ok, error code, ignored…)."""
        self._inc("gdocs_requests_total", (("kind", kind), ("outcome", outcome)))

    def cache(self, cache: str, hit: bool) -> None:
        self._inc("gdocs_cache_total", (("cache", cache), ("result", "hit" if hit else "miss")))

    def quota_fallback(self) -> None:
        self._inc("gdocs_quota_fallbacks_total", ())

    def upstream(self, server: str, tool: str, outcome: str, seconds: float) -> None:
        """One upstream tool call (retries included) and how long it took."""
        labels = (("server", server), ("tool", tool), ("outcome", outcome))
        self._inc("gdocs_upstream_calls_total", labels)
        hist_labels = (("server", server), ("tool", tool))
        with self._lock:
            counts = self._hist_counts.setdefault(hist_labels, [0] * (len(LATENCY_BUCKETS) + 1))
            for i, bound in enumerate(LATENCY_BUCKETS):
                if seconds <= bound:
                    counts[i] += 1
            counts[-1] += 1
            self._hist_sum[hist_labels] += seconds

    def counter_value(self, name: str, **labels: str) -> float:
        """Sum of a counter over series matching `labels` (for tests and /readyz)."""
        with self._lock:
            series = self._counters.get(name, {})
            return sum(
                v for k, v in series.items() if all((lk, lv) in k for lk, lv in labels.items())
            )

    def render(self) -> str:
        out: list[str] = []
        with self._lock:
            for name, series in sorted(self._counters.items()):
                out.append(f"# HELP {name} {self._help.get(name, name)}")
                out.append(f"# TYPE {name} counter")
                for labels, value in sorted(series.items()):
                    out.append(f"{name}{_fmt_labels(labels)} {_fmt_value(value)}")
            for name, gauges in sorted(self._gauges.items()):
                out.append(f"# HELP {name} {self._help.get(name, name)}")
                out.append(f"# TYPE {name} gauge")
                for labels, value in sorted(gauges.items()):
                    out.append(f"{name}{_fmt_labels(labels)} {_fmt_value(value)}")
            hname = "gdocs_upstream_latency_seconds"
            out.append(f"# HELP {hname} Upstream MCP tool call latency, retries included.")
            out.append(f"# TYPE {hname} histogram")
            for labels, counts in sorted(self._hist_counts.items()):
                for bound, count in zip(LATENCY_BUCKETS, counts, strict=False):
                    le = (*labels, ("le", f"{bound:g}"))
                    out.append(f"{hname}_bucket{_fmt_labels(le)} {count}")
                inf = (*labels, ("le", "+Inf"))
                out.append(f"{hname}_bucket{_fmt_labels(inf)} {counts[-1]}")
                out.append(f"{hname}_sum{_fmt_labels(labels)} {_fmt_value(self._hist_sum[labels])}")
                out.append(f"{hname}_count{_fmt_labels(labels)} {counts[-1]}")
            for name, (bounds, counts, total) in sorted(self._plain_hists.items()):
                out.append(f"# HELP {name} {self._help.get(name, name)}")
                out.append(f"# TYPE {name} histogram")
                for bound, count in zip(bounds, counts, strict=False):
                    out.append(f'{name}_bucket{{le="{bound:g}"}} {count}')
                out.append(f'{name}_bucket{{le="+Inf"}} {counts[-1]}')
                out.append(f"{name}_sum {_fmt_value(total[0])}")
                out.append(f"{name}_count {counts[-1]}")
        return "\n".join(out) + "\n"
