"""Many questions at once against a slow upstream, and a whole conversation's logs and
messages checked for secrets."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from bot.store import MemoryStore, ResilientStore
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, FakePay
from tests.fakes.oauth_token import FakeTokenServer
from tests.slack_harness import BOT_TOKEN, SIGNING_SECRET, count_tool_calls, running_bot

COMMANDS = 500
API_KEY = "AIzaSyD-distinctive-api-key-7f3e9a1c"
CAP = 8
STORE_BOUND = 100
DOC = "documents/firebase.google.com/docs/firestore/pricing"


# timed against Slack's 3 s: measured without coverage's tracer, which alone made the
# slowest ack 3.4 s on a 2-core machine (1.0-1.7 s without it)
@pytest.mark.no_cover
async def test_500_concurrent_commands_are_all_acked_and_answered_within_the_upstream_cap(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Every command is acked with 200 inside Slack's 3 s and answered (or told why); the
    upstream never sees more calls in flight than MCP_MAX_CONCURRENCY; afterwards nothing
    is left in flight and every store is within its bound."""
    dk_server.latency = 0.5
    tools = count_tool_calls(dk_server)
    # a store smaller than the burst, to show it stays bounded under it
    async with running_bot(
        dk_server,
        mcp_max_concurrency=CAP,
        mcp_timeout_seconds=20,
        cache_max_entries=STORE_BOUND,
        # the upstream cap is the subject here, not answer_query's quota
        answer_quota_per_minute=0,
        answer_quota_per_day=0,
    ) as bot:
        deps = bot.deps
        # 60 distinct questions (answers and keyword searches) so the cap, not the shared
        # in-flight computation of identical questions, is what bounds the upstream
        texts = [
            f"how do I configure bucket policy {i % 40}?" if i % 3 else f"bucket policy {i % 20}"
            for i in range(COMMANDS)
        ]
        async with asyncio.timeout(30):
            sent = await asyncio.gather(
                *(bot.command(text, user=f"UL{i:05d}") for i, text in enumerate(texts))
            )
            outcomes = await bot.finished(COMMANDS, within=30)
        service: Any = deps.service  # GoogleDocsService: its private maps, for the bounds

        assert [200] * COMMANDS == [s.status for s in sent]
        assert max(s.elapsed for s in sent) < 3.0
        answered = len(bot.fake.calls_to("chat.postMessage"))
        told_why = sum(
            1
            for s in sent
            if s.key and any(r.get("replace_original") for r in bot.fake.responses_to(s.key))
        )
        assert COMMANDS == answered + told_why
        assert COMMANDS == len(outcomes)
        assert tools.peak <= CAP
        assert tools.total >= 60  # every distinct question reached the server
        assert [] == bot.fake.invalid_payloads
        # the work records are finished after the outcomes are counted
        assert await deps.inflight.drain(10)
        assert (0, 0) == (deps.inflight.count, service._flights.in_flight())
        counted = deps.store
        assert isinstance(counted, ResilientStore)  # the bot counts its store calls
        store = counted.primary
        assert isinstance(store, MemoryStore)
        # 500 distinct deliveries, users and answer threads went through the bounded store
        assert [STORE_BOUND] * 3 == [store.count(n) for n in ("lease", "rate", "thread")]
        assert all(store.count(n) <= STORE_BOUND for n in ("answer", "search", "profile"))
        slowest = max(s.elapsed for s in sent)
        print(
            f"peak={tools.peak} total={tools.total} answered={answered} slowest_ack={slowest:.2f}s"
        )


