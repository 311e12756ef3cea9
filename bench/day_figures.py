"""The day scenario's figures, per topology, from what the fakes recorded.

Everything is measured outside the bot: what Slack got (bench/day_slack.py), what the
Developer Knowledge server saw and refused (bench/day_upstream.py), the balancer's
acknowledgement times, /proc for CPU and memory — and, beside it, the bot's own /metrics.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from bench.day import DayRun, Stack
from bench.day_slack import Asked
from bench.day_upstream import Call
from bench.driver import pct, question_key
from bench.replica import metric_sum
from bench.stream import Question

#: a question whose first upstream call came this long after it was sent waited for a
#: per-minute slot (the bot's own path to its first call takes ~5–10 ms; its quota waits,
#: up to ANSWER_QUOTA_WAIT_SECONDS, start at ~0.1 s)
WAITED_SECONDS = 0.05


def _union_within(intervals: list[tuple[float, float]], lo: float, hi: float) -> float:
    """Seconds of [lo, hi] covered by `intervals`."""
    cut = sorted((max(a, lo), min(b, hi)) for a, b in intervals if b > lo and a < hi)
    total, end = 0.0, lo
    for a, b in cut:
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def _timing(asked: Asked, calls: list[Call]) -> tuple[float, float, float | None]:
    """(end to end, upstream seconds on its path, how long it waited before its first
    upstream call — None when it made none), all for the first answer."""
    assert asked.sent is not None
    done = asked.answers[0].at
    mine = [c for c in calls if c.arrived < done and c.ready > asked.sent]
    upstream = _union_within([(c.arrived, c.ready) for c in mine], asked.sent, done)
    first = min((c.arrived for c in mine if c.arrived >= asked.sent), default=None)
    return done - asked.sent, upstream, None if first is None else first - asked.sent


def _reuse(stream: list[Question], stack: Stack) -> dict[int, str]:
    """Generated answers that spent no answer_query call of their own, by how: from the cache
    after an earlier asking of the same words (exact) or of a form-only paraphrase
    (normalised), or sharing a call in flight (in_flight); and fresh ones."""
    by_idx = {q.idx: q for q in stream}
    calls = defaultdict(list)
    for c in stack.upstream.admitted():
        calls[c.topic].append(c)
    generated = sorted(
        (a for a in stack.slack.asked.values() if a.answers and a.answers[0].kind == "generated"),
        key=lambda a: a.sent or 0.0,
    )
    owned: set[int] = set()  # id() of the admitted calls given to a question
    seen_text: set[str] = set()
    seen_key: set[tuple[str, str]] = set()
    out: dict[int, str] = {}
    for a in generated:
        q = by_idx[a.idx]
        done = a.answers[0].at
        assert a.sent is not None
        overlapping = [c for c in calls[q.topic] if a.sent <= c.arrived <= done]
        free = [c for c in overlapping if id(c) not in owned]
        text, key = " ".join(q.text.split()), (q.topic, question_key(q.text))
        if free:
            owned.add(id(free[0]))
            out[a.idx] = "fresh"
        elif overlapping or any(c.arrived < a.sent < c.ready for c in calls[q.topic]):
            out[a.idx] = "in_flight"
        elif text in seen_text:
            out[a.idx] = "exact"
        elif key in seen_key:
            out[a.idx] = "normalised"
        else:
            out[a.idx] = "reworded"
        seen_text.add(text)
        seen_key.add(key)
    return out


def _outcome_class(a: Asked, q: Question, reuse: dict[int, str]) -> str:
    """What the question's answer was, for the overhead split."""
    if a.answers[0].kind == "generated":
        return "generated, own call" if reuse.get(a.idx) == "fresh" else "generated, reused"
    if a.answers[0].kind == "team":
        return "team answer"
    if q.kind in ("question", "followup"):
        return "search instead of an answer"
    return "search (keyword or Pay)"


