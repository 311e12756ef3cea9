"""gdocs-bot benchmark: the bot's own cost next to the documentation servers' latency.

Starts the real bot (`python -m bot serve`, HTTP mode) as a subprocess, with a fake Slack Web
API and a fake Developer Knowledge MCP server (configurable latency) on 127.0.0.1, and drives it
with signed slash commands. Usage (from the repository root):

    python -m bench.run                      # N=200, latency 1 s, writes bench/RESULTS.md
    python -m bench.run --smoke              # tiny N, quick, writes nothing (CI smoke run)
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

from bench.driver import ROOT, Bench, Round, pct


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


def _acks(rnd: Round) -> list[float]:
    return [(rnd.acked[k] - rnd.sent[k]) * 1000 for k in rnd.acked]


async def _distinct_round(bench: Bench, tag: str, base: int, probes: int) -> dict[str, Any]:
    """N distinct questions at once, one channel each, then `probes` more while they wait."""
    n, lat = bench.args.n, bench.args.latency
    bench.upstream.reset()
    texts = [f"how do I configure feature q{base + i} in cloud storage?" for i in range(n)]
    channels = [f"{tag}{i:05d}" for i in range(n)]
    probe_list = [
        (f"how do I configure feature q{base + n + j} in cloud storage?", f"{tag}P{j:04d}")
        for j in range(probes)
    ]
    qid_of = {c: str(base + i) for i, c in enumerate(channels)}
    qid_of.update({c: str(base + n + j) for j, (_, c) in enumerate(probe_list)})
    cpu0, self_cpu0 = bench.bot_cpu_seconds(), time.process_time()
    rnd, probe_rnd = await bench.burst(texts, channels, timeout=30 + 5 * lat, probes=probe_list)
    bot_cpu = bench.bot_cpu_seconds() - cpu0
    overheads, wall = _overheads(bench, rnd, qid_of)
    probe_overheads, _ = _overheads(bench, probe_rnd, qid_of)
    acks, probe_acks = _acks(rnd), _acks(probe_rnd)
    return {
        "burst_ack_p50_ms": pct(acks, 50),
        "burst_ack_p99_ms": pct(acks, 99),
        "ack_max_ms": max(acks + probe_acks),
        "acked_ok": sum(1 for s in rnd.statuses + probe_rnd.statuses if s == 200),
        "answered": len(overheads) + len(probe_overheads),
        "overhead_p50_ms": pct(overheads, 50),
        "overhead_p99_ms": pct(overheads, 99),
        "probe_ack_p50_ms": pct(probe_acks, 50),
        "probe_ack_p99_ms": pct(probe_acks, 99),
        "probe_overhead_p50_ms": pct(probe_overheads, 50),
        "probe_overhead_p99_ms": pct(probe_overheads, 99),
        "upstream_per_question_s": statistics.mean(
            bench.upstream.spent[str(base + i)] for i in range(n)
        ),
        "wall_s": wall,
        "wall_over_latency": wall / lat,
        "max_in_flight": bench.upstream.max_in_flight,
        "bot_cpu_ms_per_question": bot_cpu * 1000 / (n + probes),
        "driver_cpu_s": time.process_time() - self_cpu0,
    }


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    bench = Bench(args)
    await bench.start_fakes()
    n, lat = args.n, args.latency
    out: dict[str, Any] = {"n": n, "latency": lat, "doc_latency": args.doc_latency}
    try:
        # cap ≥ every question in flight (the N and the probes): no queueing at the cap here
        out["cold_start_s"] = await bench.start_bot(cap=n + args.probes)
        await bench.burst(["how do I warm up q999999 please?"], ["CWARM"], timeout=10 + 3 * lat)

        # 1. N distinct questions at once: first with cold connection pools, then warm, with
        #    probe commands sent one by one while the N wait on the upstream
        cold = await _distinct_round(bench, "C", 0, probes=0)
        out["cold"] = cold
        out["n_answered"] = cold["answered"]
        out.update(await _distinct_round(bench, "W", 10 * n, probes=args.probes))
        out["probes"] = args.probes

        # 2. N identical questions at once -> single flight, then cache hits
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

        # 3. cap below N: queueing, not failing
        cap = max(1, n // 4)
        await bench.start_bot(cap=cap)
        bench.upstream.reset()
        texts = [f"how do I set up thing q{i + 20 * n} in firebase?" for i in range(n)]
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

        # 4. the CLI path
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
    parser.add_argument("--n", type=int, default=200, help="concurrent questions (default 200)")
    parser.add_argument("--latency", type=float, default=1.0, help="answer/search latency, s")
    parser.add_argument("--doc-latency", type=float, default=0.1, help="get_documents latency, s")
    parser.add_argument("--cache-probes", type=int, default=20)
    parser.add_argument(
        "--probes", type=int, default=40, help="commands sent one by one while N are in flight"
    )
    parser.add_argument("--cli-runs", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="tiny run for CI; writes nothing")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "RESULTS.md")
    parser.add_argument("--workdir", type=Path, default=None, help="cwd of the bot (no .env)")
    parser.add_argument("--verbose", action="store_true", help="show the bot's stderr")
    args = parser.parse_args(argv)
    if args.smoke:
        args.n, args.latency, args.doc_latency = 4, 0.05, 0.01
        args.cache_probes, args.cli_runs, args.probes = 2, 1, 2
    if args.workdir is None:
        import tempfile

        args.workdir = Path(tempfile.mkdtemp(prefix="gdocs-bench-"))
    results = asyncio.run(measure(args))
    from bench.report import render_report, verdicts

    report = render_report(results, argv=sys.argv[1:], machine=machine())
    print(report)
    if not args.smoke:
        args.out.write_text(report)
        print(f"wrote {args.out}")
    failed = [name for name, ok in verdicts(results) if not ok]
    # correctness failures always fail; timing targets only count on a full run
    broken = (
        results["n_answered"] < args.n
        or results["answered"] < args.n + args.probes
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
