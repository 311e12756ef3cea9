"""The guard of issue 39: the bot beside a naive Bolt + httpx bot, and beside an older tree,
in one run.

    git worktree add --detach /tmp/before 2fc0001      # the tree to compare with, once
    python -m bench.guard --before /tmp/before [--quick] [--parts burst,steady,day]

1. burst: 100 distinct `/gdocs` questions at once, answer_query taking 1 s, to the bot (the
   default SQLite store), the older tree's bot and two naive bots, taking turns, a fresh
   process each round: CPU per question (/proc, after one warm-up question), peak RSS
   (VmHWM), cold start (spawn → first `/healthz` 200). Targets against a naive bot: CPU
   ≤ 1.5 ×, peak RSS ≤ 1.3 ×, cold start ≤ 1.2 ×. The naive bots: bench/naive_bot.py does
   half the job (bare links, nothing kept); bench/naive_full.py does the bot's job for a
   question (durable before the ack, titled sources, the progress note deleted, a cache).
2. steady: 20 questions a second for 60 s on schedule, every other one a repeat of a question
   answered a few seconds before (a cache hit), one in four a mention; on SQLite and on a
   real redis-server. Targets: every question answered exactly once (messages carrying its
   answer at the fake Slack, an update of one not counted again), ack p99 ≤ 250 ms.
3. day: the team's day (bench/day.py) through the SQLite and Redis set-ups of each tree and
   the baseline, side by side: the share of questions that got a generated answer.

The bots get every default but the fakes' URLs and an answer_query quota too high to bind
(the day keeps Google's 10 a minute and 50 a day). Each question has a channel of its own, so
that what Slack got can be counted per question. RESULTS.md keeps the latest two runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import random
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from bench.day import TOPOLOGIES, Topology, add_day_arguments, redis_or_reason, run_day, smoke_day
from bench.driver import ROOT, command, machine, median, mention, pct, serve, signed_headers
from bench.fakes import FakeSlack, FakeUpstream
from bench.guard_report import render, verdicts
from bench.replica import Replica
from bench.results_file import RESULTS, sections_of, update_results
from bench.stream import StreamShape

#: settings that keep the ledger from turning an answer into a search
NO_QUOTA = {
    "ANSWER_QUOTA_PER_MINUTE": "100000",
    "ANSWER_QUOTA_PER_DAY": "10000000",
    "ANSWER_QUOTA_PER_USER_PER_DAY": "10000000",
}
#: after the last answer: the bot's after-work (its records) is in the CPU read after this
SETTLE_SECONDS = 1.0
#: after every question was answered, how long a second answer may still arrive
DUPLICATE_GRACE = 2.0


@dataclass(frozen=True)
class Variant:
    name: str
    tree: Path = ROOT
    module: str = "bot"

    def replica(self, fakes: Fakes, state_url: str, verbose: bool) -> Replica:
        settings = {
            "SLACK_API_URL": fakes.slack_url + "/api/",
            "DEVELOPER_KNOWLEDGE_MCP_URL": fakes.mcp_url,
            "PAY_MCP_URL": fakes.mcp_url,
            "STATE_PREFIX": f"guard-{uuid.uuid4().hex[:8]}:",
            **NO_QUOTA,
        }
        if state_url:  # else the default: SQLite in the bot's own working directory
            settings["STATE_URL"] = state_url
        return Replica(self.name, settings, tree=self.tree, module=self.module, verbose=verbose)


@dataclass
class Fakes:
    upstream: FakeUpstream
    slack: FakeSlack = field(default_factory=FakeSlack)
    runners: list[web.AppRunner] = field(default_factory=list)
    mcp_url: str = ""
    slack_url: str = ""

    async def __aenter__(self) -> Fakes:
        self.mcp_url = await serve(self.upstream.app(), self.runners) + "/mcp"
        self.slack_url = await serve(self.slack.app(), self.runners)
        return self

    async def __aexit__(self, *exc: object) -> None:
        for runner in self.runners:
            await runner.cleanup()


class Asker:
    """Signed questions to one bot; when each was sent, its acknowledgement's time."""

    def __init__(self, bot: Replica, fakes: Fakes) -> None:
        self.bot, self.fakes = bot, fakes
        self.sent: dict[str, float] = {}
        self.acks_ms: list[float] = []
        self.not_200 = 0
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))

    async def ask(self, text: str, channel: str, user: str, surface: str = "command") -> None:
        if surface == "command":
            body, ctype = command(text, channel, user, f"{self.fakes.slack_url}/response/{channel}")
        else:
            body, ctype = mention(text, channel, user, f"{time.time():.6f}")
        self.sent[channel] = sent = time.monotonic()
        headers = signed_headers(body, ctype)
        async with self.session.post(self.bot.events_url, data=body, headers=headers) as resp:
            reply = await resp.text()
            status = resp.status
        acked = time.monotonic()
        self.acks_ms.append((acked - sent) * 1000)
        self.not_200 += status != 200
        self.fakes.slack.record(channel, "ack", reply, acked)  # an answer on the ack itself

    async def until_answered(self, channels: list[str], within: float) -> None:
        self.fakes.slack.expect(channels)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.fakes.slack.answered.wait(), within)

    async def warm_up(self) -> None:
        """One question answered before anything is counted (pools, caches of code)."""
        await self.ask("how do I warm up q999999 please?", "CWARM", "UWARM")
        await self.until_answered(["CWARM"], 30)

    def counts(self, channels: list[str]) -> dict[str, int]:
        answers = self.fakes.slack.answers
        per = [len(answers.get(c, {})) for c in channels]
        return {
            "asked": len(channels),
            "once": per.count(1),
            "none": per.count(0),
            "more": sum(1 for n in per if n > 1),
        }

    def answer_p50_ms(self, channels: list[str]) -> float:
        """The median of question → first answer, over those answered."""
        answers = self.fakes.slack.answers
        firsts = [(min(answers[c].values()), self.sent[c]) for c in channels if answers.get(c)]
        return median([(first - sent) * 1000 for first, sent in firsts])


