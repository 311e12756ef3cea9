"""/metrics speaks the Prometheus text format: a cumulative latency histogram, escaped label
values that cannot break a line, and counters that add up."""

from __future__ import annotations

import re

from prometheus_client.parser import text_string_to_metric_families

from bot.observability.metrics import Metrics

HIST = "gdocs_upstream_latency_seconds"
# one sample: name, optional {labels} (quoted values with \\, \" and \n escapes), a value
_SAMPLE = re.compile(
    r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
    r'(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")*\})? \S+$'
)


def _samples(text: str, prefix: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(prefix)]


def _values(text: str, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """Series of sample `name` as a Prometheus parser reads the text: labels -> value."""
    return {
        tuple(sorted(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name
    }


def _labels(**labels: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(labels.items()))


DK_SEARCH = {"server": "developer_knowledge", "tool": "search_documents"}


def test_latency_histogram_renders_cumulative_buckets_sum_and_count() -> None:
    """Each `le` bucket counts every call at or under it, `+Inf` and `_count` count them all,
    and `_sum` keeps the exact total."""
    metrics = Metrics()
    # binary fractions, so the exact sum is known: 107.4140625
    for seconds in (0.0390625, 0.1875, 0.1875, 7.0, 100.0):
        metrics.upstream("developer_knowledge", "search_documents", "ok", seconds)
    text = metrics.render()

    cumulative = [
        ("0.025", 0),
        ("0.05", 1),
        ("0.1", 1),
        ("0.25", 3),
        ("0.5", 3),
        ("1.0", 3),
        ("2.5", 3),
        ("5.0", 3),
        ("10.0", 4),
        ("30.0", 4),
        ("60.0", 4),
        ("+Inf", 5),
    ]
    assert {_labels(**DK_SEARCH, le=le): count for le, count in cumulative} == _values(
        text, f"{HIST}_bucket"
    )
    assert {_labels(**DK_SEARCH): 107.4140625} == _values(text, f"{HIST}_sum")
    assert {_labels(**DK_SEARCH): 5} == _values(text, f"{HIST}_count")
    assert f"# TYPE {HIST} histogram" in text.splitlines()


def test_histogram_series_are_kept_per_server_and_tool() -> None:
    """Another tool's calls land in their own series, not in the first one's buckets."""
    metrics = Metrics()
    metrics.upstream("developer_knowledge", "search_documents", "ok", 0.2)
    metrics.upstream("pay", "search_documentation", "error", 0.2)
    text = metrics.render()
    assert {
        _labels(**DK_SEARCH): 1,
        _labels(server="pay", tool="search_documentation"): 1,
    } == _values(text, f"{HIST}_count")


def test_label_values_escape_quotes_backslashes_and_newlines() -> None:
    """`"`, `\\` and a newline in a label value are escaped as the format says, so a hostile
    value can neither end the label nor start a forged sample on the next line."""
    metrics = Metrics()
    metrics.request('a"b\\c\nfake_metric 1', "ok")
    text = metrics.render()

    (line,) = _samples(text, "gdocs_requests_total{")
    assert line.startswith('gdocs_requests_total{kind="a\\"b\\\\c\\nfake_metric 1",outcome="ok"} 1')
    assert {_labels(kind='a"b\\c\nfake_metric 1', outcome="ok"): 1} == _values(
        text, "gdocs_requests_total"
    )
    assert [] == _samples(text, "fake_metric")
    for sample in text.splitlines():
        assert sample.startswith("#") or _SAMPLE.match(sample), sample


def test_counters_add_up_per_series_and_across_series() -> None:
    """Repeated events sum in their series; `counter_value` sums the series that match."""
    metrics = Metrics()
    for _ in range(3):
        metrics.request("command", "ok")
    metrics.request("command", "quota")
    metrics.request("mention", "ok")
    metrics.cache("answer", hit=True)
    metrics.cache("answer", hit=True)
    metrics.cache("answer", hit=False)

    text = metrics.render()
    requests = _values(text, "gdocs_requests_total")
    assert 3 == requests[_labels(kind="command", outcome="ok")]
    assert 1 == requests[_labels(kind="command", outcome="quota")]
    assert 2 == _values(text, "gdocs_cache_total")[_labels(cache="answer", result="hit")]
    assert 4 == metrics.counter_value("gdocs_requests_total", kind="command")
    assert 4 == metrics.counter_value("gdocs_requests_total", outcome="ok")
    assert 5 == metrics.counter_value("gdocs_requests_total")
    assert 0 == metrics.counter_value("gdocs_quota_fallbacks_total")


def test_large_totals_render_every_digit() -> None:
    """A long-running bot's totals keep every digit, not rounded exponents (1.23457e+06)."""
    metrics = Metrics()
    for _ in range(3):
        metrics.upstream("developer_knowledge", "answer_query", "ok", 411_522.25)
    sums = _values(metrics.render(), f"{HIST}_sum")
    assert {_labels(server="developer_knowledge", tool="answer_query"): 1234566.75} == sums


def test_gauges_render_their_latest_value_and_counters_add_up() -> None:
    """A gauge shows the last value set for its labels; a named counter sums what was added."""
    metrics = Metrics()
    metrics.set_gauge("gdocs_answers_left_today", "Answers left.", 50)
    metrics.set_gauge("gdocs_answers_left_today", "Answers left.", 47)
    metrics.count("gdocs_quota_refusals_total", "429s.", limit="minute")
    metrics.count("gdocs_quota_refusals_total", "429s.", limit="minute")
    text = metrics.render()
    assert "# TYPE gdocs_answers_left_today gauge" in text
    assert {(): 47} == _values(text, "gdocs_answers_left_today")
    assert {_labels(limit="minute"): 2} == _values(text, "gdocs_quota_refusals_total")
    assert metrics.registry.get_sample_value("gdocs_answers_left_today") == 47
    assert all(_SAMPLE.match(line) for line in text.splitlines() if not line.startswith("#"))
