"""Private answers (`/gdocs private …`, `/gdocs -p …`) and their "Share in channel" button,
over signed HTTP against the recording fake Slack. The click comes, as Slack sends it, from
an ephemeral message: `container.is_ephemeral`, no `message`, its own response_url."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.render import ACTION_SHARE, decode_share_value, decode_vote
from bot.slack.flows.sharing import PrivateAnswer, PrivateAnswers
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.slack_harness import ASKER, Sent, SlackBot, running_bot
from tests.store_backends import open_backend

QUESTION = "how do I create a bucket?"


def shown(message: dict[str, Any]) -> str:
    return json.dumps([message.get("text", ""), message.get("blocks", [])], ensure_ascii=False)


def share_value(message: dict[str, Any]) -> str:
    """The value of the Share in channel button on a message."""
    [value] = [
        element["value"]
        for block in message["blocks"]
        if block["type"] == "actions"
        for element in block["elements"]
        if element["action_id"] == ACTION_SHARE
    ]
    return str(value)


def without_share(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`blocks` without the Share button (and a row left empty by taking it out)."""
    kept = []
    for block in blocks:
        if block["type"] == "actions":
            elements = [e for e in block["elements"] if e["action_id"] != ACTION_SHARE]
            block = block | {"elements": elements}
        if block.get("elements", True):
            kept.append(block)
    return kept


def votes_for(message: dict[str, Any]) -> tuple[str, str]:
    """(👍 value, 👎 value) of the message's closing feedback block."""
    last = message["blocks"][-1]
    assert "context_actions" == last["type"]
    [element] = last["elements"]
    return element["positive_button"]["value"], element["negative_button"]["value"]


async def ask_privately(bot: SlackBot, text: str = f"private {QUESTION}") -> dict[str, Any]:
    """Run the command; the private answer it got through its response_url."""
    sent = await bot.command(text)
    await bot.finished(1)
    assert sent.key is not None
    progress, answer = bot.fake.responses_to(sent.key)
    assert "Looking that up…" == progress["text"]
    return answer


async def click_share(bot: SlackBot, value: str, *, user: str = ASKER) -> Sent:
    action = {"action_id": ACTION_SHARE, "block_id": "share_answer", "value": value}
    return await bot.action(action, user=user, ephemeral=True, message_ts="1700000000.000009")


