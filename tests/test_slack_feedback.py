"""Feedback buttons end to end: every answer and search reply carries Slack's 👍 / 👎, a
click is recorded with the answer it is about and thanked privately, a 👎 can say what was
wrong in a form, and values the bot did not make record nothing."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from bot.render import ACTION_FEEDBACK_COMMENT, FEEDBACK_MODAL_CALLBACK, decode_vote
from bot.slack.listeners.actions import VOTES_METRIC
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.slack_api import SlackCall
from tests.slack_harness import ASKER, SlackBot, running_bot

BUCKETS_URL = "https://docs.cloud.google.com/storage/docs/creating-buckets"
PRICING_URL = "https://firebase.google.com/docs/firestore/pricing"
OTHER = "UOTHER9"


def feedback_values(args: dict[str, Any]) -> tuple[str, str]:
    """(👍 value, 👎 value) of the message's feedback block, which must be its last block."""
    last = args["blocks"][-1]
    assert "context_actions" == last["type"]
    [element] = last["elements"]
    assert "feedback_buttons" == element["type"]
    return element["positive_button"]["value"], element["negative_button"]["value"]


def shown(args: dict[str, Any]) -> str:
    return json.dumps([args.get("text", ""), args.get("blocks", [])], ensure_ascii=False)


def comment_button(args: dict[str, Any]) -> dict[str, Any]:
    """The "Say what was wrong" button of a 👎's thanks, as a click sends it."""
    [ask] = [
        element
        for block in args["blocks"]
        for element in block.get("elements", [])
        if element.get("action_id") == ACTION_FEEDBACK_COMMENT
    ]
    return {k: ask[k] for k in ("action_id", "type", "value")}


async def stored_votes(bot: SlackBot) -> list[dict[str, Any]]:
    """Every vote in the bot's store, as JSON."""
    return [vote.model_dump(mode="json") for vote in await bot.deps.feedback.votes()]


async def answered(bot: SlackBot, text: str = "how do I create a bucket?") -> SlackCall:
    """Ask with /gdocs; the posted answer."""
    await bot.command(text)
    [answer] = await bot.fake.await_calls("chat.postMessage")
    await bot.finished(1)
    return answer


Ask = Callable[[SlackBot], Awaitable[object]]
SURFACES: dict[str, tuple[Ask, str, str]] = {
    "command answer": (lambda b: b.command("how do I create a bucket?"), "answer", "C1"),
    "command search": (lambda b: b.command("search firestore pricing"), "search", "C1"),
    "mention": (lambda b: b.mention("how do I create a bucket?"), "answer", "C1"),
    "direct message": (lambda b: b.dm("firestore pricing", channel="D7"), "search", "D7"),
}


@pytest.mark.parametrize("surface", SURFACES, ids=list(SURFACES))
async def test_every_answer_and_search_reply_carries_feedback_buttons_for_itself(
    dk_server: FakeDeveloperKnowledge, surface: str
) -> None:
    """Commands, mentions and DMs: the reply ends with a valid feedback block whose two
    values name one answer the bot kept, with its question, kind, channel and ts."""
    ask, kind, channel = SURFACES[surface]
    async with running_bot(dk_server) as bot:
        await ask(bot)
        [reply] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)
        up, down = feedback_values(reply.args)
        record = await bot.deps.feedback.answer(decode_vote(up).answer_id)

        assert decode_vote(up).answer_id == decode_vote(down).answer_id
        assert ("up", "down") == (decode_vote(up).vote, decode_vote(down).vote)
        assert record is not None
        assert (kind, channel, reply.result["ts"]) == (record.kind, record.channel, record.ts)
        assert [] == bot.fake.invalid_payloads


