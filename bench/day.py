"""The day scenario: one team's day of questions through several set-ups at once.

    python -m bench.day [--smoke]

Each set-up gets its own fake Developer Knowledge server (its own quota: N answer_query a
real minute, M for the whole run, the "day"), its own fake Slack, its own balancer, and the
same question stream on the same schedule, side by side in one run:

- redis:    two replicas on one real redis-server (STATE_URL=redis://…), the balancer
            alternating between them and sending Slack's retries to the other one;
- sqlite:   one replica on the default store (an SQLite file in its working directory);
- baseline: one replica that does not plan: no cache, no ledger, no pause, no wait (every
            question that looks like one goes to answer_query until refused, then search);
- team:     the redis set-up where the team saved its three most asked questions as
            workspace team answers on the first morning (bench/day_team.py).

The guard (bench/guard.py) runs the same day with the redis and sqlite set-ups of two
source trees side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from aiohttp import web

from bench.balancer import Balancer
from bench.day_slack import RecordingSlack
from bench.day_team import bot_team_counts, save_team_answers, team_questions
from bench.day_upstream import DayUpstream, run_clock
from bench.driver import ROOT, command, machine, mention, serve, signed_headers
from bench.replica import Replica, Samples
from bench.stream import Question, StreamShape, day_stream
from tests.fakes.quota import QuotaEnforcer

#: a follow-up is asked once its root has its answer, or after this long without one
FOLLOW_UP_PATIENCE = 20.0
#: a follow-up comes at least this long after its root's answer was posted
READING_SECONDS = 2.0
#: after the last late retry, how long duplicates may still arrive
DUPLICATE_GRACE = 2.0
#: how long the replicas' idle CPU is measured before the day starts
IDLE_SECONDS = 5.0
#: each set-up's stream starts this much after the previous one's
PHASE_SECONDS = 0.37
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


@dataclass(frozen=True)
class Topology:
    name: str
    title: str
    replicas: int
    #: redis | sqlite (the default store, in the replica's working directory) | memory
    store: str
    #: the source tree the replicas run (another commit's checkout for the guard)
    tree: Path = ROOT
    #: how many of the day's most asked questions the team saved before the day
    team: int = 0

    @property
    def planning(self) -> bool:
        return self.store != "memory"


TOPOLOGIES = (
    Topology("redis", "2 replicas on one Redis", 2, "redis"),
    Topology("team", "2 replicas on Redis, 3 team answers saved", 2, "redis", team=3),
    Topology("sqlite", "1 replica on SQLite (the default store)", 1, "sqlite"),
    Topology("baseline", "baseline: no cache, no ledger (1 replica)", 1, "memory"),
)


@dataclass
class Stack:
    """One topology's fakes, replicas and balancer, and what they recorded."""

    topology: Topology
    upstream: DayUpstream
    slack: RecordingSlack
    replicas: list[Replica] = field(default_factory=list)
    balancer: Balancer | None = None
    runners: list[web.AppRunner] = field(default_factory=list)
    slack_url: str = ""
    settings: dict[str, str] = field(default_factory=dict)
    cold_start_s: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)
    #: CPU seconds per second while idle, and the seconds the stream took (sent to drained)
    idle_cpu_per_s: list[float] = field(default_factory=list)
    busy_s: float = 0.0
    metrics: list[Samples] = field(default_factory=list)
    skipped: str | None = None
    #: the team answers saved before the day (topic -> question), and the bot's own count
    #: of them after it (its report's team:used, team:saved)
    team_saved: dict[str, str] = field(default_factory=dict)
    bot_team: dict[str, int] = field(default_factory=dict)


@dataclass
class DayRun:
    args: argparse.Namespace
    shape: StreamShape
    stream: list[Question]
    stacks: list[Stack]
    wall_s: float = 0.0


