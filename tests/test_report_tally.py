"""The per-day counters the bot keeps for `gdocs-bot report`, as the bot writes them while
it answers over signed HTTP: identical questions in flight count as shared, answer_query
calls the server refuses count as refused, and a store that fails a count loses the count,
never the answer."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from bot.quota import pacific_day
from bot.report import DailyTally, collect
from bot.store import MemoryStore, StoreError
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.slack_harness import SlackBot, running_bot


async def _today(bot: SlackBot) -> dict[str, int]:
    day = pacific_day(datetime.now(UTC))
    found = await collect(bot.deps.store)
    return {name: n for d, name, n in found.counters if d == day}


async def test_identical_questions_in_flight_count_one_call_and_one_shared_answer(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Two people ask the same thing at once: one answer_query call, two generated answers,
    one of them counted as shared in flight."""
    dk_server.latency = 0.5
    async with running_bot(dk_server) as bot:
        await asyncio.gather(
            bot.command("how do I create a bucket?", user="U1AAAAAAA"),
            bot.command("How do I create a bucket", user="U2BBBBBBB"),
        )
        await bot.finished(2)
        counts = await _today(bot)

    assert 1 == len(dk_server.tool_calls("answer_query"))
    assert {"questions": 2, "generated": 2, "reuse:shared": 1, "answer_query:made": 1} == counts


async def test_a_call_the_server_refuses_is_counted_as_refused(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Google's 429 for the day: the call was made and refused, and the question got
    search results because of the day's quota."""
    dk_server.quota_exhausted = "http"
    async with running_bot(dk_server) as bot:
        await bot.command("how do I create a bucket?")
        await bot.finished(1)
        counts = await _today(bot)

    assert 1 == len(dk_server.tool_calls("answer_query"))
    assert {
        "questions": 1,
        "answer_query:made": 1,
        "answer_query:refused": 1,
        "search:quota_day": 1,
    } == counts


class _FailingCounters(MemoryStore):
    async def incr(self, key: str, amount: int, ttl: float) -> int:
        raise StoreError("the state store is not answering")


async def test_a_count_the_store_refuses_is_lost_quietly() -> None:
    """DailyTally.count never raises: the question it counts goes on."""
    tally = DailyTally(_FailingCounters(), retention_days=180, clock=lambda: datetime.now(UTC))

    await tally.count("questions", "generated")

    assert 30 * 86_400 == tally.ttl  # kept as long as the answer records
