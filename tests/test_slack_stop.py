"""Stop beyond one process (issue 24's known gaps): a Stop that reaches replica B while
replica A streams the answer stops A (two bots on one real redis-server, one fake Slack);
a Stop while the question waits for a free answer_query slot gives the wait up, and
answer_query is never called."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta
from typing import Any

import pytest

from bot import keys
from bot.store import JSON, TEXT, Codec, Store
from bot.upstream import question_key
from tests.fakes.clock import TestClock
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.redis_server import RedisServer
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack
from tests.quota_e2e_support import NO_RATE_LIMIT, T0, ask
from tests.slack_harness import ASKER, SlackBot, running_bot
from tests.test_slack_streaming import _stopped, _until

pytestmark = pytest.mark.timeout(60)

QUESTION = "how do I create a bucket?"


class StopReads:
    """The stop markers' store, counting the reads of `stop:` keys (one per check)."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.kind = inner.kind
        self.reads = 0

    async def get(self, key: str, codec: Codec[Any]) -> Any:
        if key.startswith(keys.STOP.prefix):
            self.reads += 1
        return await self.inner.get(key, codec)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def count_stop_reads(bot: SlackBot) -> StopReads:
    streams = bot.deps.streams
    assert streams.store is not None
    counted = StopReads(streams.store)
    streams.store = counted  # type: ignore[assignment]
    return counted


async def test_a_stop_delivered_to_another_replica_stops_the_streaming_one(
    dk_server: FakeDeveloperKnowledge, redis_server: RedisServer
) -> None:
    """A streams the answer while Google holds answer_query; Stop reaches B, which leaves a
    marker: A stops while the call is still held (its stream ends "Stopped.", the session
    active), appends and posts nothing after, and the marker is gone. Once released, the
    held call makes no other answer_query; the shared answer is kept: B asking the same
    question then calls Google for nothing."""
    gate = threading.Event()
    dk_server.answer_gate = gate
    fake = FakeSlack().start()
    try:
        async with (
            running_bot(dk_server, fake=fake, state_url=redis_server.url, stream_answers=True) as a,
            running_bot(dk_server, fake=fake, state_url=redis_server.url, stream_answers=True) as b,
        ):
            await a.mention(QUESTION, ts="1710000000.002100")
            await _until(lambda: dk_server.answers_held == 1)
            await b.event(_stopped("C1", "1710000000.002100"), event_id="EvStopOnB1")
            relayed = await b.finished(1)
            stopped = await a.finished(1)  # while answer_query is still held
            [stream] = fake.streams.all()
            calls_at_stop = len(fake.calls)
            marker = await a.deps.store.get(keys.STOP.key("C1", "1710000000.002100"), TEXT)
            gate.set()
            await _until_kept(a, QUESTION)  # the shared computation has kept its answer
            await b.event(_mention(QUESTION, "1710000000.002200"), event_id="EvAskOnB")
            await b.finished(2)

            assert [("stop", "relayed")] == relayed
            assert [("mention", "stopped")] == stopped
            assert 1 == dk_server.answers_held + len(dk_server.tool_calls("answer_query"))
            assert [("step-1", "Asking Google's docs", "in_progress")] == stream.tasks()
            assert "_Stopped._" == stream.text()
            assert ("active", False) == (stream.session_status, stream.open)
            assert marker is None
            later = fake.calls[calls_at_stop:]
            assert [] == [c for c in later if c.args.get("ts") == stream.ts]
            assert [] == fake.calls_to("chat.postMessage") + fake.calls_to("chat.update")
            assert 1 == len(dk_server.tool_calls("answer_query"))
            _, answered = fake.streams.all()
            assert "Here is how" in answered.text()
            assert [] == fake.invalid_payloads
    finally:
        fake.stop()


async def test_a_marker_left_before_an_append_stops_the_stream_there(
    dk_server: FakeDeveloperKnowledge, redis_server: RedisServer
) -> None:
    """A's poll is far apart: Stop (relayed by B) is noticed at the stream's next Slack call
    once the held answer arrives: the ask step's end and the answer are never appended."""
    gate = threading.Event()
    dk_server.answer_gate = gate
    fake = FakeSlack().start()
    try:
        async with (
            running_bot(dk_server, fake=fake, state_url=redis_server.url, stream_answers=True) as a,
            running_bot(dk_server, fake=fake, state_url=redis_server.url, stream_answers=True) as b,
        ):
            a.deps.streams.poll_seconds = 600.0
            reads = count_stop_reads(a)
            await a.mention(QUESTION, ts="1710000000.002300")
            await _until(lambda: dk_server.answers_held == 1)
            await b.event(_stopped("C1", "1710000000.002300"), event_id="EvStopOnB2")
            await b.finished(1)
            gate.set()
            outcomes = await a.finished(1)
            [stream] = fake.streams.all()

            assert [("mention", "stopped")] == outcomes
            assert 1 == reads.reads  # the check before the ask step's end found it
            assert [("step-1", "Asking Google's docs", "in_progress")] == stream.tasks()
            assert "_Stopped._" == stream.text()
            assert [] == fake.calls_to("chat.appendStream")
    finally:
        fake.stop()


