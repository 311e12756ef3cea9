"""A seeded week through the bot on its own clock (SQLite), then `gdocs-bot report`: each
Pacific day's questions, generated answers and answer_query calls are what the fakes saw
that day, and the daily quota starts again each day."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.slack_harness import SlackBot, running_bot
from tests.test_cli import gdocs

pytestmark = pytest.mark.timeout(120)

#: 10:00 Pacific on Monday 23 November 2026
MONDAY = datetime(2026, 11, 23, 18, tzinfo=UTC)
QUOTA = 4
TOPICS = [
    "how do I create a bucket?",
    "how do I delete a bucket?",
    "what is firestore pricing?",
    "how do I deploy to cloud run?",
    "how do I rotate service account keys?",
    "how do I list buckets in a project?",
    "what are cloud storage classes?",
    "firestore pricing",
    "search qqqzzzx",
]
#: questions asked each day of the week (Sunday: none), as indexes into TOPICS
WEEK = [
    [0, 1, 0, 2, 7],
    [3, 4, 5, 6, 0, 1, 8],
    [2, 7, 8],
    [0, 3, 4, 5, 6, 1, 2, 8, 7],
    [5, 6, 0],
    [1, 8],
    [],
]


@dataclass
class Clock:
    now: datetime = MONDAY

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Seen:
    """What the fakes saw, per Pacific day."""

    questions: list[int] = field(default_factory=list)
    generated: list[int] = field(default_factory=list)
    answer_query: list[int] = field(default_factory=list)


def _generated_posts(bot: SlackBot) -> int:
    return sum("Here is how" in json.dumps(c.args) for c in bot.fake.calls_to("chat.postMessage"))


async def seed_week(bot: SlackBot, dk: FakeDeveloperKnowledge, clock: Clock) -> Seen:
    seen, asked = Seen(), 0
    for day, questions in enumerate(WEEK):
        clock.now = MONDAY + timedelta(days=day)
        calls, posts = len(dk.tool_calls("answer_query")), _generated_posts(bot)
        for n, topic in enumerate(questions):
            clock.now += timedelta(minutes=7)
            asked += 1
            await bot.command(TOPICS[topic], user=f"U{day}{n:02d}SEED", channel=f"C{n % 3}")
            await bot.finished(asked)
        seen.questions.append(len(questions))
        seen.generated.append(_generated_posts(bot) - posts)
        seen.answer_query.append(len(dk.tool_calls("answer_query")) - calls)
    return seen


async def test_each_day_of_a_week_counts_what_the_fakes_saw_that_day(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """Seven days on the bot's clock: the report's days are those days, each with the
    questions asked, the generated answers posted and the answer_query calls made then;
    no day makes more calls than the daily quota, which comes back the next day."""
    clock = Clock()
    state_url = f"sqlite:///{tmp_path}/state.db"
    async with running_bot(
        dk_server,
        clock=clock,
        state_url=state_url,
        answer_quota_per_day=QUOTA,
        answer_quota_per_minute=0,
        # the store expires keys on the real clock, not the bot's: nothing is kept (a kept
        # quota fallback would outlive its simulated day), so each day needs its own quota
        cache_answer_ttl_seconds=0,
        cache_search_ttl_seconds=0,
        # a shared machine's slow write must not send counts to per-process state
        state_timeout_seconds=5,
    ) as bot:
        seen = await seed_week(bot, dk_server, clock)
    until = (MONDAY + timedelta(days=6)).date().isoformat()
    result = await asyncio.to_thread(
        gdocs,
        tmp_path,
        "report",
        "--format",
        "json",
        "--until",
        until,
        STATE_URL=state_url,
        ANSWER_QUOTA_PER_DAY=str(QUOTA),
    )
    # the CLI reads the file the bot wrote; its own clock is not the bot's, hence --until
    report = json.loads(result.stdout)
    days = report["days"]

    assert 0 == result.returncode, result.stderr
    assert seen.questions == [d["questions"] for d in days]
    assert seen.generated == [d["generated"] for d in days]
    assert seen.answer_query == [d["answer_query"]["made"] for d in days]
    assert all(made <= QUOTA for made in seen.answer_query)
    assert QUOTA in seen.answer_query  # some day hit the quota…
    assert any(d["search_only_why"]["quota_day"] for d in days)  # …and said so
    assert sum(seen.questions) == report["total"]["questions"]
    assert QUOTA == report["quota_per_day"]
