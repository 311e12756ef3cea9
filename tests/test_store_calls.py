"""What one question costs the store, on the bot as it runs: the durability promise (the
delivery's claim and its work record are one write, the first call, before Slack's
acknowledgement) and a loose bound on the calls in all. Each call is one round trip (a
batch is one); what was called is printed on failure."""

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
def calls_at_acks(
    monkeypatch: pytest.MonkeyPatch, counted: ResilientStore
) -> Iterator[list[Counter[str]]]:
    """The store's calls so far, noted each time Bolt acknowledges a request."""
    seen: list[Counter[str]] = []
    original = AsyncAck.__call__

    async def noting(self: AsyncAck, *args: Any, **kwargs: Any) -> Any:
        seen.append(Counter(counted.calls))
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(AsyncAck, "__call__", noting)
    yield seen


async def _one_question(
    bot: SlackBot, seen: list[Counter[str]], send: Any, nth: int
) -> tuple[int, int, Counter[str]]:
    """(calls before the ack, calls in all, what they were) for the `nth` question; before
    the ack is the one batch with the claim and the work record."""
    counted = bot.store_calls
    assert counted is not None
    before = Counter(counted.calls)
    await send()
    await bot.finished(nth)
    at_ack, spent = seen[-1] - before, Counter(counted.calls) - before
    assert at_ack["batch"] >= 1, at_ack
    return at_ack.total(), spent.total(), spent


@pytest.fixture(params=["memory", "sqlite"])
def state_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return "memory://" if request.param == "memory" else f"sqlite:///{tmp_path}/state.db"


async def test_a_command_writes_once_before_its_ack(
    dk_server: FakeDeveloperKnowledge, monkeypatch: pytest.MonkeyPatch, state_url: str
) -> None:
    """/gdocs: the claim and the work record are written before the ack (with the rate
    window, the channel's settings and the team answers' index, which the first reply
    riding on the ack needs: it says whose answer is coming)."""
    async with running_bot(dk_server, state_url=state_url) as bot:
        assert bot.store_calls is not None
        with calls_at_acks(monkeypatch, bot.store_calls) as seen:
            fresh = await _one_question(bot, seen, lambda: bot.command(QUESTION), 1)
            hit = await _one_question(bot, seen, lambda: bot.command(QUESTION), 2)
        assert 2 == len(bot.fake.calls_to("chat.postMessage"))
    for before_ack, in_all, calls in (fresh, hit):
        assert 1 <= before_ack <= 4, calls
        assert in_all <= 15, calls


async def test_a_mention_writes_once_before_its_ack(
    dk_server: FakeDeveloperKnowledge, monkeypatch: pytest.MonkeyPatch, state_url: str
) -> None:
    """A mention: one store write (claim and record) before the ack, nothing else."""
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
    assert hit[1] <= 15, hit


@pytest.mark.parametrize("ledger", [False, True], ids=["no ledger", "ledger"])
async def test_a_generated_answer_with_cited_pages_stays_within_bounds(
    dk_server: FakeDeveloperKnowledge,
    monkeypatch: pytest.MonkeyPatch,
    state_url: str,
    ledger: bool,
) -> None:
    """/gdocs with a generated answer whose cited pages are fetched and checked: the claim
    and record first, then plain awaited reads and writes, a bounded number of them."""
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
    assert 1 <= fresh[0] <= 4, fresh  # 4: the team answers' index read (issue 42)
    assert fresh[1] <= 21, fresh  # 21: the team answers' index read first (issue 42)
