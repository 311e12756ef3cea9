"""gdocs-bot benchmark: how far the answer_query quota goes, and the bot's own cost.

Starts the real bot (`python -m bot serve`, HTTP mode) as subprocesses, with a fake Slack Web
API and fake Developer Knowledge MCP servers on 127.0.0.1, and drives them with signed Slack
requests. Usage (from the repository root):

    python -m bench.run --scenario day       # a team's day through 3 set-ups, ~6 min (bench/day.py)
    python -m bench.run --scenario store     # cache hits and acks on memory, SQLite, Redis
    python -m bench.run --scenario render    # rendering's MB/s, typical and worst (in process)
    python -m bench.run --scenario verify    # verified answers on their eval set (in-process)
    python -m bench.run                      # --scenario load: N=200 in flight, latency 1 s,
                                             #   on memory://, SQLite, Redis (--stores)
    python -m bench.run [--scenario S] --smoke   # tiny and quick, writes nothing (CI smoke run)

Each scenario rewrites its own section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import platform
import sys
from pathlib import Path
from typing import Any

from bench.day_run import add_day_arguments, run_day_scenario
from bench.driver import ROOT, Bench, pct
from bench.results_file import update_results
from bench.rounds import distinct_round, sustained_round
from bench.stores import (
    StoreBench,
    add_store_arguments,
    per_question,
    settled_store_calls,
    store_backends,
)


async def measure_stores(args: argparse.Namespace) -> tuple[list[dict[str, Any]], str | None]:
    """The load scenario once per store in `--stores`, taking turns; (each store's figures
    with its name, why Redis is left out or None)."""
    runs = []
    with store_backends(args, "load-bench.db") as (backends, reason):
        for backend in backends:
            backend.reset()
            runs.append(
                {"store": backend.name} | await measure(args, StoreBench(args, backend.url))
            )
    return runs, reason


async def measure(args: argparse.Namespace, bench: Bench) -> dict[str, Any]:
    """The load scenario on one bench (its STATE_URL), every figure of the report."""
    await bench.start_fakes()
    n, lat = args.n, args.latency
    out: dict[str, Any] = {"n": n, "latency": lat, "doc_latency": args.doc_latency}
    try:
        # cap ≥ every question in flight: no queueing at the cap here
        out["cold_start_s"] = await bench.start_bot(cap=2 * n)
        await bench.burst(["how do I warm up q999999 please?"], ["CWARM"], timeout=10 + 3 * lat)
        out["idle_rss_mb"] = bench.bot_rss_mb()

        # 1. N distinct questions at once: first with cold connection pools, then warm
        cold = await distinct_round(bench, "C", 0)
        out["cold"] = cold
        calls0 = await settled_store_calls(bench)
        out.update(await distinct_round(bench, "W", 10 * n))
        # the peak with N held at once at the upstream (see store_bench)
        out["burst_rss_mb"] = bench.bot_rss_mb("VmHWM")
        calls1 = await settled_store_calls(bench)
        out["burst_calls"] = per_question(calls0, calls1, n)
        # 2. a steady N in flight
        out.update(await sustained_round(bench, 20 * n))
        calls2 = await settled_store_calls(bench)
        out["sustained_calls"] = per_question(calls1, calls2, out["sustained_sent"])

        # 3. N identical questions at once -> single flight, then cache hits
        bench.upstream.reset()
        same = "how do I rotate keys q777777 in cloud kms?"
        channels = [f"D{i:05d}" for i in range(n)]
        await bench.burst([same] * n, channels, timeout=30 + 5 * lat)
        out["identical_answered"] = sum(1 for c in channels if c in bench.slack.posted)
        out["identical_upstream_calls"] = bench.upstream.calls["answer_query"]
        hits = []
        calls3 = await settled_store_calls(bench)
        for j in range(args.cache_probes):
            ch = f"H{j:05d}"
            rnd, _ = await bench.burst([same], [ch], timeout=10)
            if ch in bench.slack.posted:
                hits.append((bench.slack.posted[ch] - rnd.sent[ch]) * 1000)
        calls4 = await settled_store_calls(bench)
        out["hit_calls"] = per_question(calls3, calls4, args.cache_probes)
        out["store_errors"] = calls4[2]
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
    parser.add_argument(
        "--scenario", choices=("load", "day", "store", "verify", "render"), default="load"
    )
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
    add_store_arguments(parser)
    args = parser.parse_args(argv)
    if args.workdir is None:
        import tempfile

        args.workdir = Path(tempfile.mkdtemp(prefix="gdocs-bench-"))
    if args.scenario == "day":
        return run_day_scenario(
            args, argv=sys.argv[1:] if argv is None else argv, machine=machine()
        )
    if args.scenario == "verify":
        from bench.verify_bench import run_verify_scenario

        return run_verify_scenario(
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
    args.workdir = Path(args.workdir).resolve()
    args.workdir.mkdir(parents=True, exist_ok=True)
    runs, reason = asyncio.run(measure_stores(args))
    if not runs:
        print(f"no store to run the load on: {reason}", file=sys.stderr)
        return 1
    from bench.report import render_report, verdicts

    report = render_report(
        runs, reason, argv=sys.argv[1:] if argv is None else argv, machine=machine()
    )
    print(report)
    if not args.smoke:
        update_results(args.out, "load", report)
        print(f"wrote {args.out}")
    failed = [(r["store"], name) for r in runs for name, ok in verdicts(r) if not ok]
    # correctness failures always fail; timing targets only count on a full run
    broken = any(
        r["cold"]["answered"] < args.n
        or r["answered"] < args.n
        or r["sustained_answered"] < r["sustained_sent"]
        or r["identical_answered"] < args.n
        or r["capped_answered"] < args.n
        for r in runs
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