def settings_for(topology: Topology, args: argparse.Namespace, state_url: str) -> dict[str, str]:
    """The bot's settings in `topology`: the planning bot as configured for the fake's quota,
    or the baseline with every planning policy switched off."""
    common = {"STATE_PREFIX": f"bench-{uuid.uuid4().hex[:8]}:"}
    common |= {"STATE_URL": state_url} if state_url else {}
    if topology.planning:
        return common | {
            "ANSWER_QUOTA_PER_MINUTE": str(args.per_minute),
            "ANSWER_QUOTA_PER_DAY": str(args.per_day),
            "ANSWER_QUOTA_PER_USER_PER_DAY": str(args.per_user),
        }
    return common | {
        "CACHE_ANSWER_TTL_SECONDS": "0",
        "CACHE_SEARCH_TTL_SECONDS": "0",
        "ANSWER_QUOTA_PER_MINUTE": "0",
        "ANSWER_QUOTA_PER_DAY": "0",
        "ANSWER_QUOTA_PER_USER_PER_DAY": "0",
        "ANSWER_QUOTA_WAIT_SECONDS": "0",
        "ANSWER_QUOTA_SKIP_UNTIL_RESET": "false",
    }


async def start_stack(
    topology: Topology,
    args: argparse.Namespace,
    topics: dict[str, str],
    state_url: str,
    team: dict[str, str] | None = None,
) -> Stack:
    quota = QuotaEnforcer(per_minute=args.per_minute, per_day=args.per_day, clock=run_clock())
    upstream = DayUpstream(
        quota,
        topics,
        answer_latency=args.answer_latency,
        search_latency=args.search_latency,
        doc_latency=args.doc_latency,
    )
    stack = Stack(topology, upstream, RecordingSlack())
    mcp = await serve(upstream.app(), stack.runners) + "/mcp"
    stack.slack_url = await serve(stack.slack.app(), stack.runners)
    settings = settings_for(topology, args, state_url) | {
        "SLACK_API_URL": stack.slack_url + "/api/",
        "DEVELOPER_KNOWLEDGE_MCP_URL": mcp,
        "PAY_MCP_URL": mcp,
    }
    if team:  # saved in the store the replicas share before they start
        await save_team_answers(settings, team)
        stack.team_saved = team
    stack.settings = settings
    stack.replicas = [
        Replica(f"{topology.name}-{i + 1}", settings, tree=topology.tree, verbose=args.verbose)
        for i in range(topology.replicas)
    ]
    stack.cold_start_s = list(await asyncio.gather(*(r.start() for r in stack.replicas)))
    stack.balancer = Balancer([r.events_url for r in stack.replicas])
    await stack.balancer.start()
    return stack


async def _ask(stack: Stack, q: Question, stream: list[Question], start: float) -> None:
    loop = asyncio.get_running_loop()
    await asyncio.sleep(max(0.0, start + q.at - loop.time()))
    if q.thread_of is not None:
        root = stack.slack.asked.get(q.thread_of)
        if root is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(root.answered.wait(), FOLLOW_UP_PATIENCE)
            if root.answers:  # people read the answer before they follow it up
                await asyncio.sleep(
                    max(0.0, root.answers[0].at + READING_SECONDS - time.monotonic())
                )
    thread = None
    if q.surface == "mention":
        thread = message_ts(stream[q.thread_of] if q.thread_of is not None else q)
    asked = stack.slack.expect(q.idx, q.topic, q.channel, thread)
    body, content_type = request_for(q, stream, stack.slack_url)
    asked.sent = time.monotonic()
    assert stack.balancer is not None
    await stack.balancer.send(body, content_type, q.retry)


async def measure_idle(stacks: list[Stack], seconds: float) -> None:
    """Each replica's CPU per second while nothing is asked (timers, probes): the share of
    its CPU per question that is not the questions' own."""
    before = [[r.cpu_seconds() for r in s.replicas] for s in stacks]
    await asyncio.sleep(seconds)
    for stack, cpu0 in zip(stacks, before, strict=True):
        stack.idle_cpu_per_s = [
            (r.cpu_seconds() - c) / seconds for r, c in zip(stack.replicas, cpu0, strict=True)
        ]