async def test_no_secret_reaches_logs_or_slack_during_a_conversation(
    dk_server: FakeDeveloperKnowledge, caplog: pytest.LogCaptureFixture
) -> None:
    """Tokens, the signing secret and the API key appear in no log line and no message."""
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="bot")
    dk_server.api_key = API_KEY
    async with running_bot(dk_server, google_api_key=API_KEY) as bot:
        bot.fake.fail("chat.postMessage", "not_in_channel")
        await bot.command("how do I create a bucket?")
        await bot.command("firestore pricing")
        await bot.mention("what about in Go?")
        await bot.dm("doc https://firebase.google.com/docs/firestore/pricing")
        await bot.action(
            {
                "action_id": "show_doc:0",
                "value": "documents/firebase.google.com/docs/firestore/pricing",
            }
        )
        await bot.action({"action_id": "show_doc:0", "value": "../forged"})
        await bot.post("payload=%7B%7D", content_type="application/x-www-form-urlencoded")
        await bot.finished(6)

    logged = caplog.text + "".join(str(r.__dict__) for r in caplog.records)
    sent = bot.fake.everything_sent()
    assert len(caplog.records) > 20  # DEBUG logging really was on
    for secret in (BOT_TOKEN, SIGNING_SECRET, API_KEY):
        assert secret not in logged
        assert secret not in sent


async def test_each_request_logs_one_info_line_without_the_question(
    dk_server: FakeDeveloperKnowledge,
    pay_server: FakePay,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One INFO line per handled request, with id, kind, route, the server and tool that
    produced what was shown (search_documents when answer_query's quota is spent), latency
    and outcome; the question itself only ever at DEBUG. Deliveries that need no answer log
    one DEBUG line each and no INFO line."""
    caplog.set_level(logging.DEBUG)
    question = "how do I rotate a secret-sounding key?"
    tokens = FakeTokenServer().start()
    tokens.tokens.extend(["pay-token"] * 5)
    oauth = {
        "google_application_credentials": tokens.service_account_file(tmp_path),
        "google_cloud_project": "test-project",
    }
    try:
        async with running_bot(dk_server, pay_server, **oauth) as bot:
            await bot.command(question)
            await bot.mention("zebra-unicorn pricing")
            await bot.command("PaymentDataRequest fields")
            await bot.action({"action_id": "show_doc:0", "value": DOC})
            await bot.finished(4)
            dk_server.quota_exhausted = "http"
            await bot.command("how do I delete a bucket?")
            await bot.dm("how do buckets work?", subtype="bot_message", bot_id="B999")
            await bot.action({"action_id": "feedback_thumbs", "value": "x"})
            await bot.finished(7)
    finally:
        tokens.stop()

    lines = [
        r for r in caplog.records if r.name == "bot.slack.boundary" and r.levelno == logging.INFO
    ]
    fields = [(r.kind, r.route, r.server, r.tool, r.outcome) for r in lines]  # type: ignore[attr-defined]
    assert [
        ("action", "doc", "developer_knowledge", "get_documents", "ok"),
        ("command", "answer", "developer_knowledge", "answer_query", "ok"),
        ("command", "answer", "developer_knowledge", "search_documents", "ok_with_note"),
        ("command", "pay", "pay", "search_documentation", "ok"),
        ("mention", "search", "developer_knowledge", "search_documents", "ok"),
    ] == sorted(fields)
    assert all(isinstance(r.latency_ms, int) and r.request_id for r in lines)  # type: ignore[attr-defined]
    ignored = [r for r in caplog.records if getattr(r, "outcome", None) == "ignored"]
    assert [("action", logging.DEBUG), ("dm", logging.DEBUG)] == sorted(
        (r.kind, r.levelno)  # type: ignore[attr-defined]
        for r in ignored
    )
    above_debug = [r.getMessage() for r in caplog.records if r.levelno > logging.DEBUG]
    assert not any(question in m or "zebra-unicorn" in m for m in above_debug)


async def test_shutdown_drain_waits_for_an_answer_in_flight(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Work started before shutdown is tracked, so draining lets the answer land."""
    dk_server.latency = 1.0
    async with running_bot(dk_server) as bot:
        sent = await bot.command("how do I create a bucket?")
        assert sent.key is not None
        await bot.fake.await_responses(sent.key, 1)  # "Looking that up…": the work has begun
        in_flight = bot.deps.inflight.count
        drained = await bot.deps.inflight.drain(10)

        assert (1, True) == (in_flight, drained)
        assert 1 == len(bot.fake.calls_to("chat.postMessage"))