async def test_a_stop_for_a_finished_answer_does_nothing_and_spares_a_later_follow_up(
    dk_server: FakeDeveloperKnowledge, redis_server: RedisServer
) -> None:
    """A has answered; Stop for that thread reaches B: nothing happens to A's message, and a
    follow-up asked in the thread after the Stop is answered in full, not stopped."""
    fake = FakeSlack().start()
    try:
        async with (
            running_bot(dk_server, fake=fake, state_url=redis_server.url, stream_answers=True) as a,
            running_bot(dk_server, fake=fake, state_url=redis_server.url, stream_answers=True) as b,
        ):
            await a.mention(QUESTION, ts="1710000000.002700")
            await a.finished(1)
            calls_before = len(fake.calls)
            await b.event(_stopped("C1", "1710000000.002700"), event_id="EvStopOnB3")
            assert [("stop", "relayed")] == await b.finished(1)
            untouched = [
                c.method
                for c in fake.calls[calls_before:]
                if c.method.startswith(("chat.", "agents."))
            ]
            await a.event(
                {
                    "type": "message",
                    "channel_type": "channel",
                    "channel": "C1",
                    "user": ASKER,
                    "text": "and in Go?",
                    "ts": "1710000100.000001",
                    "thread_ts": "1710000000.002700",
                }
            )
            outcomes = await a.finished(2)
            first, follow_up = fake.streams.all()

            assert [] == untouched
            assert "context_actions" == (first.final_blocks or [{}])[-1].get("type")
            assert ("thread", "ok") == outcomes[-1]
            assert "Here is how" in follow_up.text()
            assert "_Stopped._" not in follow_up.text()
    finally:
        fake.stop()


async def test_an_answer_nobody_stops_reads_the_marker_twice_on_redis(
    dk_server: FakeDeveloperKnowledge, redis_server: RedisServer
) -> None:
    """With no Stop, a quick streamed answer on Redis costs two marker reads (before the ask
    step's end and before the answer is appended): the poll's first look is a second in."""
    async with running_bot(dk_server, state_url=redis_server.url, stream_answers=True) as bot:
        reads = count_stop_reads(bot)
        await bot.mention(QUESTION, ts="1710000000.002400")
        assert [("mention", "ok")] == await bot.finished(1)

        assert 2 == reads.reads
        [stream] = bot.fake.streams.all()
        assert "Here is how" in stream.text()


async def test_on_memory_a_stop_for_no_local_work_is_only_acknowledged(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """memory:// is one process: no marker is read or written; a Stop for a thread nothing
    here works on is acknowledged and ignored, and the next answer streams as before."""
    async with running_bot(dk_server, stream_answers=True) as bot:
        await bot.event(_stopped("C1", "1710000000.002500"))
        ignored = await bot.finished(1)
        await bot.mention(QUESTION, ts="1710000000.002500")
        outcomes = await bot.finished(2)

        assert [("stop", "ignored"), ("mention", "ok")] == outcomes
        assert [] == await bot.deps.store.scan(keys.STOP.prefix, TEXT, 10)
        assert ignored[0] == ("stop", "ignored")
        [stream] = bot.fake.streams.all()
        assert "Here is how" in stream.text()


async def _until_kept(bot: SlackBot, question: str) -> None:
    """Until the answer to `question` is in the store (every 10 ms, 10 s at most)."""
    key = keys.ANSWER.key(question_key(question))
    async with asyncio.timeout(10):
        while await bot.deps.store.get(key, JSON) is None:  # noqa: ASYNC110 - no event
            await asyncio.sleep(0.01)


def _mention(text: str, ts: str) -> dict[str, Any]:
    """A mention with its own event id (each bot numbers its deliveries from one)."""
    return {
        "type": "app_mention",
        "user": ASKER,
        "text": f"<@{BOT_USER_ID}> {text}",
        "ts": ts,
        "channel": "C1",
        "event_ts": ts,
    }


class HeldSleep:
    """The quota's wait for a minute slot, held until the test lets it go (or cancelled)."""

    def __init__(self, clock: TestClock) -> None:
        self.clock = clock
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        self.entered.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        self.clock.advance(seconds)


async def test_stop_during_the_quota_wait_gives_the_wait_up_without_calling_answer_query(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Both answers of this minute are in use; the question waits for a slot ("Waiting for
    a free answer slot") and the person presses Stop: the wait ends at once, the stream
    ends "Stopped.", and answer_query is not called, not even once the minute frees."""
    clock = TestClock(T0)
    sleep = HeldSleep(clock)
    async with running_bot(
        dk_server,
        clock=clock,
        sleep=sleep,
        answer_quota_per_minute=2,
        stream_answers=True,
        mcp_timeout_seconds=60.0,  # no timeout ends the wait: only the Stop can
        **NO_RATE_LIMIT,
    ) as bot:
        for n in range(2):
            await ask(bot, f"how do I rotate key {n}?")
            clock.advance(1)
        clock.set(T0 + timedelta(seconds=52))
        await bot.mention("how do I rotate key 2?", ts="1710000000.002600")
        await sleep.entered.wait()
        [stream] = bot.fake.streams.all()
        await bot.event(_stopped("C1", "1710000000.002600"))
        outcomes = await bot.finished(4)
        async with asyncio.timeout(10):
            await sleep.cancelled.wait()
        clock.advance(60)  # the minute frees: nothing is left to take the slot
        sleep.release.set()

        assert {("stop", "ok"), ("mention", "stopped")} == set(outcomes[2:])
        assert ("step-2", "Waiting for a free answer slot (about 9 s)", "in_progress") in (
            stream.tasks()
        )
        assert "_Stopped._" == stream.text()
        assert 2 == len(dk_server.tool_calls("answer_query"))
        assert 0 == bot.deps.work.owned
        assert [] == bot.fake.invalid_payloads
