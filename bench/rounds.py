"""The load scenario's rounds, shared by bench/run.py and bench/store_bench.py: N distinct
questions at once, and a steady N in flight (a module of their own so the two scenarios do
not import each other)."""

from __future__ import annotations

import statistics
import time
from typing import Any

from bench.driver import Bench, Round, pct


def _overheads(bench: Bench, rnd: Round, qid_of: dict[str, str]) -> tuple[list[float], float]:
    """Per answered channel: (posted − sent − upstream time spent on it) in ms; and the wall
    time from the first command to the last answer."""
    overheads = []
    for ch, sent in rnd.sent.items():
        if ch in bench.slack.posted:
            e2e = bench.slack.posted[ch] - sent
            overheads.append((e2e - bench.upstream.spent.get(qid_of[ch], 0.0)) * 1000)
    posted = [bench.slack.posted[c] for c in rnd.sent if c in bench.slack.posted]
    wall = (max(posted) - min(rnd.sent.values())) if posted else float("nan")
    return overheads, wall


def _segments(bench: Bench, rnd: Round, qid_of: dict[str, str]) -> dict[str, float]:
    """Where the overhead goes, p50 in ms: command → answer_query arrives, answer_query
    answered → get_documents arrives, get_documents answered → answer posted."""
    before, between, after = [], [], []
    for ch, sent in rnd.sent.items():
        marks = bench.upstream.marks.get(qid_of[ch], {})
        if ch not in bench.slack.posted or len(marks) < 2:
            continue
        (aq_in, aq_out), (gd_in, gd_out) = marks["answer_query"], marks["get_documents"]
        before.append((aq_in - sent) * 1000)
        between.append((gd_in - aq_out) * 1000)
        after.append((bench.slack.posted[ch] - gd_out) * 1000)
    return {
        "before_ms": pct(before, 50),
        "between_ms": pct(between, 50),
        "after_ms": pct(after, 50),
    }


def _acks(rnd: Round) -> list[float]:
    return [(rnd.acked[k] - rnd.sent[k]) * 1000 for k in rnd.acked]


async def distinct_round(bench: Bench, tag: str, base: int) -> dict[str, Any]:
    """N distinct questions sent at once, one channel each."""
    n, lat = bench.args.n, bench.args.latency
    bench.upstream.reset()
    texts = [f"how do I configure feature q{base + i} in cloud storage?" for i in range(n)]
    channels = [f"{tag}{i:05d}" for i in range(n)]
    qid_of = {c: str(base + i) for i, c in enumerate(channels)}
    cpu0 = bench.bot_cpu_seconds()
    rnd, _ = await bench.burst(texts, channels, timeout=30 + 5 * lat)
    bot_cpu = bench.bot_cpu_seconds() - cpu0
    overheads, wall = _overheads(bench, rnd, qid_of)
    acks = _acks(rnd)
    upstream = statistics.mean(bench.upstream.spent[str(base + i)] for i in range(n))
    return {
        "burst_ack_p50_ms": pct(acks, 50),
        "burst_ack_p99_ms": pct(acks, 99),
        "burst_ack_max_ms": max(acks),
        "acked_ok": sum(1 for s in rnd.statuses if s == 200),
        "answered": len(overheads),
        "overhead_p50_ms": pct(overheads, 50),
        "overhead_p99_ms": pct(overheads, 99),
        "segments": _segments(bench, rnd, qid_of),
        "upstream_per_question_s": upstream,
        "wall_s": wall,
        "wall_over_upstream": wall / upstream,
        "max_in_flight": bench.upstream.max_in_flight,
        "bot_cpu_ms_per_question": bot_cpu * 1000 / n,
    }


async def sustained_round(bench: Bench, base: int) -> dict[str, Any]:
    """Questions arriving at N per upstream time for `--sustain` seconds, so that N are in
    flight at once (Little's law); figures for those sent once the N were in flight."""
    args = bench.args
    per_question = args.latency + args.doc_latency
    rate = args.n / per_question
    count = max(1, round(rate * args.sustain))
    bench.upstream.reset()
    texts = [f"how do I configure feature q{base + i} in cloud storage?" for i in range(count)]
    channels = [f"S{i:05d}" for i in range(count)]
    qid_of = {c: str(base + i) for i, c in enumerate(channels)}
    cpu0, driver0 = bench.bot_cpu_seconds(), time.process_time()
    mentions = set(channels[1::2])  # every other question is an @mention, the rest /gdocs
    rnd = await bench.paced(
        texts, channels, rate, timeout=30 + args.sustain + 5 * per_question, mentions=mentions
    )
    bot_cpu = bench.bot_cpu_seconds() - cpu0
    first, last = min(rnd.sent.values()), max(rnd.sent.values())
    # the steady state: the ramp (the first upstream time, fewer than N in flight) left out
    steady = {c: t for c, t in rnd.sent.items() if t - first >= per_question}
    steady_rnd = Round(
        sent=steady, acked={c: rnd.acked[c] for c in steady if c in rnd.acked}, statuses=[]
    )
    overheads, _ = _overheads(bench, steady_rnd, qid_of)
    acks = _acks(steady_rnd)
    by_kind: dict[str, Any] = {}
    for kind, keep in (("command", False), ("mention", True)):
        part = Round(
            sent={c: t for c, t in steady.items() if (c in mentions) == keep},
            acked={c: t for c, t in steady_rnd.acked.items() if (c in mentions) == keep},
        )
        kind_overheads, _ = _overheads(bench, part, qid_of)
        kind_acks = _acks(part)
        by_kind[kind] = (
            pct(kind_acks, 50),
            pct(kind_acks, 99),
            pct(kind_overheads, 50),
            pct(kind_overheads, 99),
        )
    seen = [k for t, k in bench.upstream.in_flight_seen if first + per_question <= t <= last]
    return {
        "sustained_rate": rate,
        "sustained_sent": count,
        "sustained_steady": len(steady),
        "sustained_acked_ok": sum(1 for s in rnd.statuses if s == 200),
        "sustained_answered": sum(1 for c in channels if c in bench.slack.posted),
        "sustained_ack_p50_ms": pct(acks, 50),
        "sustained_ack_p99_ms": pct(acks, 99),
        "sustained_ack_max_ms": max(_acks(rnd)),
        "sustained_overhead_p50_ms": pct(overheads, 50),
        "sustained_overhead_p99_ms": pct(overheads, 99),
        "sustained_in_flight_p50": pct([float(k) for k in seen], 50),
        "sustained_segments": _segments(bench, steady_rnd, qid_of),
        "sustained_by_kind": by_kind,
        "sustained_bot_cpu_ms_per_question": bot_cpu * 1000 / count,
        "sustained_bot_cpu_share": bot_cpu / (last - first + per_question),
        "sustained_driver_cpu_share": (time.process_time() - driver0)
        / (last - first + per_question),
    }
