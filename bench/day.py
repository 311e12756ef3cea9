"""The day scenario: one team's day of questions through three set-ups at once.

    python -m bench.run --scenario day

Each topology gets its own fake Developer Knowledge server (its own quota: N answer_query a
real minute, M for the whole run, the "day"), its own fake Slack, its own balancer, and the
same question stream on the same schedule, side by side in one run:

- redis:    two replicas on one real redis-server (STATE_URL=redis://…), the balancer
            alternating between them and sending Slack's retries to the other one;
- sqlite:   one replica on the default store, an SQLite file in a temporary directory;
- baseline: one replica that does not plan: no cache, no ledger, no pause, no wait (every
            question that looks like one goes to answer_query until refused, then search).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from bench.balancer import Balancer
from bench.day_requests import message_ts, request_for, signed_headers, stream_by_idx, warm_up
from bench.day_slack import RecordingSlack
from bench.day_upstream import DayUpstream, run_clock
from bench.driver import free_port
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


@dataclass(frozen=True)
class Topology:
    name: str
    title: str
    replicas: int


TOPOLOGIES = (
    Topology("redis", "2 replicas on one Redis", 2),
    Topology("sqlite", "1 replica on SQLite (the default store)", 1),
    Topology("baseline", "baseline: no cache, no ledger (1 replica)", 1),
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
    cold_start_s: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)
    #: CPU seconds per second while idle, and the seconds the stream took (sent to drained)
    idle_cpu_per_s: list[float] = field(default_factory=list)
    busy_s: float = 0.0
    metrics: list[Samples] = field(default_factory=list)
    skipped: str | None = None


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
    common = {"STATE_URL": state_url, "STATE_PREFIX": f"bench-{uuid.uuid4().hex[:8]}:"}
    if topology.name != "baseline":
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


async def _serve(app: web.Application, runners: list[web.AppRunner]) -> str:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port, backlog=1024).start()
    runners.append(runner)
    return f"http://127.0.0.1:{port}"


async def start_stack(
    topology: Topology, args: argparse.Namespace, topics: dict[str, str], state_url: str
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
    mcp = await _serve(upstream.app(), stack.runners) + "/mcp"
    stack.slack_url = await _serve(stack.slack.app(), stack.runners)
    settings = settings_for(topology, args, state_url) | {
        "SLACK_API_URL": stack.slack_url + "/api/",
        "DEVELOPER_KNOWLEDGE_MCP_URL": mcp,
        "PAY_MCP_URL": mcp,
    }
    stack.replicas = [
        Replica(f"{topology.name}-{i + 1}", settings, verbose=args.verbose)
        for i in range(topology.replicas)
    ]
    stack.cold_start_s = list(await asyncio.gather(*(r.start() for r in stack.replicas)))
    stack.balancer = Balancer([r.events_url for r in stack.replicas], signed_headers)
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
        root_q = stream_by_idx(stream)[q.thread_of] if q.thread_of is not None else q
        thread = message_ts(root_q)
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


def state_url_for(topology: Topology, args: argparse.Namespace, redis_url: str) -> str:
    if topology.name == "redis":
        return redis_url
    if topology.name == "sqlite":  # an absolute path: sqlite:////tmp/…/day-state.db
        return f"sqlite:///{Path(args.workdir).resolve()}/day-state.db"
    return "memory://"


async def run_day(args: argparse.Namespace, shape: StreamShape) -> DayRun:
    stream = day_stream(shape, seed=args.seed)
    topics = {" ".join(q.text.split()): q.topic for q in stream}
    run = DayRun(args, shape, stream, [])
    redis, reason = redis_or_reason()
    try:
        for topology in TOPOLOGIES:
            if topology.name == "redis" and redis is None:
                stack = Stack(topology, DayUpstream(QuotaEnforcer(), {}), RecordingSlack())
                stack.skipped = reason
                run.stacks.append(stack)
                continue
            state_url = state_url_for(topology, args, getattr(redis, "url", ""))
            run.stacks.append(await start_stack(topology, args, topics, state_url))
        live = [s for s in run.stacks if s.skipped is None]
        await asyncio.gather(*(warm_up(s.replicas, s.slack_url) for s in live))
        await measure_idle(live, IDLE_SECONDS)
        t0 = time.monotonic()
        start = asyncio.get_running_loop().time() + 0.5
        # the same schedule, each set-up a fraction of a second after the one before: they
        # share two cores, and the same instant in all of them would be the bench's own burst
        await asyncio.gather(
            *(drive(s, stream, start + i * PHASE_SECONDS, args.drain) for i, s in enumerate(live))
        )
        run.wall_s = time.monotonic() - t0
    finally:
        for stack in run.stacks:
            for replica in stack.replicas:
                replica.stop()
            for runner in stack.runners:
                await runner.cleanup()
        if redis is not None:
            redis.kill()  # type: ignore[attr-defined]
    return run
