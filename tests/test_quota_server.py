"""The governor driving the real MCP client against the `mcp` SDK fake that enforces Google's
answer_query quota (N per minute, M per Pacific day), in each 429 form, on an injected clock:
the issue's scenario, at most one refused call per window, and a project shared with others."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Literal

import pytest

from bot.errors import QuotaExceeded
from bot.quota import SLOT_MARGIN_SECONDS, AnswerQuota, QuotaConfig, Refusal
from bot.store import MemoryStore
from bot.upstream import McpClient
from tests.fakes.dk_client import dk_client
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.quota import Form, QuotaEnforcer
from tests.test_quota_ledger import T0, Clock

FORMS = ["http", "jsonrpc", "result"]


class Asker:
    """What the docs service will do with the governor: ask it, call answer_query on a
    Permit, tell it about a 429, and fall back to search ("search") when refused."""

    def __init__(self, client: McpClient, quota: AnswerQuota) -> None:
        self.client = client
        self.quota = quota
        self.refusals: list[Refusal] = []

    async def ask(self, question: str, user: str | None = None) -> Literal["answer", "search"]:
        decision = await self.quota.acquire(user)
        if isinstance(decision, Refusal):
            self.refusals.append(decision)
            return "search"
        try:
            await self.client.call_tool("answer_query", {"query": question})
        except QuotaExceeded as exc:
            await self.quota.refused(exc.signal, user)
            return "search"
        return "answer"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def client(dk_server: FakeDeveloperKnowledge) -> AsyncIterator[McpClient]:
    async with dk_client(dk_server) as mcp:
        yield mcp


def _asker(client: McpClient, clock: Clock, config: QuotaConfig) -> Asker:
    quota = AnswerQuota(MemoryStore(clock=clock.epoch), config, clock=clock)
    return Asker(client, quota)


@pytest.mark.parametrize("form", FORMS)
async def test_three_answers_a_429_then_answers_again_once_the_minute_passes(
    dk_server: FakeDeveloperKnowledge, client: McpClient, clock: Clock, form: Form
) -> None:
    """The issue's scenario: the server allows 3 a minute, the bot expects 10. Three answers,
    the fourth is refused (one call), the next question searches without a call, and once
    the minute has passed generated answers are back (not a day-long pause)."""
    dk_server.quota = QuotaEnforcer(per_minute=3, form=form, clock=clock)
    asker = _asker(client, clock, QuotaConfig(per_minute=10, per_day=50))
    got = []
    for _ in range(4):
        got.append(await asker.ask("How do I create a bucket?"))
        clock.advance(5)
    got.append(await asker.ask("How do I delete a bucket?"))
    assert ["answer", "answer", "answer", "search", "search"] == got
    assert 4 == len(dk_server.tool_calls("answer_query"))
    assert "minute" == asker.refusals[0].limit
    assert T0 + timedelta(seconds=60) == asker.refusals[0].until

    clock.now = T0 + timedelta(seconds=60 + SLOT_MARGIN_SECONDS)
    assert "answer" == await asker.ask("How do I list buckets?")
    assert 1 == len(dk_server.quota.refused)


@pytest.mark.parametrize("form", FORMS)
async def test_a_ledger_with_the_servers_limits_is_never_refused(
    dk_server: FakeDeveloperKnowledge, client: McpClient, clock: Clock, form: Form
) -> None:
    """Same limits on both sides: a question every 7 s for 10 minutes makes no refused call,
    3 answers each minute, and stops at the day's 20."""
    dk_server.quota = QuotaEnforcer(per_minute=3, per_day=20, form=form, clock=clock)
    asker = _asker(client, clock, QuotaConfig(per_minute=3, per_day=20, per_user_per_day=0))
    answers = 0
    for _ in range(86):
        answers += await asker.ask("What does Firestore cost?") == "answer"
        clock.advance(7)
    assert (20, []) == (answers, dk_server.quota.refused)
    assert 20 == len(dk_server.tool_calls("answer_query"))
    assert {"minute", "day"} == {r.limit for r in asker.refusals}


@pytest.mark.parametrize("form", FORMS)
async def test_a_shared_project_costs_at_most_one_refused_call_per_window(
    dk_server: FakeDeveloperKnowledge, client: McpClient, clock: Clock, form: Form
) -> None:
    """Another app spends the same project's quota behind the bot's back (a call every 23 s):
    the bot, asked every 7 s for 10 minutes, is refused at most once per minute window and
    once for the day, and after that day 429 makes no call for the rest of the day."""
    quota = QuotaEnforcer(per_minute=3, per_day=20, form=form, clock=clock)
    dk_server.quota = quota
    asker = _asker(client, clock, QuotaConfig(per_minute=3, per_day=20, per_user_per_day=0))
    for second in range(600):
        if second % 23 == 22:
            quota.admit(who="other app")
        if second % 7 == 0:
            await asker.ask("What does Firestore cost?")
        clock.advance(1)
    assert len(quota.refused_for("minute")) >= 2, "the other app should cause minute 429s"
    assert 1 == quota.most_refused_in_one_window("minute")
    assert 1 == len(quota.refused_for("day"))
    assert 20 == len(quota.admitted)

    calls = len(dk_server.tool_calls("answer_query"))
    for _ in range(20):
        clock.advance(180)
        assert "search" == await asker.ask("What does Firestore cost?")
    assert calls == len(dk_server.tool_calls("answer_query"))


async def test_the_day_spent_at_the_server_means_no_call_until_midnight_pacific(
    dk_server: FakeDeveloperKnowledge, client: McpClient, clock: Clock
) -> None:
    """The server's day ends first (2 a day there): one refused call, then search with no
    call at all until 00:00 America/Los_Angeles, then answers again."""
    dk_server.quota = QuotaEnforcer(per_day=2, form="http", clock=clock)
    asker = _asker(client, clock, QuotaConfig(per_minute=10, per_day=50))
    assert ["answer", "answer", "search"] == [await asker.ask("q") for _ in range(3)]
    calls = len(dk_server.tool_calls("answer_query"))
    clock.now = datetime(2026, 12, 2, 7, 59, tzinfo=UTC)  # 23:59 PST
    assert "search" == await asker.ask("q")
    assert calls == len(dk_server.tool_calls("answer_query"))
    clock.now = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)
    assert "answer" == await asker.ask("q")
