"""Many questions at once against a slow upstream, and a whole conversation's logs and
messages checked for secrets."""

from __future__ import annotations

import asyncio
import logging

import pytest

from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.slack_harness import BOT_TOKEN, SIGNING_SECRET, count_tool_calls, running_bot

COMMANDS = 500
API_KEY = "AIzaSyD-distinctive-api-key-7f3e9a1c"
CAP = 8


async def test_500_concurrent_commands_are_all_acked_and_answered_within_the_upstream_cap(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Every command is acked with 200 and answered (or told why); the upstream never sees
    more calls in flight than MCP_MAX_CONCURRENCY; the burst clears in bounded time."""
    dk_server.latency = 0.5
    tools = count_tool_calls(dk_server)
    async with running_bot(dk_server, mcp_max_concurrency=CAP, mcp_timeout_seconds=20) as bot:
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

        assert [200] * COMMANDS == [s.status for s in sent]
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
        print(f"peak={tools.peak} total={tools.total} answered={answered} told_why={told_why}")


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
    dk_server: FakeDeveloperKnowledge, caplog: pytest.LogCaptureFixture
) -> None:
    """One INFO line per request, with id, kind, route, latency and outcome; the question
    itself only ever at DEBUG."""
    caplog.set_level(logging.DEBUG)
    question = "how do I rotate a secret-sounding key?"
    async with running_bot(dk_server) as bot:
        await bot.command(question)
        await bot.mention("zebra-unicorn pricing")
        await bot.finished(2)

    lines = [r for r in caplog.records if r.name == "bot.slack.guard" and r.levelno == logging.INFO]
    fields = [(r.kind, r.route, r.outcome) for r in lines]  # type: ignore[attr-defined]
    assert [("command", "answer", "ok"), ("mention", "search", "ok")] == sorted(fields)
    assert all(isinstance(r.latency_ms, int) and r.request_id for r in lines)  # type: ignore[attr-defined]
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
        in_flight = bot.ctx.inflight.count
        drained = await bot.ctx.inflight.drain(10)

        assert (1, True) == (in_flight, drained)
        assert 1 == len(bot.fake.calls_to("chat.postMessage"))
