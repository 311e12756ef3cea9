"""The thread status under a direct-message question while the bot works
(`assistant.threads.setStatus`), over signed HTTP against the recording fake Slack."""

from __future__ import annotations

from bot.render import assistant_status, loading_messages
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, Fault
from tests.slack_harness import running_bot

DM_TS = "1710000100.000777"


async def test_dm_question_shows_a_status_while_the_answer_is_worked_on(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The status (with loading messages) is up under the question while the docs server is
    still working; the answer lands in the DM, then the status is taken down."""
    dk_server.latency = 1.0
    async with running_bot(dk_server) as bot:
        await bot.dm("how do I create a bucket?", channel="D42", ts=DM_TS)
        [status] = await bot.fake.await_calls("assistant.threads.setStatus")
        posted_while_working = len(bot.fake.calls_to("chat.postMessage"))
        [answer] = await bot.fake.await_calls("chat.postMessage")
        assert [("dm", "ok")] == await bot.finished(1)
        started, cleared = bot.fake.calls_to("assistant.threads.setStatus")

        assert 0 == posted_while_working
        assert status is started
        assert ("D42", DM_TS) == (started.args["channel_id"], started.args["thread_ts"])
        assert assistant_status("answer") == started.args["status"]
        assert loading_messages("answer") == started.args["loading_messages"]
        assert ("D42", None) == (answer.args["channel"], answer.args.get("thread_ts"))
        # the answer went to the DM's top level, not the status's thread: cleared explicitly
        assert ("D42", DM_TS, "") == (
            cleared.args["channel_id"],
            cleared.args["thread_ts"],
            cleared.args["status"],
        )
        calls = [c.method for c in bot.fake.calls]
        assert calls.index("assistant.threads.setStatus") < calls.index("chat.postMessage")
        assert [] == bot.fake.calls_to("reactions.add")
        assert [] == bot.fake.invalid_payloads


async def test_answer_in_the_dm_thread_lets_slack_clear_the_status(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A question in a DM thread gets the status on that thread; the answer posted there
    clears it (Slack does), so the bot sends no second call."""
    async with running_bot(dk_server) as bot:
        await bot.dm("firestore pricing", channel="D42", thread_ts="1710000100.000001")
        await bot.finished(1)
        [status] = bot.fake.calls_to("assistant.threads.setStatus")
        [answer] = bot.fake.calls_to("chat.postMessage")

        assert ("D42", "1710000100.000001") == (status.args["channel_id"], status.args["thread_ts"])
        assert assistant_status("search") == status.args["status"]
        assert "1710000100.000001" == answer.args["thread_ts"]


async def test_upstream_failure_in_a_dm_clears_the_status(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """When the docs server is down the DM gets a short reason and the status goes away."""
    dk_server.faults.extend(Fault(status=503) for _ in range(4))
    async with running_bot(dk_server, mcp_max_retries=1) as bot:
        await bot.dm("how do I create a bucket?", channel="D42", thread_ts="1710000100.000002")
        assert [("dm", "unavailable")] == await bot.finished(1)
        [notice] = bot.fake.calls_to("chat.postMessage")
        started, cleared = bot.fake.calls_to("assistant.threads.setStatus")

        assert "isn't answering right now" in notice.args["text"]
        assert assistant_status("answer") == started.args["status"]
        assert ("D42", "1710000100.000002", "") == (
            cleared.args["channel_id"],
            cleared.args["thread_ts"],
            cleared.args["status"],
        )


async def test_a_refused_status_does_not_stop_the_answer(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The status is only a progress signal: if Slack refuses it, the answer still comes."""
    async with running_bot(dk_server) as bot:
        bot.fake.fail("assistant.threads.setStatus", "not_allowed_token_type", times=2)
        await bot.dm("firestore pricing", channel="D42")
        assert [("dm", "ok")] == await bot.finished(1)
        assert 1 == len(bot.fake.calls_to("chat.postMessage"))


async def test_help_in_a_dm_sets_no_status(dk_server: FakeDeveloperKnowledge) -> None:
    """Nothing to work on, nothing to show: help is posted straight away."""
    async with running_bot(dk_server) as bot:
        await bot.dm("help", channel="D42")
        await bot.finished(1)
        assert [] == bot.fake.calls_to("assistant.threads.setStatus")
        assert 1 == len(bot.fake.calls_to("chat.postMessage"))


async def test_channels_keep_the_reaction_not_the_status(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A mention in a channel shows progress as a reaction; no thread status there."""
    async with running_bot(dk_server) as bot:
        await bot.mention("firestore pricing", ts="1710000000.000100")
        await bot.finished(1)
        assert [] == bot.fake.calls_to("assistant.threads.setStatus")
        assert 1 == len(bot.fake.calls_to("reactions.add"))