async def drive(stack: Stack, stream: list[Question], start: float, drain: float) -> None:
    """Send the stream on its schedule, wait (bounded) for every answer, then for the late
    retries and any duplicate they cause."""
    cpu0 = [r.cpu_seconds() for r in stack.replicas]
    t0 = time.monotonic()
    await asyncio.gather(*(_ask(stack, q, stream, start) for q in stream))
    waits = [a.answered.wait() for a in stack.slack.asked.values()]
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*waits), drain)
    assert stack.balancer is not None
    await stack.balancer.close()
    await asyncio.sleep(DUPLICATE_GRACE)
    stack.cpu_s = [r.cpu_seconds() - c for r, c in zip(stack.replicas, cpu0, strict=True)]
    stack.busy_s = time.monotonic() - t0
    stack.metrics = list(await asyncio.gather(*(r.metrics() for r in stack.replicas)))
    stack.rss_mb = [r.peak_rss_mb() for r in stack.replicas]


def redis_or_reason() -> tuple[object | None, str | None]:
    """A started RedisServer, or why the Redis topology is left out (a missing binary is
    an error under GDOCS_REQUIRE_REDIS=1, as in the test suite)."""
    if shutil.which("redis-server") is None:
        if os.environ.get("GDOCS_REQUIRE_REDIS") == "1":
            raise RuntimeError("GDOCS_REQUIRE_REDIS=1 but redis-server is not on PATH")
        return None, "redis-server is not on PATH (apt-get install redis-server to include it)"
    from tests.fakes.redis_server import RedisServer

    return RedisServer().start(), None


def state_url_for(topology: Topology, redis_url: str) -> str:
    """redis://…, memory://, or "" for the default (SQLite in the replica's directory)."""
    return {"redis": redis_url, "memory": "memory://"}.get(topology.store, "")


async def run_day(
    args: argparse.Namespace, shape: StreamShape, topologies: tuple[Topology, ...] = TOPOLOGIES
) -> DayRun:
    stream = day_stream(shape, seed=args.seed)
    topics = {" ".join(q.text.split()): q.topic for q in stream}
    run = DayRun(args, shape, stream, [])
    redis, reason = redis_or_reason()
    try:
        for topology in topologies:
            if topology.store == "redis" and redis is None:
                stack = Stack(topology, DayUpstream(QuotaEnforcer(), {}), RecordingSlack())
                stack.skipped = reason
                run.stacks.append(stack)
                continue
            state_url = state_url_for(topology, getattr(redis, "url", ""))
            team = team_questions(stream, topology.team, shape) if topology.team else None
            run.stacks.append(await start_stack(topology, args, topics, state_url, team))
        live = [s for s in run.stacks if s.skipped is None]
        await asyncio.gather(*(warm_up(s.replicas, s.slack_url) for s in live))
        await measure_idle(live, args.idle_seconds)
        t0 = time.monotonic()
        start = asyncio.get_running_loop().time() + 0.5
        # the same schedule, each set-up a fraction of a second after the one before: they
        # share two cores, and the same instant in all of them would be the bench's own burst
        await asyncio.gather(
            *(drive(s, stream, start + i * PHASE_SECONDS, args.drain) for i, s in enumerate(live))
        )
        run.wall_s = time.monotonic() - t0
        for stack in live:
            if stack.team_saved:
                stack.bot_team = await bot_team_counts(stack.settings)
    finally:
        for stack in run.stacks:
            if stack.balancer is not None:
                await stack.balancer.close()
            for replica in stack.replicas:
                replica.stop()
            for runner in stack.runners:
                await runner.cleanup()
        if redis is not None:
            redis.kill()  # type: ignore[attr-defined]
    return run


def message_ts(q: Question) -> str:
    return f"{1_700_000_000 + q.idx}.000100"