async def test_a_thumbs_up_is_recorded_with_the_answer_and_thanked_privately(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The vote holds the question, kind, tool, answer text, references, channel, ts and
    voter; the thanks is ephemeral to the voter; /metrics counts it by kind and vote."""
    async with running_bot(dk_server) as bot:
        answer = await answered(bot)
        up, _ = feedback_values(answer.args)
        sent = await bot.feedback_click(up, user=OTHER, message_ts=answer.result["ts"])
        [thanks] = await bot.fake.await_calls("chat.postEphemeral")
        await bot.finished(2)
        [vote] = await stored_votes(bot)

        assert 200 == sent.status
        assert (OTHER, "C1") == (thanks.args["user"], thanks.args["channel"])
        assert "glad it helped" in shown(thanks.args)
        assert {
            "vote": "up",
            "question": "how do I create a bucket?",
            "kind": "answer",
            "tool": "answer_query",
            "references": [BUCKETS_URL, PRICING_URL],
            "channel": "C1",
            "ts": answer.result["ts"],
            "voter": OTHER,
            "comment": "",
        }.items() <= vote.items()
        assert "Here is how" in vote["answer"]
        assert vote["time"].endswith("Z")
        assert 1 == bot.metrics.counter_value(VOTES_METRIC, kind="answer", vote="up")
        assert 'gdocs_feedback_votes_total{kind="answer",vote="up"} 1' in bot.metrics.render()
        assert [] == bot.fake.invalid_payloads


async def test_a_second_click_replaces_the_persons_vote_and_others_keep_theirs(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """One vote per person per answer: 👍 then 👎 leaves one 👎; another person's 👍 stays."""
    async with running_bot(dk_server) as bot:
        answer = await answered(bot)
        up, down = feedback_values(answer.args)
        ts = answer.result["ts"]
        await bot.feedback_click(up, message_ts=ts)
        await bot.finished(2)
        await bot.feedback_click(down, message_ts=ts, text="👎")
        await bot.feedback_click(up, user=OTHER, message_ts=ts)
        await bot.finished(4)
        votes = {vote["voter"]: vote["vote"] for vote in await stored_votes(bot)}

        assert {ASKER: "down", OTHER: "up"} == votes
        assert 1 == bot.metrics.counter_value(VOTES_METRIC, kind="answer", vote="down")
        assert 2 == bot.metrics.counter_value(VOTES_METRIC, kind="answer", vote="up")


async def test_a_thumbs_down_offers_a_form_whose_line_is_stored_with_the_vote(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """👎 → thanks with "Say what was wrong" → views.open with the click's trigger →
    the submitted line lands in the vote, and the voter is thanked for it."""
    async with running_bot(dk_server) as bot:
        answer = await answered(bot, "search firestore pricing")
        _, down = feedback_values(answer.args)
        await bot.feedback_click(down, message_ts=answer.result["ts"], text="👎")
        [thanks] = await bot.fake.await_calls("chat.postEphemeral")
        await bot.finished(2)
        click = await bot.action(comment_button(thanks.args), ephemeral=True)
        [opened] = await bot.fake.await_calls("views.open")
        await bot.finished(3)
        modal = opened.args["view"]
        sent = await bot.view_submission(
            FEEDBACK_MODAL_CALLBACK,
            modal["private_metadata"],
            {"comment": {"comment": "The pricing page is out of date"}},
        )
        notes = await bot.fake.await_calls("chat.postEphemeral", 2)
        await bot.finished(4)
        [vote] = await stored_votes(bot)

        assert 200 == click.status
        assert opened.args["trigger_id"].startswith("trigger-a")
        assert FEEDBACK_MODAL_CALLBACK == modal["callback_id"]
        assert (200, "") == (sent.status, sent.body)
        assert ("down", "search") == (vote["vote"], vote["kind"])
        assert "The pricing page is out of date" == vote["comment"]
        assert "note is saved" in shown(notes[1].args)
        assert [] == bot.fake.invalid_payloads


async def test_an_empty_form_changes_nothing(dk_server: FakeDeveloperKnowledge) -> None:
    """Sending the optional line empty keeps the 👎 as it was, without a comment."""
    async with running_bot(dk_server) as bot:
        answer = await answered(bot)
        _, down = feedback_values(answer.args)
        await bot.feedback_click(down, message_ts=answer.result["ts"], text="👎")
        await bot.finished(2)
        sent = await bot.view_submission(
            FEEDBACK_MODAL_CALLBACK, down, {"comment": {"comment": None}}
        )
        await bot.finished(3)
        [vote] = await stored_votes(bot)

        assert (200, "") == (sent.status, sent.body)
        assert ("down", "") == (vote["vote"], vote["comment"])
        assert 1 == len(bot.fake.calls_to("chat.postEphemeral"))  # the click's thanks only


@pytest.mark.parametrize(
    "value",
    ["fb1:up:no-such-answer", "fb1:sideways:abc", "<!channel>", "fb1:up:" + "x" * 65, ""],
)
async def test_a_forged_or_stale_value_gets_a_notice_and_records_nothing(
    dk_server: FakeDeveloperKnowledge, value: str
) -> None:
    """A value the bot did not make, or one naming no kept answer: a short private notice,
    no vote, no metric."""
    async with running_bot(dk_server) as bot:
        sent = await bot.feedback_click(value)
        [notice] = await bot.fake.await_calls("chat.postEphemeral")
        await bot.finished(1)

        assert 200 == sent.status
        assert "out of date or was not made by this bot" in shown(notice.args)
        assert [] == await stored_votes(bot)
        assert 0 == bot.metrics.counter_value(VOTES_METRIC)
        assert [] == bot.fake.invalid_payloads


async def test_a_form_naming_no_kept_answer_is_refused_in_the_form(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Slack keeps the form open with the reason under the field; nothing is stored."""
    async with running_bot(dk_server) as bot:
        sent = await bot.view_submission(
            FEEDBACK_MODAL_CALLBACK, "fb1:down:gone", {"comment": {"comment": "wrong"}}
        )
        await bot.finished(1)
        body = json.loads(sent.body)

        assert "errors" == body["response_action"]
        assert "out of date" in body["errors"]["comment"]
        assert [] == await stored_votes(bot)
