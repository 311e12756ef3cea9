"""What one question costs the store, counted (deterministic, so asserted): the store calls
made before Slack's acknowledgement and for a whole question, on the bot as it runs.

Each call is one round trip (a batch is one); what was called is printed on failure."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from slack_bolt.context.ack.async_ack import AsyncAck

from bot.store import ResilientStore
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.slack_harness import SlackBot, running_bot
from tests.slack_requests import BOT_USER_ID

QUESTION = "firestore pricing"


@contextmanager
def calls_at_acks(monkeypatch: pytest.MonkeyPatch, counted: ResilientStore) -> Iterator[list[int]]:
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
    rate window is the only other call); a fresh search costs six store calls in all (on
    one process's store no lock is taken for the shared computation), a cached one four.
    (The process's first question also reads every channel's settings once: two calls,
    then none for CACHE_SECONDS.)"""
    async with running_bot(dk_server, state_url=state_url) as bot:
        assert bot.store_calls is not None
        with calls_at_acks(monkeypatch, bot.store_calls) as seen:
            first = await _one_question(bot, seen, lambda: bot.command("bigquery pricing"), 1)
            fresh = await _one_question(bot, seen, lambda: bot.command(QUESTION), 2)
            hit = await _one_question(bot, seen, lambda: bot.command(QUESTION), 3)
        assert 3 == len(bot.fake.calls_to("chat.postMessage"))
    # (before the ack, in all, which calls)
    assert first[0] == 4, first  # + the channel settings' counter and scan
    assert fresh[0] == 2, fresh
    # the claim and the rate window; the cache read; the titles read; the result kept; the
    # "done" batch (27 before issue 20; the shared computation's lock is Redis's alone)
    assert fresh[1] == 6, fresh
    assert fresh[2] == {"batch": 2, "hit": 1, "get": 1, "get_many": 1, "set": 1}, fresh
    assert hit[0] == 2, hit
    assert hit[1] == 4, hit
    assert hit[2] == {"batch": 2, "hit": 1, "get": 1}, hit


async def test_a_mention_writes_once_before_its_ack(
    dk_server: FakeDeveloperKnowledge, monkeypatch: pytest.MonkeyPatch, state_url: str
) -> None:
    """A mention: one store write (claim and record) before the ack, nothing else; its
    thread is remembered before the answer is posted (one more write than a command; a
    single write is counted by its kind)."""
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
    assert hit[2] == {"batch": 2, "hit": 1, "get": 1, "set": 1}, hit


@pytest.mark.parametrize("ledger", [False, True], ids=["no ledger", "ledger"])
async def test_a_generated_answer_with_cited_pages_costs_eleven_calls(
    dk_server: FakeDeveloperKnowledge,
    monkeypatch: pytest.MonkeyPatch,
    state_url: str,
    ledger: bool,
) -> None:
    """/gdocs with a generated answer: the claim and record, the rate window, the cache read,
    the cited pages' titles and the pages read, the pages fetched and the checked answer
    kept, the report's two counts and the "done" batch: plain awaited writes, eleven calls.
    The answer_query ledger (on by default) adds two: the person's and the day's counts in
    one batch, and the minute's window."""
    limits = {} if ledger else {f"answer_quota_{k}": 0 for k in ("per_minute", "per_day")}
    question = "how do I create a cloud storage bucket?"
    for page in (
        "documents/cloud.google.com/storage/new-a",
        "documents/cloud.google.com/storage/new-b",
    ):
        dk_server.add_document(page, "A page", "Run `gcloud storage buckets create gs://b`.")
    # two pages nobody cited before (their titles are read, then fetched) and a command to check
    dk_server.answers[question] = (
        "Run `gcloud storage buckets create gs://b`.",
        ["documents/cloud.google.com/storage/new-a", "documents/cloud.google.com/storage/new-b"],
    )
    async with running_bot(
        dk_server, state_url=state_url, answer_quota_per_user_per_day=10 if ledger else 0, **limits
    ) as bot:
        assert bot.store_calls is not None
        with calls_at_acks(monkeypatch, bot.store_calls) as seen:
            await _one_question(bot, seen, lambda: bot.command("how do I list my buckets?"), 1)
            fresh = await _one_question(bot, seen, lambda: bot.command(question), 2)
        assert 2 == len(dk_server.tool_calls("answer_query"))
        # the pages fetched once: the check read them from this process, not the store
        assert 2 == len(dk_server.tool_calls("get_documents"))
        assert "✓" in json.dumps(bot.fake.calls_to("chat.postMessage")[-1].args, ensure_ascii=False)
    assert fresh[0] == 2, fresh
    assert fresh[1] == (13 if ledger else 11), fresh
    expected = {"batch": 3, "incr": 2, "hit": 1, "get": 1, "get_many": 2, "set": 2}
    if ledger:
        expected = {**expected, "batch": 4, "hit": 2}
    assert fresh[2] == expected, fresh
