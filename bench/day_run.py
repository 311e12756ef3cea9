"""`python -m bench.run --scenario day`: its options, the smoke-sized day, and the exit code."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.stream import StreamShape

if TYPE_CHECKING:
    from bench.day import DayRun

#: the smoke run's day: a dozen questions in a few seconds, limits scaled down to match
SMOKE_SHAPE = StreamShape(
    questions=12,
    askers=6,
    topics=8,
    seconds=10.0,
    standup=3,
    standup_seconds=3.0,
    incident=2,
    followups=1,
    pay=1,
    retry_share=0.4,
)


def add_day_arguments(parser: argparse.ArgumentParser) -> None:
    day = parser.add_argument_group("--scenario day")
    day.add_argument("--seed", type=int, default=16, help="the question stream's seed")
    day.add_argument("--per-minute", type=int, default=10, help="answer_query a minute (fake)")
    day.add_argument("--per-day", type=int, default=50, help="answer_query for the run (fake)")
    day.add_argument("--per-user", type=int, default=10, help="ANSWER_QUOTA_PER_USER_PER_DAY")
    day.add_argument("--answer-latency", type=float, default=2.0, help="answer_query, s")
    day.add_argument("--search-latency", type=float, default=0.5, help="search_documents, s")
    day.add_argument("--drain", type=float, default=60.0, help="longest wait for answers, s")
    day.add_argument("--json", action="store_true", help="also print the figures as JSON")
    day.add_argument(
        "--day-scale",
        type=float,
        default=1.0,
        help="a smaller (or larger) day: questions, topics, askers and seconds times this",
    )
    day.add_argument("--dump", type=Path, default=None, help="write every record here (JSON)")


def run_day_scenario(args: argparse.Namespace, *, argv: list[str], machine: str) -> int:
    from bench.day import run_day
    from bench.day_figures import day_figures
    from bench.day_report import day_verdicts, render_day
    from bench.results_file import update_results

    shape = scaled(StreamShape(), args.day_scale)
    if args.smoke:
        shape = SMOKE_SHAPE
        args.per_minute, args.per_day, args.per_user = 3, 5, 2
        args.answer_latency, args.search_latency, args.doc_latency = 0.1, 0.05, 0.01
        args.drain = 30.0
    run = asyncio.run(run_day(args, shape))
    figures = day_figures(run)
    if args.dump is not None:
        args.dump.write_text(json.dumps(records(run), indent=1))
    section = render_day(figures, argv=argv, machine=machine)
    print(section)
    if args.json:
        print(json.dumps(figures, indent=1, default=str))
    if not args.smoke:
        update_results(args.out, "day", section)
        print(f"wrote {args.out}")
    tops = figures["topologies"].values()
    # correctness always counts: every question answered by something, every query known
    broken = any(t["answered"] < t["questions"] or t["unknown_queries"] for t in tops)
    failed = [name for name, ok in day_verdicts(figures) if not ok]
    return 1 if broken or (failed and not args.smoke) else 0


def scaled(shape: StreamShape, factor: float) -> StreamShape:
    """`shape` with its size times `factor` (the bursts keep their size)."""
    if factor == 1.0:
        return shape
    return dataclasses.replace(
        shape,
        questions=round(shape.questions * factor),
        topics=round(shape.topics * factor),
        askers=max(shape.standup, round(shape.askers * factor)),
        seconds=shape.seconds * factor,
        followups=max(1, round(shape.followups * factor)),
        pay=max(1, round(shape.pay * factor)),
    )


def records(run: DayRun) -> dict[str, Any]:
    """Everything the fakes and the balancer recorded, per topology (for analysis)."""
    out: dict[str, Any] = {"stream": [dataclasses.asdict(q) for q in run.stream]}
    for stack in run.stacks:
        if stack.skipped is not None:
            continue
        out[stack.topology.name] = {
            "asked": [
                {
                    "idx": a.idx,
                    "topic": a.topic,
                    "sent": a.sent,
                    "answers": [dataclasses.asdict(p) for p in a.answers],
                    "notices": [dataclasses.asdict(p) for p in a.notices],
                }
                for a in stack.slack.asked.values()
            ],
            "calls": [dataclasses.asdict(c) for c in stack.upstream.calls],
            "deliveries": [
                dataclasses.asdict(d) for d in (stack.balancer.deliveries if stack.balancer else [])
            ],
        }
    return out