def _question(i: int) -> str:
    return f"how do I set up thing q{i} in cloud run?"


async def burst(variant: Variant, args: argparse.Namespace, rnd: int) -> dict[str, Any]:
    """One fresh process of `variant`, one burst of distinct questions at once."""
    async with Fakes(FakeUpstream(args.latency, args.doc_latency)) as fakes:
        bot = variant.replica(fakes, "", args.verbose)
        try:
            cold = await bot.start()
            asker = Asker(bot, fakes)
            await asker.warm_up()
            cpu0 = bot.cpu_seconds()
            slack0, mcp0 = fakes.slack.calls.total(), fakes.upstream.calls.total()
            channels = [f"CB{rnd}{i:04d}" for i in range(args.burst)]
            await asyncio.gather(
                *(
                    asker.ask(_question(100_000 * (rnd + 1) + i), c, f"U{i:04d}")
                    for i, c in enumerate(channels)
                )
            )
            await asker.until_answered(channels, 30 + 5 * args.latency)
            await asyncio.sleep(SETTLE_SECONDS)
            cpu = bot.cpu_seconds() - cpu0
            rss = bot.peak_rss_mb()
            await asker.session.close()
        finally:
            bot.stop()
        return {
            "cold_start_s": cold,
            "cpu_ms": 1000 * cpu / args.burst,
            "rss_mb": rss,
            "slack_calls": (fakes.slack.calls.total() - slack0) / args.burst,
            "mcp_calls": (fakes.upstream.calls.total() - mcp0) / args.burst,
            **asker.counts(channels),
        }


async def cold_starts(variants: list[Variant], args: argparse.Namespace) -> dict[str, list[float]]:
    """Seconds from spawn to `/healthz` 200, `args.starts` times each, taking turns."""
    out: dict[str, list[float]] = {v.name: [] for v in variants}
    async with Fakes(FakeUpstream(args.latency, args.doc_latency)) as fakes:
        for _ in range(args.starts):
            for v in variants:
                bot = v.replica(fakes, "", args.verbose)
                try:
                    out[v.name].append(await bot.start())
                finally:
                    bot.stop()
    return out


