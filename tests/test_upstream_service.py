"""GoogleDocsService: answers with titled references, the quota fallback, caching, single
flight, the concurrency cap, batching, input checks, status and health."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.errors import AuthError, InvalidInput, Unavailable
from bot.models import Answer
from bot.observability.metrics import Metrics
from bot.render import error_sentence, fallback_note
from bot.store import MemoryStore, Op
from bot.upstream import question_key
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, FakePay, Fault
from tests.fakes.upstream import service_for, settings_for

BUCKETS = "documents/docs.cloud.google.com/storage/docs/creating-buckets"
PRICING = "documents/firebase.google.com/docs/firestore/pricing"
MISSING = "documents/docs.cloud.google.com/storage/docs/no-such-page"


class Clock:
    """A settable UTC clock."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class Ticker:
    """A settable monotonic clock for the cache."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_ask_answers_with_titled_references(dk_server: FakeDeveloperKnowledge) -> None:
    """answer_query's text, and its references titled from get_documents in the same order."""
    dk_server.answers["How do I create a bucket?"] = (
        "Run `gcloud storage buckets create`.",
        [PRICING, BUCKETS],
    )
    async with service_for(settings_for(dk_server)) as service:
        answer = await service.ask("How do I create a bucket?")
    assert "answer" == answer.kind
    assert "Run `gcloud storage buckets create`." == answer.text
    assert [
        (PRICING, "https://firebase.google.com/docs/firestore/pricing", "Cloud Firestore pricing"),
        (BUCKETS, "https://docs.cloud.google.com/storage/docs/creating-buckets", "Create buckets"),
    ] == [(r.name, r.uri, r.title) for r in answer.references]
    assert 1 == len(dk_server.tool_calls("get_documents"))


async def test_references_fall_back_to_titles_from_urls(dk_server: FakeDeveloperKnowledge) -> None:
    """When get_documents fails (a missing name fails the whole call) the answer still comes."""
    dk_server.answers["q?"] = ("An answer.", [BUCKETS, MISSING])
    async with service_for(settings_for(dk_server)) as service:
        answer = await service.ask("q?")
    assert "An answer." == answer.text
    assert [
        ("https://docs.cloud.google.com/storage/docs/creating-buckets", "Creating buckets"),
        ("https://docs.cloud.google.com/storage/docs/no-such-page", "No such page"),
    ] == [(r.uri, r.title) for r in answer.references]


async def test_slow_titles_do_not_cost_the_answer(dk_server: FakeDeveloperKnowledge) -> None:
    """get_documents hanging past the deadline: the answer goes out with derived titles."""
    dk_server.faults.append(Fault(status=200, delay=1.5, tool="get_documents"))
    async with service_for(settings_for(dk_server, mcp_timeout_seconds=1.0)) as service:
        answer = await service.ask("How do I create a bucket?")
    assert "answer" == answer.kind
    assert {"Creating buckets", "Pricing"} == {r.title for r in answer.references}


@pytest.mark.parametrize("form", ["http", "jsonrpc", "result"])
async def test_quota_exhaustion_falls_back_to_search(
    dk_server: FakeDeveloperKnowledge, form: str
) -> None:
    """However the 429 arrives, the user gets search results and a note saying why."""
    dk_server.quota_exhausted = form
    metrics = Metrics()
    async with service_for(settings_for(dk_server), metrics=metrics) as service:
        answer = await service.ask("Create buckets")
    assert "search" == answer.kind
    assert answer.fallback is not None
    assert "search results instead" in fallback_note(answer.fallback)
    assert ["Create buckets"] == [hit.title for hit in answer.hits]
    assert 1 == len(dk_server.tool_calls("answer_query"))
    assert 1 == metrics.counter_value("gdocs_quota_fallbacks_total")


