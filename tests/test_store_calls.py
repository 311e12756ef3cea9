"""What one question costs the store, counted (deterministic, so asserted): the store calls
made before Slack's acknowledgement and for a whole question, on the bot as it runs.

Each call is one round trip (a batch is one); what was called is printed on failure."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from slack_bolt.context.ack.async_ack import AsyncAck

from bot.store import CountingStore
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.slack_harness import SlackBot, running_bot
from tests.slack_requests import BOT_USER_ID

QUESTION = "firestore pricing"


@contextmanager
def calls_at_acks(monkeypatch: pytest.MonkeyPatch, counted: CountingStore) -> Iterator[list[int]]:
    """The store's round trips so far, noted each time Bolt acknowledges a request."""
    seen: list[int] = []
    original = AsyncAck.__call__

    async def noting(self: AsyncAck, *args: Any, **kwargs: Any) -> Any:
        seen.append(counted.round_trips)
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(AsyncAck, "__call__", noting)
    yield seen


async def _one_question(
    bot: SlackBot, seen: list[int], send: Any, nth: int
) -> tuple[int, int, Counter[str]]:
    """(calls before the ack, calls in all, what they were) for the `nth` question."""
    counted = bot.store_calls
    assert counted is not None
    before, calls = counted.round_trips, Counter(counted.calls)
    await send()
    await bot.finished(nth)
    spent = Counter(counted.calls)
    spent.subtract(calls)
    return seen[-1] - before, counted.round_trips - before, +spent


@pytest.fixture(params=["memory", "sqlite"])
def state_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return "memory://" if request.param == "memory" else f"sqlite:///{tmp_path}/state.db"


async def test_a_command_writes_once_before_its_ack_and_a_cache_hit_costs_four_calls(
    dk_server: FakeDeveloperKnowledge, monkeypatch: pytest.MonkeyPatch, state_url: str
) -> None:
    """/gdocs: the delivery's claim and its work record are one write before the ack (the
    rate window is the only other call once the channel's settings are cached); a cached
    answer costs four store calls in all."""
    async with running_bot(dk_server, state_url=state_url) as bot:
        assert bot.store_calls is not None
        with calls_at_acks(monkeypatch, bot.store_calls) as seen:
            fresh = await _one_question(bot, seen, lambda: bot.command(QUESTION), 1)
            hit = await _one_question(bot, seen, lambda: bot.command(QUESTION), 2)
        assert 2 == len(bot.fake.calls_to("chat.postMessage"))
    # (before the ack, in all, which calls)
    # the first question in a channel also reads its settings (cached for a while after)
    assert fresh[0] == 3, fresh
    assert fresh[1] <= 10, fresh  # 27 before the batches (bench/FINDINGS.md)
    assert hit[0] == 2, hit
    assert hit[1] == 4, hit
    assert hit[2] == {"batch": 2, "hit": 1, "get": 1}, hit


async def test_a_mention_writes_once_before_its_ack(
    dk_server: FakeDeveloperKnowledge, monkeypatch: pytest.MonkeyPatch, state_url: str
) -> None:
    """A mention: one store write (claim and record) before the ack, nothing else; its
    thread is remembered before the answer is posted (one more batch than a command)."""
    async with running_bot(dk_server, state_url=state_url) as bot:
        assert bot.store_calls is not None
        with calls_at_acks(monkeypatch, bot.store_calls) as seen:

            def mention(ts: str) -> Any:
                event = {
                    "type": "app_mention",
                    "user": "U123",
                    "text": f"<@{BOT_USER_ID}> {QUESTION}",
                    "ts": ts,
                    "channel": "C1",
                }
                return lambda: bot.event(event)

            fresh = await _one_question(bot, seen, mention("1710000000.000100"), 1)
            hit = await _one_question(bot, seen, mention("1710000000.000200"), 2)
    assert fresh[0] == 1, fresh
    assert hit[0] == 1, hit
    assert hit[1] == 5, hit
    assert hit[2] == {"batch": 3, "hit": 1, "get": 1}, hit
