"""A burst past what the process can do, end to end: the Bolt app on loopback HTTP, signed
requests, the fake Slack and the MCP fake. While the event loop runs late (held here by a
task that keeps every iteration long, as hundreds of questions in flight do), a command is
acknowledged at once with nothing waiting on its first reply, its work waits its turn, and
once the loop catches up it is answered like any other."""

from __future__ import annotations

import asyncio
import threading

import pytest

from bot.loadgate import WATCH_FROM
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.slack_harness import SlackBot, running_bot
from tests.test_loadgate import _hold_loop
from tests.test_slack_streaming import _until

pytestmark = pytest.mark.timeout(60)


async def _in_flight(bot: SlackBot, dk: FakeDeveloperKnowledge) -> list[str]:
    """Enough answers in flight, held upstream, for the gate to watch the loop; the bodies
    of their acks."""
    acks = []
    for n in range(WATCH_FROM):
        acks.append((await bot.command(f"how do I create Cloud Storage bucket {n}?")).body)
    await _until(lambda: dk.answers_held == WATCH_FROM)
    return acks


async def _hog(stop: asyncio.Event) -> None:
    """Every iteration of the loop 30 ms long until `stop` (a spin, not a sleep)."""
    while not stop.is_set():
        _hold_loop(0.03)
        await asyncio.sleep(0)


async def test_a_command_while_the_loop_is_behind_is_acked_bare_and_answered_in_turn(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The first commands (loop on time) carry their progress note on the ack; the next,
    sent while the loop is 30 ms a turn behind, is acknowledged bare, waits, and is answered
    once the loop is back on time; the wait is counted."""
    held_upstream = threading.Event()
    dk_server.answer_gate = held_upstream
    async with running_bot(dk_server) as bot:
        first = await _in_flight(bot, dk_server)  # the gate is watching
        stop = asyncio.Event()
        hog = asyncio.ensure_future(_hog(stop))
        try:
            await _until(lambda: bot.deps.inflight.gate.congested)
            second = await bot.command("how do I delete a Cloud Storage bucket?")
            await _until(lambda: bot.deps.inflight.gate.waiting == 1)
            waited = bot.deps.inflight.gate.held
        finally:
            stop.set()
            await hog
        held_upstream.set()
        await bot.finished(WATCH_FROM + 1)

        assert 200 == second.status
        assert all("Looking that up" in body for body in first)  # the first reply rode on the ack
        assert "" == second.body  # acked at once, bare
        assert 1 == waited
        answers = bot.fake.calls_to("chat.postMessage")
        assert WATCH_FROM + 1 == len(answers)
        assert any("delete a Cloud Storage bucket" in a.args["text"] for a in answers)
        second_replies = bot.fake.responses_to(second.key or "")
        assert any("Looking that up" in str(r) for r in second_replies)  # then, by response_url
        assert [] == bot.fake.invalid_payloads


async def test_with_the_gate_off_a_command_behind_a_late_loop_waits_for_its_first_reply(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """LOAD_GATE_LAG_MS=0: the same late loop, with an answer in flight, holds nothing back;
    the second command's progress note rides on its ack, as at a normal load."""
    held_upstream = threading.Event()
    dk_server.answer_gate = held_upstream
    async with running_bot(dk_server, load_gate_lag_ms=0) as bot:
        await _in_flight(bot, dk_server)
        stop = asyncio.Event()
        hog = asyncio.ensure_future(_hog(stop))
        try:
            second = await bot.command("how do I delete a Cloud Storage bucket?")
        finally:
            stop.set()
            await hog
        held_upstream.set()
        await bot.finished(WATCH_FROM + 1)
        assert "Looking that up" in second.body
        assert 0 == bot.deps.inflight.gate.held