async def test_a_private_answer_and_its_shared_copy_take_votes_for_that_answer(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """👍 / 👎 close the private answer and its shared copy, both naming the one answer the
    bot kept (so the report counts it once); a vote on each is recorded and thanked."""
    async with running_bot(dk_server) as bot:
        private = await ask_privately(bot)
        up, down = votes_for(private)
        await bot.feedback_click(up, ephemeral=True)
        assert ("feedback", "vote_up") == (await bot.finished(2))[-1]
        await click_share(bot, share_value(private))
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(3)
        await bot.feedback_click(votes_for(post.args)[1], user="UOTHER9")
        assert ("feedback", "vote_down") == (await bot.finished(4))[-1]
        votes = await bot.deps.feedback.votes()
        record = await bot.deps.feedback.answer(decode_vote(up).answer_id)

        assert (up, down) == votes_for(post.args)
        assert record is not None
        assert (QUESTION, "C1", None) == (record.question, record.channel, record.ts)
        assert {(ASKER, "up"), ("UOTHER9", "down")} == {(v.voter, v.vote) for v in votes}
        assert {record.answer_id} == {v.answer_id for v in votes}
        assert [] == bot.fake.invalid_payloads


@pytest.mark.parametrize(
    "text",
    [f"private {QUESTION}", f"-p {QUESTION}", "private search firestore pricing"],
    ids=["private", "-p", "private-search"],
)
async def test_private_answer_reaches_only_the_asker_with_a_share_button(
    dk_server: FakeDeveloperKnowledge, text: str
) -> None:
    """Nothing is posted in the channel; the answer replaces the ephemeral progress note,
    says only the asker sees it, and carries a Share in channel button."""
    async with running_bot(dk_server) as bot:
        answer = await ask_privately(bot, text)

        assert [] == bot.fake.calls_to("chat.postMessage")
        assert [] == bot.fake.calls_to("chat.postEphemeral")
        assert ("ephemeral", True) == (answer["response_type"], answer["replace_original"])
        assert "Only you can see this answer" in shown(answer)
        assert decode_share_value(share_value(answer))
        assert "private" not in answer["blocks"][0]["text"]["text"]  # the question as asked
        assert 1 == len([c for c in dk_server.calls if c.tool != "get_documents"])
        assert [] == bot.fake.invalid_payloads


async def test_share_posts_the_same_answer_in_the_channel_naming_the_asker(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Share in channel posts the answer the asker saw, headed by who shared it, and the
    private copy becomes a short "Shared" note; the answer is shared once."""
    async with running_bot(dk_server) as bot:
        private = await ask_privately(bot)
        click = await click_share(bot, share_value(private))
        [post] = await bot.fake.await_calls("chat.postMessage")
        assert ("action", "ok") == (await bot.finished(2))[-1]
        assert click.key is not None
        [note] = bot.fake.responses_to(click.key)

        assert ("C1", None) == (post.args["channel"], post.args.get("thread_ts"))
        head = post.args["blocks"][0]["text"]["text"]
        assert f"<@{ASKER}> shared an answer to: “{QUESTION}”" == head
        assert without_share(private["blocks"][1:-2]) == post.args["blocks"][1:-1]  # the same
        assert "Only you can see" not in shown(post.args)
        assert ACTION_SHARE not in shown(post.args)
        assert (True, "Shared in the channel.") == (note["replace_original"], note["text"])
        assert 1 == len(dk_server.tool_calls("answer_query"))  # shared, not asked again

        again = await click_share(bot, share_value(private))
        assert ("action", "expired") == (await bot.finished(3))[-1]
        assert 1 == len(bot.fake.calls_to("chat.postMessage"))
        [expired] = bot.fake.calls_to("chat.postEphemeral")
        assert (ASKER, "C1") == (expired.args["user"], expired.args["channel"])
        assert "no longer have that answer" in expired.args["text"]
        assert again.status == 200
        assert [] == bot.fake.invalid_payloads


async def test_a_shared_answers_thread_takes_follow_ups_from_the_asker(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Once shared, the answer's thread is one the bot answered in: the asker's follow-up
    there is answered without a mention."""
    async with running_bot(dk_server) as bot:
        private = await ask_privately(bot)
        await click_share(bot, share_value(private))
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(2)
        await bot.channel_message("what about in Go?", thread_ts=post.result["ts"])
        assert ("thread", "ok") == (await bot.finished(3))[-1]
        query = dk_server.tool_calls("answer_query")[-1].arguments["query"]
        assert f"{QUESTION} — follow-up: what about in Go?" == query


async def test_a_private_mention_is_answered_ephemerally_and_shared_into_its_thread(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """`@gdocs private …` in a thread: the answer is ephemeral to the asker in that thread,
    and Share posts it into the same thread."""
    async with running_bot(dk_server) as bot:
        await bot.mention(f"private {QUESTION}", ts="1710000000.000201", thread_ts="1710000000.2")
        await bot.finished(1)
        [private] = bot.fake.calls_to("chat.postEphemeral")
        assert [] == bot.fake.calls_to("chat.postMessage")
        assert (ASKER, "1710000000.2") == (private.args["user"], private.args["thread_ts"])

        await click_share(bot, share_value(private.args))
        [post] = await bot.fake.await_calls("chat.postMessage")
        assert ("action", "ok") == (await bot.finished(2))[-1]
        assert ("C1", "1710000000.2") == (post.args["channel"], post.args["thread_ts"])
        assert [] == bot.fake.invalid_payloads


@pytest.mark.parametrize("value", ["share1:not-a-kept-answer", "garbage", "share1:a b", ""])
async def test_forged_or_stale_share_values_get_a_short_notice(
    dk_server: FakeDeveloperKnowledge, value: str
) -> None:
    """A value the bot did not make (or no longer keeps) posts nothing in the channel: the
    clicker alone gets one short line."""
    async with running_bot(dk_server) as bot:
        await click_share(bot, value)
        outcome = (await bot.finished(1))[-1]
        [notice] = bot.fake.calls_to("chat.postEphemeral")

        assert outcome in (("action", "invalid_input"), ("action", "expired"))
        assert [] == bot.fake.calls_to("chat.postMessage")
        assert [] == dk_server.calls
        assert ASKER == notice.args["user"]
        assert len(notice.args["text"]) < 200


async def test_someone_else_cannot_share_the_askers_answer(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A click from another person is refused, and the asker can still share."""
    async with running_bot(dk_server) as bot:
        private = await ask_privately(bot)
        await click_share(bot, share_value(private), user="UCOLLEAGUE")
        assert ("action", "invalid_input") == (await bot.finished(2))[-1]
        assert [] == bot.fake.calls_to("chat.postMessage")
        await click_share(bot, share_value(private))
        assert ("action", "ok") == (await bot.finished(3))[-1]
        assert 1 == len(bot.fake.calls_to("chat.postMessage"))


async def test_share_where_the_bot_is_not_in_the_channel_says_how_to_invite_it(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Slack refuses the post: the asker is told to /invite the bot, keeps the private
    answer, and the same button shares it once the bot is in."""
    async with running_bot(dk_server) as bot:
        private = await ask_privately(bot)
        bot.fake.fail("chat.postMessage", "not_in_channel")
        bot.fake.fail("chat.postEphemeral", "not_in_channel")
        refused = await click_share(bot, share_value(private))
        assert ("action", "not_in_channel") == (await bot.finished(2))[-1]
        assert refused.key is not None
        [hint] = bot.fake.responses_to(refused.key)

        assert "/invite" in hint["text"]
        assert hint["replace_original"] is False  # the private answer stays, button and all
        await click_share(bot, share_value(private))
        assert ("action", "ok") == (await bot.finished(3))[-1]
        assert 2 == len(bot.fake.calls_to("chat.postMessage"))  # refused once, then posted
        assert [] == bot.fake.invalid_payloads


@pytest.mark.parametrize("text", ["private", "-p", "--private", "private   "])
async def test_private_with_nothing_to_ask_shows_the_usage(
    dk_server: FakeDeveloperKnowledge, text: str
) -> None:
    """`/gdocs private` alone is not a search for "private": it shows how to use it."""
    async with running_bot(dk_server) as bot:
        sent = await bot.command(text)
        await bot.finished(1)
        usage = json.loads(sent.body)

        assert "ephemeral" == usage["response_type"]
        assert "/gdocs private" in shown(usage)
        assert ([], []) == (dk_server.calls, bot.fake.calls_to("chat.postMessage"))


async def test_private_doc_is_refused_without_fetching(dk_server: FakeDeveloperKnowledge) -> None:
    """A whole page is never private: `private doc …` says so and fetches nothing."""
    async with running_bot(dk_server) as bot:
        sent = await bot.command("private doc https://firebase.google.com/docs/firestore/pricing")
        assert ("command", "invalid_input") == (await bot.finished(1))[-1]
        assert sent.key is not None

        assert "`private` works for questions and searches" in shown(json.loads(sent.body))
        assert ([], []) == (dk_server.calls, bot.fake.calls_to("chat.postMessage"))


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_a_kept_answer_is_taken_once_on_every_backend(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Taking a kept answer removes it (a double click shares once), putting it back makes
    it takable again, and it expires with its TTL — in memory, SQLite and Redis alike."""
    kept = PrivateAnswer(
        question="how do I create a bucket? “quotes” & <marks>",
        asker=ASKER,
        channel="C1",
        thread_ts=None,
        text="fallback",
        blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": "é 😀 `code`"}}],
    )
    async with open_backend(kind, request, tmp_path) as backend:
        answers = PrivateAnswers(backend.store, ttl_seconds=60)
        answer_id = await answers.keep(kept)
        assert [kept, None] == [await answers.take(answer_id), await answers.take(answer_id)]
        await answers.keep(kept, answer_id)
        assert kept == await answers.take(answer_id)
        if kind != "redis":  # Redis expires on its own clock
            await answers.keep(kept, answer_id)
            backend.clock.advance(61)
            assert await answers.take(answer_id) is None
