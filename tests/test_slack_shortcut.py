"""The message shortcut "Ask Google's docs" (`ask_gdocs`), over signed HTTP against the
recording fake Slack: answered in the message's thread naming who asked about whose
message, with the thread's first message as context for a reply, privately where the bot
may not post, and durable like a mention."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlencode

from bot.slack.app import resume
from bot.slack.listeners.commands import handle_shortcut, shortcut_payload
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.slack_harness import ASKER, running_bot

AUTHOR = "UBEN0001"
QUESTION = "how do I create a Cloud Storage bucket?"
ROOT = "We are moving our backups to Cloud Storage next week"
#: Slack's deadline for an acknowledgement
ACK_BUDGET_SECONDS = 3.0


def shown(args: dict[str, Any]) -> str:
    return json.dumps([args.get("text"), args.get("blocks")], ensure_ascii=False)


def queries(dk: FakeDeveloperKnowledge) -> list[str]:
    return [
        c.arguments["query"] for c in dk.calls if c.tool in ("answer_query", "search_documents")
    ]


async def test_the_shortcut_answers_a_message_in_its_thread_naming_both_people(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """On Ben's top-level message, Ana's shortcut is acknowledged at once (empty body) and
    the answer lands in that message's thread: "@ana asked about @ben's message"."""
    async with running_bot(dk_server) as bot:
        sent = await bot.message_shortcut(QUESTION, author=AUTHOR, ts="1710000000.000701")
        assert (200, "") == (sent.status, sent.body)
        assert sent.elapsed < ACK_BUDGET_SECONDS
        assert ("shortcut", "ok") == (await bot.finished(1))[-1]

        [answer] = bot.fake.calls_to("chat.postMessage")
        assert ("C1", "1710000000.000701") == (answer.args["channel"], answer.args["thread_ts"])
        head = answer.args["blocks"][0]["text"]["text"]
        assert head.startswith(f"<@{ASKER}> asked about <@{AUTHOR}>'s message:")
        assert [QUESTION] == queries(dk_server)
        # progress is a reaction on the message asked about
        [reaction] = bot.fake.calls_to("reactions.add")
        assert "1710000000.000701" == reaction.args["timestamp"]
        assert [] == bot.fake.responses_to(sent.key or "")
        assert [] == bot.fake.invalid_payloads


