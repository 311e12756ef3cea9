"""gdocs-bot benchmark: how far the answer_query quota goes, and the bot's own cost.

Starts the real bot (`python -m bot serve`, HTTP mode) as subprocesses, with a fake Slack Web
API and fake Developer Knowledge MCP servers on 127.0.0.1, and drives them with signed Slack
requests. Usage (from the repository root):

    python -m bench.run --scenario day       # a team's day through 3 set-ups, ~6 min (bench/day.py)
    python -m bench.run --scenario store     # cache hits and acks on memory, SQLite, Redis
    python -m bench.run --scenario render    # rendering's MB/s, typical and worst (in process)
    python -m bench.run                      # --scenario load: N=200 in flight, latency 1 s
    python -m bench.run [--scenario S] --smoke   # tiny and quick, writes nothing (CI smoke run)

Each scenario rewrites its own section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.day_run import add_day_arguments, run_day_scenario
from bench.driver import ROOT, Bench, Round, pct
from bench.results_file import update_results


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


async def _distinct_round(bench: Bench, tag: str, base: int) -> dict[str, Any]:
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


async def _sustained_round(bench: Bench, base: int) -> dict[str, Any]:
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


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    bench = Bench(args)
    await bench.start_fakes()
    n, lat = args.n, args.latency
    out: dict[str, Any] = {"n": n, "latency": lat, "doc_latency": args.doc_latency}
    try:
        # cap ≥ every question in flight: no queueing at the cap here
        out["cold_start_s"] = await bench.start_bot(cap=2 * n)
        await bench.burst(["how do I warm up q999999 please?"], ["CWARM"], timeout=10 + 3 * lat)

        # 1. N distinct questions at once: first with cold connection pools, then warm
        cold = await _distinct_round(bench, "C", 0)
        out["cold"] = cold
        out.update(await _distinct_round(bench, "W", 10 * n))
        # 2. a steady N in flight
        out.update(await _sustained_round(bench, 20 * n))

        # 3. N identical questions at once -> single flight, then cache hits
        bench.upstream.reset()
        same = "how do I rotate keys q777777 in cloud kms?"
        channels = [f"D{i:05d}" for i in range(n)]
        await bench.burst([same] * n, channels, timeout=30 + 5 * lat)
        out["identical_answered"] = sum(1 for c in channels if c in bench.slack.posted)
        out["identical_upstream_calls"] = bench.upstream.calls["answer_query"]
        hits = []
        for j in range(args.cache_probes):
            ch = f"H{j:05d}"
            rnd, _ = await bench.burst([same], [ch], timeout=10)
            if ch in bench.slack.posted:
                hits.append((bench.slack.posted[ch] - rnd.sent[ch]) * 1000)
        out["cache_hit_p50_ms"] = pct(hits, 50)
        out["cache_hit_max_ms"] = max(hits) if hits else float("nan")
        out["cache_hit_upstream_calls"] = (
            bench.upstream.calls["answer_query"] - out["identical_upstream_calls"]
        )
        out["peak_rss_mb"] = bench.stop_bot()

        # 4. cap below N: queueing, not failing
        cap = max(1, n // 4)
        await bench.start_bot(cap=cap)
        bench.upstream.reset()
        texts = [f"how do I set up thing q{i + 1000 * n} in firebase?" for i in range(n)]
        channels = [f"E{i:05d}" for i in range(n)]
        per_round = lat + args.doc_latency
        rnd, _ = await bench.burst(texts, channels, timeout=30 + (n / cap + 2) * per_round * 2)
        posted = [bench.slack.posted[c] for c in channels if c in bench.slack.posted]
        out.update(
            capped_cap=cap,
            capped_answered=len(posted),
            capped_wall_s=(max(posted) - min(rnd.sent.values())) if posted else float("nan"),
            capped_ideal_s=math.ceil(n / cap) * per_round,
            capped_max_in_flight=bench.upstream.max_in_flight,
            capped_acked_ok=sum(1 for s in rnd.statuses if s == 200),
        )
        bench.stop_bot()

        # 5. the CLI path
        walls, overheads_cli, rss = [], [], []
        for j in range(args.cli_runs):
            question = f"how do I list buckets q{900000 + j} with gcloud?"
            wall, spent, peak = await bench.cli_ask(question)
            walls.append(wall)
            overheads_cli.append((wall - spent) * 1000)
            rss.append(peak)
        out.update(
            cli_wall_p50_s=pct(walls, 50),
            cli_overhead_p50_ms=pct(overheads_cli, 50),
            cli_peak_rss_mb=max(rss),
        )
    finally:
        if bench.proc is not None and bench.proc.poll() is None:
            bench.stop_bot()
        await bench.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    parser.add_argument("--scenario", choices=("load", "day", "store", "render"), default="load")
    parser.add_argument("--n", type=int, default=200, help="concurrent questions (default 200)")
    parser.add_argument("--latency", type=float, default=1.0, help="answer/search latency, s")
    parser.add_argument("--doc-latency", type=float, default=0.1, help="get_documents latency, s")
    parser.add_argument("--cache-probes", type=int, default=20)
    parser.add_argument(
        "--sustain", type=float, default=4.0, help="seconds of steady load with N in flight"
    )
    parser.add_argument("--cli-runs", type=int, default=3)
    parser.add_argument("--store-passes", type=int, default=2, help="--scenario store rounds")
    parser.add_argument("--render-repeats", type=int, default=3, help="--scenario render")
    parser.add_argument("--smoke", action="store_true", help="tiny run for CI; writes nothing")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "RESULTS.md")
    parser.add_argument("--workdir", type=Path, default=None, help="cwd of the bot (no .env)")
    parser.add_argument("--verbose", action="store_true", help="show the bot's stderr")
    add_day_arguments(parser)
    args = parser.parse_args(argv)
    if args.workdir is None:
        import tempfile

        args.workdir = Path(tempfile.mkdtemp(prefix="gdocs-bench-"))
    if args.scenario == "day":
        return run_day_scenario(
            args, argv=sys.argv[1:] if argv is None else argv, machine=machine()
        )
    if args.scenario == "store":
        from bench.store_bench import run_store_scenario

        return run_store_scenario(
            args, argv=sys.argv[1:] if argv is None else argv, machine=machine()
        )
    if args.scenario == "render":
        from bench.render_bench import run_render_scenario

        return run_render_scenario(
            args, argv=sys.argv[1:] if argv is None else argv, machine=machine()
        )
    if args.smoke:
        args.n, args.latency, args.doc_latency = 4, 0.05, 0.01
        args.cache_probes, args.cli_runs, args.sustain = 2, 1, 0.3
    results = asyncio.run(measure(args))
    from bench.report import render_report, verdicts

    report = render_report(results, argv=sys.argv[1:], machine=machine())
    print(report)
    if not args.smoke:
        update_results(args.out, "load", report)
        print(f"wrote {args.out}")
    failed = [name for name, ok in verdicts(results) if not ok]
    # correctness failures always fail; timing targets only count on a full run
    broken = (
        results["cold"]["answered"] < args.n
        or results["answered"] < args.n
        or results["sustained_answered"] < results["sustained_sent"]
        or results["identical_answered"] < args.n
        or results["capped_answered"] < args.n
    )
    return 1 if broken or (failed and not args.smoke) else 0


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {cpu}; Python {platform.python_version()} on {platform.system()} {platform.machine()}"


if __name__ == "__main__":
    raise SystemExit(main())
