"""Try again under an error, over signed requests to the real Bolt app against the MCP fakes
and the recording fake Slack: trouble upstream is one sentence in people's words with a
button; clicking it asks the same question again, where and how it was first asked."""

from __future__ import annotations

import json
import logging

import pytest

from bot.render import ACTION_TRY_AGAIN
from bot.slack.app import resume
from bot.slack.listeners.retry import again
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, google_error
from tests.slack_harness import ASKER, SlackBot, running_bot
from tests.test_slack_commands import blocks_text, on_tool, tools_called

pytestmark = pytest.mark.timeout(60)

QUESTION = "how do I create a Cloud Storage bucket?"
DOWN = "Google's documentation isn't answering right now — try again in a minute."


def fail_once(dk_server: FakeDeveloperKnowledge) -> None:
    dk_server.faults.append(on_tool(google_error(500, "INTERNAL", "backend error at shard 7")))


async def click_try_again(bot: SlackBot, error: dict[str, object], **where: object) -> str:
    """Click the error's Try again (as Slack sends it); the key of the click's response_url."""
    [block] = error["blocks"]  # type: ignore[misc]
    button = block["accessory"]
    assert ("Try again", ACTION_TRY_AGAIN) == (button["text"]["text"], button["action_id"])
    action = {"action_id": ACTION_TRY_AGAIN, "block_id": block.get("block_id", "b"), **button}
    clicked = await bot.action(action, **where)  # type: ignore[arg-type]
    assert 200 == clicked.status
    assert clicked.key is not None
    return clicked.key


async def test_an_outage_after_gdocs_says_one_sentence_and_try_again_answers_once_it_is_back(
    dk_server: FakeDeveloperKnowledge, caplog: pytest.LogCaptureFixture
) -> None:
    """A 500 after `/gdocs`: the note holding the question becomes one sentence (no HTTP
    status, said once) that still quotes the question, with Try again; clicking it, once the
    server is back, turns the note into "Looking that up…" and answers that very question in
    the channel, as the command would have."""
    caplog.set_level(logging.INFO)
    fail_once(dk_server)
    async with running_bot(dk_server) as bot:
        failed = await bot.command(QUESTION)
        await bot.finished(1)
        assert failed.key is not None
        _progress, error = bot.fake.responses_to(failed.key)

        assert DOWN == error["text"]
        [block] = error["blocks"]
        assert f":warning: {DOWN}\n> {QUESTION}" == block["text"]["text"]
        assert "http" not in json.dumps(error).lower()
        assert "HTTP 500" in caplog.text  # the detail is for whoever runs the bot
        assert error["replace_original"] is True

        key = await click_try_again(bot, error, ephemeral=True)
        [post] = await bot.fake.await_calls("chat.postMessage")
        outcomes = await bot.finished(2)
        progress, cleanup = bot.fake.responses_to(key)

    assert [("command", "unavailable"), ("command", "ok")] == outcomes
    assert ["answer_query", "answer_query"] == tools_called(dk_server)
    assert ("C1", True) == (post.args["channel"], QUESTION in blocks_text(post.args))
    assert f"<@{ASKER}>" in blocks_text(post.args)
    assert ("Looking that up…", True) == (progress["text"], progress["replace_original"])
    assert cleanup["delete_original"] is True
    assert 0 == bot.deps.work.owned
    assert [] == bot.fake.invalid_payloads


async def test_try_again_on_a_private_question_answers_privately_again(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """`/gdocs private …` failed: the note quotes the question without `private`, and Try
    again answers it to the asker alone — nothing is posted in the channel."""
    fail_once(dk_server)
    async with running_bot(dk_server) as bot:
        failed = await bot.command(f"private {QUESTION}")
        await bot.finished(1)
        assert failed.key is not None
        progress, error = bot.fake.responses_to(failed.key)

        assert "private" not in json.dumps(progress["blocks"])  # the ack quotes the question
        assert f":warning: {DOWN}\n> {QUESTION}" == error["blocks"][0]["text"]["text"]

        key = await click_try_again(bot, error, ephemeral=True)
        await bot.finished(2)
        _progress, answer = bot.fake.responses_to(key)

    assert "Share in channel" in json.dumps(answer)
    assert QUESTION in blocks_text(answer)
    assert [] == bot.fake.calls_to("chat.postMessage")
    assert ["answer_query", "answer_query"] == tools_called(dk_server)
    assert [] == bot.fake.invalid_payloads


async def test_try_again_under_a_mentions_error_answers_in_its_thread(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A mention's error is posted in its thread; Try again there answers in that thread."""
    fail_once(dk_server)
    async with running_bot(dk_server) as bot:
        await bot.mention(QUESTION, ts="1710000000.000300")
        [error] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)
        assert ("1710000000.000300", DOWN) == (error.args["thread_ts"], error.args["text"])

        await click_try_again(
            bot, error.args, message_ts="1710000000.000301", thread_ts="1710000000.000300"
        )
        await bot.fake.await_calls("chat.postMessage", 2)
        outcomes = await bot.finished(2)
        answer = bot.fake.calls_to("chat.postMessage")[1]

    assert ("C1", "1710000000.000300") == (answer.args["channel"], answer.args["thread_ts"])
    assert "Create buckets" in blocks_text(answer.args)
    assert ["answer_query", "answer_query"] == tools_called(dk_server)
    assert ["unavailable", "ok"] == [outcome for _, outcome in outcomes]
    assert [] == bot.fake.invalid_payloads


async def test_a_try_again_taken_over_after_a_crash_is_answered_privately_with_the_note(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Try again is recorded as the command it repeats: work another process takes over
    answers the question, still privately, with the restart note."""
    async with running_bot(dk_server) as bot:
        url = bot.fake.response_url("t1")
        clicked = {"container": {"is_ephemeral": True}, "team": {"id": "T1"}}
        kind, payload = again(clicked, f"private {QUESTION}", "C1", ASKER, url)
        record = await bot.deps.work.accept(kind, payload, key="trigger:t1")
        assert record is not None
        await resume(bot.deps, bot.app.client, record)
        await bot.finished(1)
        progress, answer = bot.fake.responses_to("t1")
        assert [] == await bot.deps.work.claim_orphans()

    assert progress["replace_original"] is True  # the error becomes "Looking that up…"
    assert "restart" in answer["text"].lower()
    assert "Share in channel" in json.dumps(answer)
    assert [] == bot.fake.calls_to("chat.postMessage")


async def test_a_forged_try_again_value_asks_nothing(dk_server: FakeDeveloperKnowledge) -> None:
    """A value the bot did not make is explained to the clicker; no server is called."""
    async with running_bot(dk_server) as bot:
        action = {"action_id": ACTION_TRY_AGAIN, "value": "<!channel> please"}
        clicked = await bot.action(action, ephemeral=True)
        assert clicked.key is not None
        [said] = bot.fake.wait_for_responses(clicked.key)

    assert "Try again button is out of date or was not made by this bot" in said["text"]
    assert [] == tools_called(dk_server)
    assert [] == bot.fake.calls_to("chat.postMessage")