def _windows(stack: Stack) -> dict[str, Any]:
    quota = stack.upstream.quota
    refused = stack.upstream.refused()
    start = min((c.arrived for c in stack.upstream.calls), default=0.0)
    by_minute = Counter(int((c.arrived - start) // 60) for c in refused if c.refused == "minute")
    return {
        "refused": len(refused),
        "refused_minute": sum(1 for c in refused if c.refused == "minute"),
        "refused_day": sum(1 for c in refused if c.refused == "day"),
        "most_refused_one_minute_window": quota.most_refused_in_one_window("minute"),
        "refused_by_run_minute": dict(sorted(by_minute.items())),
        "refusal_forms": dict(Counter(c.form for c in refused if c.form)),
    }


def stack_figures(run: DayRun, stack: Stack) -> dict[str, Any]:
    """Every figure of one topology (what day_report.py shows and judges)."""
    reuse = _reuse(run.stream, stack)
    # the topics any set-up saved as team answers: what they cost where none was saved
    saved = {topic for s in run.stacks for topic in s.team_saved}
    on_saved = [c for c in stack.upstream.admitted() if c.topic in saved]
    return {
        "name": stack.topology.name,
        "title": stack.topology.title,
        "replicas": len(stack.replicas),
        **_answers(run.stream, stack, reuse),
        **_team(run.stream, stack),
        "calls_on_saved_topics": len(on_saved),
        **_spending(stack),
        **_bot_metrics(stack),
        **_latency(run.stream, stack, reuse),
        **_resources(stack, len(run.stream)),
    }


def _answers(stream: list[Question], stack: Stack, reuse: dict[int, str]) -> dict[str, Any]:
    """What the askers got: some answer, a generated one, twice, about another topic."""
    asked = [stack.slack.asked[q.idx] for q in stream if q.idx in stack.slack.asked]
    by_idx = {q.idx: q for q in stream}
    answered = [a for a in asked if a.answers]
    first = Counter(a.answers[0].kind for a in answered)
    kinds: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for a in asked:
        entry = kinds[by_idx[a.idx].kind]
        entry[1] += 1
        entry[0] += bool(a.answers) and a.answers[0].kind == "generated"
    generated = first.get("generated", 0)
    # get_documents calls carry names, not the question: only the others can carry context
    followups = [
        c for c in stack.upstream.calls if c.topic.startswith("f") and c.tool != "get_documents"
    ]
    admitted = len(stack.upstream.admitted())
    return {
        "questions": len(stream),
        "asked": len(asked),
        "answered": len(answered),
        "generated": generated,
        "search": first.get("search", 0),
        "generated_share": generated / len(stream) if stream else 0.0,
        "answered_share": len(answered) / len(stream) if stream else 0.0,
        "by_kind": {k: tuple(v) for k, v in sorted(kinds.items())},
        "wrong_topic": sum(1 for a in answered for p in a.answers if p.topic != a.topic),
        "duplicates": sum(1 for a in answered if len(a.answers) > 1),
        "notices": sum(len(a.notices) for a in asked),
        "notice_samples": sorted({n.text[:160] for a in asked for n in a.notices})[:3],
        "reuse_factor": generated / admitted if admitted else float("nan"),
        "reuse": dict(Counter(reuse.values())),
        "followups_with_context": (
            len({c.topic for c in followups if c.with_context}),
            len({c.topic for c in followups}),
        ),
    }


def _team(stream: list[Question], stack: Stack) -> dict[str, Any]:
    """Generated or team answers, per question and per person; the team answers given, as
    Slack got them and as the bot counted them (used; given where answer_query would have
    been asked: calls saved)."""
    asked = [stack.slack.asked[q.idx] for q in stream if q.idx in stack.slack.asked]
    asker = {q.idx: q.asker for q in stream}
    good = {a.idx for a in asked if a.answers and a.answers[0].kind in ("generated", "team")}
    people = {asker[a.idx] for a in asked}
    served = {asker[i] for i in good}
    saved_topics = set(stack.team_saved)
    return {
        "team": sum(1 for a in asked if a.answers and a.answers[0].kind == "team"),
        "team_saved_questions": sorted(stack.team_saved.values()),
        "team_topic_askings": sum(1 for q in stream if q.topic in saved_topics),
        "generated_or_team": len(good),
        "generated_or_team_share": len(good) / len(stream) if stream else 0.0,
        "people": len(people),
        "people_served": len(served),
        "bot_team_used": stack.bot_team.get("used", 0),
        "bot_team_saved": stack.bot_team.get("saved", 0),
    }


def _spending(stack: Stack) -> dict[str, Any]:
    """What the fake Developer Knowledge server saw: calls, refusals per window."""
    admitted = len(stack.upstream.admitted())
    return {
        "answer_query_calls": admitted + len(stack.upstream.refused()),
        "answer_query_admitted": admitted,
        **_windows(stack),
        "search_calls": len(stack.upstream.admitted("search_documents")),
        "peak_search_bucket": stack.upstream.peak_search_bucket(),
        "unknown_queries": stack.upstream.unknown,
    }


def _bot_metrics(stack: Stack) -> dict[str, Any]:
    """The bot's own counters, summed over its replicas."""
    return {
        "metrics_cache": _cache_series(stack),
        "metrics_fallbacks": sum(
            metric_sum(m, "gdocs_quota_fallbacks_total") for m in stack.metrics
        ),
        "metrics_duplicates": sum(
            metric_sum(m, "gdocs_requests_total", kind="dedupe", outcome="duplicate")
            for m in stack.metrics
        ),
    }


def _latency(stream: list[Question], stack: Stack, reuse: dict[int, str]) -> dict[str, Any]:
    """Question → posted answer minus upstream time (and the quota waits apart); acks."""
    by_idx = {q.idx: q for q in stream}
    calls_by_topic: dict[str, list[Call]] = defaultdict(list)
    for c in stack.upstream.calls:
        calls_by_topic[c.topic].append(c)
    overheads: list[float] = []
    waits: list[float] = []
    unwaited: list[float] = []
    by_class: dict[str, list[float]] = defaultdict(list)
    for a in (a for a in stack.slack.asked.values() if a.answers):
        e2e, upstream, gap = _timing(a, calls_by_topic[by_idx[a.idx].topic])
        overhead = (e2e - upstream) * 1000
        overheads.append(overhead)
        if gap is not None and gap > WAITED_SECONDS:
            waits.append(gap)
            continue
        unwaited.append(overhead)
        by_class[_outcome_class(a, by_idx[a.idx], reuse)].append(overhead)
    deliveries = stack.balancer.deliveries if stack.balancer else []
    acks = [(d.acked - d.sent) * 1000 for d in deliveries]
    return {
        "overhead_p50_ms": pct(overheads, 50),
        "overhead_p99_ms": pct(overheads, 99),
        "overhead_unwaited_p99_ms": pct(unwaited, 99),
        "overhead_by_class": {
            k: (len(v), pct(v, 50), pct(v, 99)) for k, v in sorted(by_class.items())
        },
        "waited": len(waits),
        "wait_p50_s": pct(waits, 50),
        "wait_max_s": max(waits, default=float("nan")),
        "ack_p50_ms": pct(acks, 50),
        "ack_p99_ms": pct(acks, 99),
        "ack_max_ms": max(acks, default=float("nan")),
        "acks_not_200": sum(1 for d in deliveries if d.status != 200),
        "retries_sent": sum(1 for d in deliveries if d.retry),
    }


def _resources(stack: Stack, questions: int) -> dict[str, Any]:
    """CPU per question (all, and less what the replica uses idle) and peak RSS."""
    per_replica_q = [
        stack.balancer.per_replica.get(i, 0) if stack.balancer else 0
        for i in range(len(stack.replicas))
    ]
    return {
        "per_replica_questions": per_replica_q,
        "cpu_ms_per_question": [
            1000 * cpu / max(1, n) for cpu, n in zip(stack.cpu_s, per_replica_q, strict=True)
        ],
        "cpu_ms_per_question_all": 1000 * sum(stack.cpu_s) / max(1, questions),
        # the questions' own: the CPU the replica would have used idle over the same time out
        "cpu_ms_per_question_net": [
            1000 * max(0.0, cpu - idle * stack.busy_s) / max(1, n)
            for cpu, idle, n in zip(stack.cpu_s, stack.idle_cpu_per_s, per_replica_q, strict=True)
        ],
        "idle_cpu_ms_per_s": [1000 * idle for idle in stack.idle_cpu_per_s],
        "rss_mb": stack.rss_mb,
        "cold_start_s": stack.cold_start_s,
    }


def _cache_series(stack: Stack) -> dict[str, float]:
    """The bot's answer-cache counters (gdocs_cache_total{cache="answer"}), summed over the
    replicas, one entry per label set (result, and whatever else the bot labels)."""
    out: dict[str, float] = defaultdict(float)
    for samples in stack.metrics:
        for (name, labels), value in samples.items():
            if name != "gdocs_cache_total" or ("cache", "answer") not in labels:
                continue
            label = ",".join(f"{k}={v}" for k, v in labels if k != "cache")
            out[label] += value
    return dict(sorted(out.items()))


def day_figures(run: DayRun) -> dict[str, Any]:
    stream = run.stream
    out: dict[str, Any] = {
        "seed": run.args.seed,
        "wall_s": run.wall_s,
        "per_minute": run.args.per_minute,
        "per_day": run.args.per_day,
        "per_user": run.args.per_user,
        "answer_latency": run.args.answer_latency,
        "search_latency": run.args.search_latency,
        "stream": {
            "questions": len(stream),
            "askers": len({q.asker for q in stream}),
            "topics": len({q.topic for q in stream}),
            "kinds": dict(Counter(q.kind for q in stream)),
            "forms": dict(Counter(q.form for q in stream)),
            "surfaces": dict(Counter(q.surface for q in stream)),
            "retries": dict(Counter(q.retry for q in stream if q.retry != "none")),
            "bursts": dict(Counter(q.burst for q in stream if q.burst)),
            "top_topic_askings": max(Counter(q.topic for q in stream).values(), default=0),
            "seconds": run.shape.seconds,
        },
        "topologies": {},
        "skipped": {},
    }
    for stack in run.stacks:
        if stack.skipped is not None:
            out["skipped"][stack.topology.name] = stack.skipped
        else:
            out["topologies"][stack.topology.name] = stack_figures(run, stack)
    return out