def steady_plan(rate: float, seconds: float, repeat_after: float) -> list[tuple[float, str, bool]]:
    """(second, question, whether it repeats one asked at least `repeat_after` s before):
    every other question a repeat once there is one to repeat."""
    rng = random.Random(39)
    out: list[tuple[float, str, bool]] = []
    fresh: list[tuple[float, str]] = []
    for i in range(round(rate * seconds)):
        at = i / rate
        old = [text for t, text in fresh if t <= at - repeat_after]
        if i % 2 and old:
            out.append((at, rng.choice(old), True))
        else:
            fresh.append((at, _question(500_000 + i)))
            out.append((at, fresh[-1][1], False))
    return out


async def steady(variant: Variant, state_url: str, args: argparse.Namespace) -> dict[str, Any]:
    """One fresh process of `variant` on `state_url` under the steady load."""
    plan = steady_plan(args.rate, args.seconds, args.repeat_after)
    async with Fakes(FakeUpstream(args.latency, args.doc_latency)) as fakes:
        bot = variant.replica(fakes, state_url, args.verbose)
        try:
            cold = await bot.start()
            asker = Asker(bot, fakes)
            await asker.warm_up()
            cpu0, calls0 = bot.cpu_seconds(), fakes.upstream.calls["answer_query"]
            channels = [f"CS{i:05d}" for i in range(len(plan))]
            loop = asyncio.get_running_loop()
            start = loop.time() + 0.1

            async def one(i: int, at: float, text: str) -> None:
                await asyncio.sleep(max(0.0, start + at - loop.time()))
                surface = "mention" if i % 4 == 3 else "command"
                await asker.ask(text, channels[i], f"U{i % 200:03d}", surface)

            await asyncio.gather(*(one(i, at, text) for i, (at, text, _) in enumerate(plan)))
            await asker.until_answered(channels, args.drain)
            await asyncio.sleep(DUPLICATE_GRACE)
            cpu = bot.cpu_seconds() - cpu0
            rss = bot.peak_rss_mb()
            await asker.session.close()
        finally:
            bot.stop()
        repeats = [c for c, (_, _, rep) in zip(channels, plan, strict=True) if rep]
        new = [c for c, (_, _, rep) in zip(channels, plan, strict=True) if not rep]
        return {
            **asker.counts(channels),
            "repeats": len(repeats),
            "ack_p50_ms": pct(asker.acks_ms, 50),
            "ack_p99_ms": pct(asker.acks_ms, 99),
            "ack_max_ms": max(asker.acks_ms),
            "not_200": asker.not_200,
            "new_p50_ms": asker.answer_p50_ms(new),
            "repeat_p50_ms": asker.answer_p50_ms(repeats),
            "answer_calls": fakes.upstream.calls["answer_query"] - calls0,
            "new": len(new),
            "cpu_ms": 1000 * cpu / len(plan),
            "rss_mb": rss,
            "cold_start_s": cold,
        }


def day_topologies(trees: list[tuple[str, Path]]) -> tuple[Topology, ...]:
    out = []
    for i, (label, tree) in enumerate(trees):
        suffix = "-before" if i else ""
        out += [
            Topology(f"sqlite{suffix}", f"SQLite, {label}", 1, "sqlite", tree),
            Topology(f"redis{suffix}", f"2 replicas on Redis, {label}", 2, "redis", tree),
        ]
    return (*out, dataclasses.replace(TOPOLOGIES[-1], tree=trees[0][1]))


async def run(args: argparse.Namespace) -> dict[str, Any]:
    t0 = time.monotonic()
    trees = [(args.after_label, args.after)]
    trees += [(args.before_label, args.before)] if args.before else []
    variants = [Variant("after", args.after)]
    variants += [Variant("before", args.before)] if args.before else []
    result: dict[str, Any] = {}
    if "burst" in args.parts:
        naive = [
            Variant("naive", module="bench.naive_bot"),
            Variant("job", module="bench.naive_full"),
        ]
        everyone = [*variants, *naive]
        bursts: dict[str, list[dict[str, Any]]] = {v.name: [] for v in everyone}
        for rnd in range(args.rounds):
            for v in everyone[rnd % len(everyone) :] + everyone[: rnd % len(everyone)]:
                bursts[v.name].append(await burst(v, args, rnd))
        result["burst"] = bursts
        more = await cold_starts(everyone, args)
        result["cold"] = {v: [r["cold_start_s"] for r in bursts[v]] + more[v] for v in bursts}
    if "steady" in args.parts:
        redis, reason = redis_or_reason()
        if redis is None:
            raise RuntimeError(reason)
        try:
            result["steady"] = {}
            for v, (label, _) in zip(variants, trees, strict=True):
                for store, url in (("SQLite", ""), ("Redis", redis.url)):  # type: ignore[attr-defined]
                    result["steady"][f"{store}, {label}"] = await steady(v, url, args)
        finally:
            redis.kill()  # type: ignore[attr-defined]
    if "day" in args.parts:
        from bench.day_figures import day_figures

        shape = smoke_day(args) if args.quick else StreamShape()
        result["day"] = day_figures(await run_day(args, shape, day_topologies(trees)))
    result["wall_s"] = time.monotonic() - t0
    return result