def request_for(q: Question, stream: list[Question], slack_url: str) -> tuple[str, str]:
    """The body of `q` as Slack sends it (a slash command or an app_mention), and its type.
    Slack's retries of a mention carry the same event_id: the bot dedupes by it."""
    if q.surface == "command":
        return command(q.text, q.channel, q.asker, f"{slack_url}/response/{q.idx}")
    thread = message_ts(stream[q.thread_of]) if q.thread_of is not None else None
    event_id = f"Ev{q.idx:05d}{uuid.uuid5(uuid.NAMESPACE_OID, q.text).hex[:8]}"
    ts = message_ts(q)
    return mention(q.text, q.channel, q.asker, ts, thread_ts=thread, event_id=event_id)


async def warm_up(replicas: list[Replica], slack_url: str) -> None:
    """One `/gdocs help` to each replica (its ack path and first Slack call warm, as in a
    deployed bot; no upstream call, nothing in the figures)."""
    async with aiohttp.ClientSession() as session:
        for replica in replicas:
            body, ctype = command("help", "CWARM", "UWARM", f"{slack_url}/response/999999")
            headers = signed_headers(body, ctype)
            async with session.post(replica.events_url, data=body, headers=headers) as resp:
                await resp.read()


def add_day_arguments(parser: argparse.ArgumentParser) -> None:
    day = parser.add_argument_group("the day")
    day.add_argument("--seed", type=int, default=16, help="the question stream's seed")
    day.add_argument("--per-minute", type=int, default=10, help="answer_query a minute (fake)")
    day.add_argument("--per-day", type=int, default=50, help="answer_query for the run (fake)")
    day.add_argument("--per-user", type=int, default=10, help="ANSWER_QUOTA_PER_USER_PER_DAY")
    day.add_argument("--answer-latency", type=float, default=2.0, help="answer_query, s")
    day.add_argument("--search-latency", type=float, default=0.5, help="search_documents, s")
    day.add_argument("--doc-latency", type=float, default=0.1, help="get_documents, s")
    day.add_argument("--drain", type=float, default=60.0, help="longest wait for answers, s")
    parser.set_defaults(idle_seconds=IDLE_SECONDS)


def smoke_day(args: argparse.Namespace) -> StreamShape:
    """The smoke run's tiny day, with limits and latencies scaled down to match."""
    args.per_minute, args.per_day, args.per_user = 3, 5, 2
    args.answer_latency, args.search_latency, args.doc_latency = 0.1, 0.05, 0.01
    args.drain, args.idle_seconds = 30.0, 1.0
    return SMOKE_SHAPE


def main(argv: list[str] | None = None) -> int:
    from bench.day_figures import day_figures
    from bench.day_report import day_verdicts, render_day
    from bench.results_file import RESULTS, update_results

    parser = argparse.ArgumentParser(prog="python -m bench.day", description=__doc__)
    add_day_arguments(parser)
    parser.add_argument("--smoke", action="store_true", help="a tiny day; writes nothing")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--verbose", action="store_true", help="show the bots' stderr")
    args = parser.parse_args(argv)
    shape = smoke_day(args) if args.smoke else StreamShape()
    figures = day_figures(asyncio.run(run_day(args, shape)))
    argv = sys.argv[1:] if argv is None else argv
    section = render_day(
        figures, command="python -m bench.day " + " ".join(argv), machine=machine()
    )
    print(section)
    if not args.smoke:
        update_results(args.out, "day", section)
        print(f"wrote {args.out}")
    tops = figures["topologies"].values()
    # correctness always counts: every question answered by something, every query known
    broken = any(t["answered"] < t["questions"] or t["unknown_queries"] for t in tops)
    failed = [name for name, ok in day_verdicts(figures) if not ok]
    return 1 if broken or (failed and not args.smoke) else 0


if __name__ == "__main__":
    raise SystemExit(main())