async def test_spent_daily_quota_skips_answer_query_until_midnight_pacific(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """After a per-day quota error, questions go straight to search until 00:00 in
    America/Los_Angeles (08:00 UTC in winter), not UTC midnight; then they try again."""
    dk_server.quota_exhausted = "http"  # "… requests per day"
    clock = Clock(datetime(2026, 11, 30, 18, 0, tzinfo=UTC))
    async with service_for(settings_for(dk_server), clock=clock) as service:
        await service.ask("How do I create buckets?")
        later = await service.ask("What does Firestore cost?")
        assert "search" == later.kind
        assert later.fallback
        assert 1 == len(dk_server.tool_calls("answer_query"))

        dk_server.quota_exhausted = None
        clock.now = datetime(2026, 12, 1, 0, 0, 1, tzinfo=UTC)  # UTC midnight: still paused
        assert "search" == (await service.ask("How do I list buckets?")).kind
        assert 1 == len(dk_server.tool_calls("answer_query"))
        clock.now = datetime(2026, 12, 1, 8, 0, 1, tzinfo=UTC)  # midnight Pacific
        fresh = await service.ask("How do I delete a bucket?")
    assert "answer" == fresh.kind
    assert 2 == len(dk_server.tool_calls("answer_query"))


async def test_without_the_skip_every_question_tries_answer_query(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """ANSWER_QUOTA_SKIP_UNTIL_RESET=false: each new question tries answer_query first."""
    dk_server.quota_exhausted = "result"
    settings = settings_for(dk_server, answer_quota_skip_until_reset=False)
    async with service_for(settings) as service:
        await service.ask("How do I create buckets?")
        await service.ask("What does Firestore cost?")
    assert 2 == len(dk_server.tool_calls("answer_query"))


async def test_fallback_is_not_cached_past_the_quota_reset(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A search fallback cached at 23:59:30 Pacific expires at midnight Pacific, not an hour
    later."""
    dk_server.quota_exhausted = "http"
    ticker = Ticker()
    clock = Clock(datetime(2026, 12, 1, 7, 59, 30, tzinfo=UTC))
    store = MemoryStore(clock=ticker)
    async with service_for(settings_for(dk_server), clock=clock, store=store) as service:
        await service.ask("How do I create buckets?")
        ticker.now += 20
        assert (await service.ask("How do I create buckets?")).cached
        ticker.now += 20
        clock.now += timedelta(seconds=40)
        dk_server.quota_exhausted = None
        again = await service.ask("How do I create buckets?")
    assert ("answer", False) == (again.kind, again.cached)


async def test_second_ask_is_served_from_the_cache(dk_server: FakeDeveloperKnowledge) -> None:
    """The same question again (any case or spacing) makes no upstream call."""
    metrics = Metrics()
    async with service_for(settings_for(dk_server), metrics=metrics) as service:
        first = await service.ask("How do I create a bucket?")
        calls = len(dk_server.calls)
        second = await service.ask("  how DO i   create a BUCKET? ")
    assert calls == len(dk_server.calls)
    assert not first.cached
    assert second.cached
    assert "how DO i   create a BUCKET?" == second.query, "each asker sees their own words"
    assert first.text == second.text
    assert 1 == metrics.counter_value("gdocs_cache_total", cache="answer", result="hit")


async def test_identical_concurrent_questions_share_one_upstream_call(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """200 people asking the same thing at once cost one answer_query."""
    dk_server.latency = 0.2
    async with service_for(settings_for(dk_server)) as service:
        answers = await asyncio.gather(
            *(service.ask("How do I create a bucket?") for _ in range(200))
        )
    assert 1 == len(dk_server.tool_calls("answer_query"))
    assert 1 == len({a.text for a in answers})


async def test_concurrent_calls_queue_behind_the_cap(dk_server: FakeDeveloperKnowledge) -> None:
    """With MCP_MAX_CONCURRENCY=3, twelve searches all succeed, never more than 3 at the server."""
    dk_server.latency = 0.1
    async with service_for(settings_for(dk_server, mcp_max_concurrency=3)) as service:
        answers = await asyncio.gather(*(service.search(f"buckets {i}") for i in range(12)))
    assert all(a.hits for a in answers)
    assert 3 == dk_server.max_in_flight


async def test_documents_are_fetched_twenty_at_a_time_in_order(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """25 names: two get_documents calls (20 + 5), documents in request order, then cached."""
    names = [f"documents/docs.cloud.google.com/page-{i}" for i in range(25)]
    for i, name in enumerate(names):
        dk_server.add_document(name, f"Page {i}", f"content {i}")
    async with service_for(settings_for(dk_server)) as service:
        documents = await service.docs(names)
        again = await service.docs(list(reversed(names)))
    assert names == [d.name for d in documents]
    assert [f"Page {i}" for i in range(25)] == [d.title for d in documents]
    assert [20, 5] == sorted(
        (len(c.arguments["names"]) for c in dk_server.tool_calls("get_documents")), reverse=True
    )
    assert list(reversed(names)) == [d.name for d in again]
    assert 2 == len(dk_server.tool_calls("get_documents"))


async def test_docs_accepts_urls_and_refuses_other_text(dk_server: FakeDeveloperKnowledge) -> None:
    """A docs URL is turned into its name; anything else is refused before any call."""
    async with service_for(settings_for(dk_server)) as service:
        [document] = await service.docs(
            ["https://docs.cloud.google.com/storage/docs/creating-buckets/"]
        )
        with pytest.raises(InvalidInput):
            await service.docs(["rm -rf /"])
    assert BUCKETS == document.name
    assert "# Create buckets" in document.content


async def test_search_hits_are_one_per_document_with_titles(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Chunks of the same page collapse to its best-ranked one; titles come from the docs."""
    chunks = [
        {"parent": BUCKETS, "id": "1", "content": "best chunk"},
        {"parent": PRICING, "id": "2", "content": "pricing chunk"},
        {"parent": BUCKETS, "id": "3", "content": "worse chunk"},
    ]
    dk_server.faults.append(
        Fault(
            status=200,
            tool="search_documents",
            rpc_result={"structuredContent": {"results": chunks}},
        )
    )
    async with service_for(settings_for(dk_server)) as service:
        answer = await service.search("buckets")
    assert [
        ("Create buckets", "best chunk", BUCKETS),
        ("Cloud Firestore pricing", "pricing chunk", PRICING),
    ] == [(h.title, h.snippet, h.name) for h in answer.hits]


@pytest.mark.parametrize("text", ["", "   ", "\x00\x01\n\t"])
async def test_empty_questions_are_refused_without_a_call(
    dk_server: FakeDeveloperKnowledge, text: str
) -> None:
    """Nothing to ask: InvalidInput, and the server hears nothing."""
    async with service_for(settings_for(dk_server)) as service:
        for operation in (service.ask, service.search, service.pay):
            with pytest.raises(InvalidInput) as caught:
                await operation(text)
            assert re.search("empty", error_sentence(caught.value))
    assert [] == dk_server.requests


async def test_too_long_questions_are_refused_with_the_limit(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Over MAX_QUERY_CHARS: the message says what the limit is."""
    async with service_for(settings_for(dk_server, max_query_chars=50)) as service:
        with pytest.raises(InvalidInput) as caught:
            await service.ask("why " * 20)
        assert re.search("under 50 characters", error_sentence(caught.value))
    assert [] == dk_server.requests


async def test_control_characters_are_stripped(dk_server: FakeDeveloperKnowledge) -> None:
    """NUL bytes and control characters never reach the server."""
    async with service_for(settings_for(dk_server)) as service:
        await service.search("create\x00 buckets\x07\x1b[31m now")
    assert (
        "create buckets[31m now" == dk_server.tool_calls("search_documents")[0].arguments["query"]
    )


async def test_pay_without_oauth_answers_from_general_search(
    dk_server: FakeDeveloperKnowledge, pay_server: FakePay
) -> None:
    """No Pay credentials: DK search results, with a note naming what to configure."""
    async with service_for(settings_for(dk_server, pay_server)) as service:
        answer = await service.pay("buckets", language="it-IT")
        assert not service.pay_configured
    assert answer.hits
    assert answer.fallback is not None
    assert "GOOGLE_APPLICATION_CREDENTIALS" in fallback_note(answer.fallback)
    assert [] == pay_server.calls


async def test_pay_refuses_a_malformed_language_code(dk_server: FakeDeveloperKnowledge) -> None:
    """languageCode must be a BCP-47 tag."""
    async with service_for(settings_for(dk_server)) as service:
        with pytest.raises(InvalidInput) as caught:
            await service.pay("payment request", language="Italian please")
        assert re.search("BCP-47", error_sentence(caught.value))


async def test_status_lists_each_servers_tools(
    dk_server: FakeDeveloperKnowledge, pay_server: FakePay
) -> None:
    """tools/list on DK lists its tools; Pay without OAuth is reported, not contacted."""
    async with service_for(settings_for(dk_server, pay_server)) as service:
        dk, pay = await service.status()
    assert ("developer_knowledge", True) == (dk.server, dk.ok)
    assert ("answer_query", "get_documents", "search_documents") == dk.tools
    assert ("pay", False, ()) == (pay.server, pay.ok, pay.tools)
    assert "OAuth" in pay.detail
    assert [] == pay_server.requests


async def test_status_reports_an_unreachable_server() -> None:
    """A server that cannot be reached is not ok, with the reason."""
    async with service_for(settings_for(None, mcp_max_retries=0)) as service:
        dk, _ = await service.status()
    assert not dk.ok
    assert "cannot connect" in dk.detail


async def test_recently_healthy_follows_the_last_answer(dk_server: FakeDeveloperKnowledge) -> None:
    """Healthy only once DK has answered something."""
    async with service_for(settings_for(dk_server)) as service:
        before = service.recently_healthy()
        await service.search("buckets")
        assert service.recently_healthy()
    assert not before


async def test_a_failing_server_is_not_healthy(dk_server: FakeDeveloperKnowledge) -> None:
    """503s are not answers: recently_healthy stays False."""
    dk_server.faults.extend([Fault(status=503)] * 3)
    async with service_for(settings_for(dk_server)) as service:
        with pytest.raises(Unavailable):
            await service.search("buckets")
        assert not service.recently_healthy()


async def test_upstream_calls_are_measured(dk_server: FakeDeveloperKnowledge) -> None:
    """Every tool call is counted by server, tool and outcome."""
    dk_server.faults.append(Fault(status=403, tool="answer_query"))
    metrics = Metrics()
    async with service_for(settings_for(dk_server), metrics=metrics) as service:
        await service.search("buckets")
        with pytest.raises(AuthError):
            await service.ask("How?")
    count = metrics.counter_value
    assert 1 == count("gdocs_upstream_calls_total", tool="search_documents", outcome="ok")
    assert 1 == count("gdocs_upstream_calls_total", tool="answer_query", outcome="auth")


async def test_answers_survive_a_round_trip_through_the_cache(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """What the cache gives back equals what was computed (apart from `cached` and how it
    was reused: the same words, "exact"; another wording of them, "normalised")."""
    async with service_for(settings_for(dk_server)) as service:
        first = await service.search("buckets")
        second = await service.search("buckets")
        third = await service.search("Buckets")
    assert first == second.model_copy(update={"cached": False, "reuse": None})
    assert isinstance(second, Answer)
    assert (None, "exact", "normalised") == (first.reuse, second.reuse, third.reuse)


class RecordingStore(MemoryStore):
    """A memory store that remembers the TTL each key was last written with."""

    def __init__(self) -> None:
        super().__init__()
        self.ttls: dict[str, float] = {}

    async def set(self, key: str, value: Any, codec: Any, ttl: float) -> None:
        self.ttls[key] = ttl
        await super().set(key, value, codec, ttl)

    async def batch(self, ops: Sequence[Op]) -> list[object]:
        self.ttls.update({op.key: op.ttl for op in ops if op.kind == "set"})
        return await super().batch(ops)


async def test_the_store_gets_each_kind_with_its_ttl(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Answers, searches and documents are stored with the TTLs from the settings."""
    store = RecordingStore()
    settings = settings_for(
        dk_server,
        cache_answer_ttl_seconds=111,
        cache_search_ttl_seconds=222,
        cache_document_ttl_seconds=333,
    )
    async with service_for(settings, store=store) as service:
        await service.ask("How do I create a bucket?")
        await service.search("Firestore")
    assert 111 == store.ttls["answer:" + question_key("How do I create a bucket?")]
    assert 222 == store.ttls["search:firestore"]
    assert 333 == store.ttls[f"doc:{BUCKETS}"]