def write(out: Path, report: str, day_section: str | None) -> None:
    """The guard section: this run, then the one before it (the latest two)."""
    old = sections_of(out.read_text()).get("guard", "") if out.exists() else ""
    runs = [f"### Run{part}" for part in old.split("### Run")[1:]]
    head = "## The guard (`python -m bench.guard`): the bot beside a naive bot and an older tree"
    body = "\n\n".join([head, report.strip(), *(r.strip() for r in runs[:1])])
    update_results(out, "guard", body)
    if day_section is not None:
        update_results(out, "day", day_section)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.guard", description=__doc__)
    parser.add_argument("--after", type=Path, default=ROOT, help="the tree to judge (this one)")
    parser.add_argument("--before", type=Path, default=None, help="an older tree to run beside")
    parser.add_argument("--quick", action="store_true", help="tiny and quick; writes nothing")
    parser.add_argument("--parts", default="burst,steady,day", help="which parts, comma-separated")
    parser.add_argument("--rounds", type=int, default=3, help="burst rounds")
    parser.add_argument("--burst", type=int, default=100, help="questions at once")
    parser.add_argument("--starts", type=int, default=6, help="cold starts besides the bursts'")
    parser.add_argument("--latency", type=float, default=1.0, help="answer_query, s (not the day)")
    parser.add_argument("--rate", type=float, default=20.0, help="steady questions a second")
    parser.add_argument("--seconds", type=float, default=60.0, help="steady load's length")
    parser.add_argument("--repeat-after", type=float, default=2.5, help="s before a repeat")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--verbose", action="store_true", help="show the bots' stderr")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    add_day_arguments(parser)
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    args.parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    args.after = args.after.resolve()
    args.after_label = _commit_of(args.after) + (" (this tree)" if args.after == ROOT else "")
    args.before_label = None
    if args.before is not None:
        args.before = args.before.resolve()
        args.before_label = _commit_of(args.before)
    if args.quick:
        args.rounds, args.starts, args.burst, args.latency, args.doc_latency = 1, 1, 10, 0.05, 0.01
        args.rate, args.seconds, args.repeat_after, args.drain = 10.0, 2.0, 0.5, 20.0
    result = asyncio.run(run(args))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1, default=str))
    line = "python -m bench.guard " + " ".join(argv)
    report = render(result, args, line.strip())
    print(report)
    if not args.quick:
        day = None
        if "day" in result:
            from bench.day_report import render_day

            day = render_day(result["day"], command=line, machine=machine())
        write(args.out, report, day)
        print(f"wrote {args.out}")
    broken = any(
        r["once"] < r["asked"]
        for r in [
            *result.get("steady", {}).values(),
            *(x for rs in result.get("burst", {}).values() for x in rs),
        ]
    )
    missed = [name for name, ok in verdicts(result) if not ok]
    return 1 if broken or (missed and not args.quick) else 0


def _commit_of(tree: Path) -> str:
    found = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],  # noqa: S607
        capture_output=True,
        text=True,
        check=False,
    )
    changed = subprocess.run(
        ["git", "-C", str(tree), "status", "--porcelain", "--untracked-files=no", "--", "bot"],  # noqa: S607
        capture_output=True,
        text=True,
        check=False,
    )
    return (found.stdout.strip() or tree.name) + (" + changes" if changed.stdout.strip() else "")


if __name__ == "__main__":
    raise SystemExit(main())