async def test_the_shortcut_on_a_reply_asks_with_the_threads_first_message(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """On a reply, the thread's first message (conversations.replies) goes with the question,
    and the answer lands in that thread."""
    async with running_bot(dk_server) as bot:
        thread = "1710000000.000800"
        bot.fake.threads[("C1", thread)] = [
            {"type": "message", "user": AUTHOR, "text": ROOT, "ts": thread}
        ]
        await bot.message_shortcut(
            "how do I do it with gcloud?", author=AUTHOR, ts="1710000000.000805", thread_ts=thread
        )
        assert ("shortcut", "ok") == (await bot.finished(1))[-1]

        [answer] = bot.fake.calls_to("chat.postMessage")
        assert thread == answer.args["thread_ts"]
        [replies] = bot.fake.calls_to("conversations.replies")
        assert (thread, "1") == (replies.args["ts"], str(replies.args["limit"]))
        assert [f"{ROOT} — follow-up: how do I do it with gcloud?"] == queries(dk_server)
        assert "how do I do it with gcloud?" in answer.args["blocks"][0]["text"]["text"]


async def test_the_shortcut_on_a_reply_in_the_bots_thread_needs_no_slack_read(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """In a thread the bot answered in, what it remembers is the context: no
    conversations.replies call."""
    async with running_bot(dk_server) as bot:
        await bot.mention(QUESTION, ts="1710000000.000900")
        await bot.finished(1)
        await bot.message_shortcut(
            "and in Europe?", author=AUTHOR, ts="1710000000.000905", thread_ts="1710000000.000900"
        )
        assert ("shortcut", "ok") == (await bot.finished(2))[-1]
        assert [] == bot.fake.calls_to("conversations.replies")
        assert f"{QUESTION} — follow-up: and in Europe?" == queries(dk_server)[-1]


async def test_where_the_bot_is_not_in_the_channel_the_answer_is_private_with_the_hint(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The bot may not post in C7: the answer goes to the shortcut's user alone through its
    response_url, with the invite hint; nothing is posted in the channel."""
    async with running_bot(dk_server) as bot:
        bot.fake.outside.add("C7")
        sent = await bot.message_shortcut(QUESTION, author=AUTHOR, channel="C7")
        assert ("shortcut", "ok") == (await bot.finished(1))[-1]

        [private] = bot.fake.responses_to(sent.key or "")
        assert "ephemeral" == private["response_type"]
        assert "/invite @gdocs" in private["text"]
        assert "asked about" in shown(private)
        assert [] == [c for c in bot.fake.calls_to("chat.postMessage") if c.result.get("ok")]
        assert [QUESTION] == queries(dk_server)
        assert [] == bot.fake.invalid_payloads


async def test_a_message_without_text_gets_a_short_private_note(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A file-only message has nothing to ask: one ephemeral line, no upstream call."""
    async with running_bot(dk_server) as bot:
        await bot.message_shortcut("", author=AUTHOR)
        assert ("shortcut", "invalid_input") == (await bot.finished(1))[-1]
        [note] = bot.fake.calls_to("chat.postEphemeral")
        assert "no text" in note.args["text"]
        assert [] == queries(dk_server)


async def test_a_retried_shortcut_is_answered_once(dk_server: FakeDeveloperKnowledge) -> None:
    """The same delivery twice (same trigger_id): one answer."""
    async with running_bot(dk_server) as bot:
        payload, _ = bot.shortcut_payload(QUESTION, author=AUTHOR)
        body = urlencode({"payload": json.dumps(payload)})
        for _ in range(2):
            sent = await bot.post_signed(body, content_type="application/x-www-form-urlencoded")
            assert 200 == sent.status
        outcomes = await bot.finished(2)
        assert [("dedupe", "duplicate"), ("shortcut", "ok")] == sorted(outcomes)
        assert 1 == len(bot.fake.calls_to("chat.postMessage"))
        assert 1 == len(queries(dk_server))


async def test_a_shortcut_accepted_before_a_crash_is_finished_with_the_note(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Work recorded as kind `shortcut` (what the listener records before its ack) and
    taken over by another process is answered in the thread, with the restart note."""
    async with running_bot(dk_server) as bot:
        payload, _ = bot.shortcut_payload(QUESTION, author=AUTHOR, ts="1710000000.000950")
        record = await bot.deps.work.accept(
            "shortcut", shortcut_payload(payload, None), key="trigger:x"
        )
        assert record is not None
        await resume(bot.deps, bot.app.client, record)
        await bot.finished(1)

        [answer] = bot.fake.calls_to("chat.postMessage")
        assert "1710000000.000950" == answer.args["thread_ts"]
        assert "restart" in shown(answer.args).lower()
        assert [] == await bot.deps.work.claim_orphans()


async def test_handle_shortcut_drops_an_unreadable_record(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A record without a channel or message ts is dropped, never answered."""
    async with running_bot(dk_server) as bot:
        record = await bot.deps.work.accept("shortcut", {"message": {}}, key=f"k{time.time_ns()}")
        assert record is not None
        await handle_shortcut(bot.deps, bot.app.client, dict(record.payload), record=record)
        assert [] == bot.fake.calls_to("chat.postMessage")
        assert [] == queries(dk_server)


async def test_the_shortcut_over_socket_mode_is_answered_in_the_thread(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A Socket Mode `interactive` envelope's payload: acknowledged, answered the same way."""
    async with running_bot(dk_server) as bot:
        payload, _ = bot.shortcut_payload(QUESTION, author=AUTHOR, ts="1710000000.000990")
        response = await bot.socket_mode(payload)
        assert 200 == response.status
        assert ("shortcut", "ok") == (await bot.finished(1))[-1]
        [answer] = bot.fake.calls_to("chat.postMessage")
        assert "1710000000.000990" == answer.args["thread_ts"]


async def test_the_shortcut_on_the_bots_own_answer_points_to_its_thread(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Asking about one of the bot's answers asks nothing upstream: one private line."""
    from tests.fakes.slack_api import BOT_USER_ID

    async with running_bot(dk_server) as bot:
        await bot.message_shortcut("Here is how to create a bucket…", author=BOT_USER_ID)
        assert ("shortcut", "invalid_input") == (await bot.finished(1))[-1]
        [note] = bot.fake.calls_to("chat.postEphemeral")
        assert "one of my own answers" in note.args["text"]
        assert [] == queries(dk_server)
