"""Follow-ups without a mention in threads the bot answered in (`message.channels` /
`message.groups`), and everything else the bot now hears, ignored: over signed HTTP against
the recording fake Slack, with payloads built as Slack sends them."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from bot.slack.flows.routing import addresses_someone, reads_as_question, why_not_a_follow_up
from tests.fakes import slack_event_payloads as payloads
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.slack_api import BOT_USER_ID
from tests.slack_harness import ASKER, SlackBot, running_bot

THREAD = "1710000000.000100"
QUESTION = "how do I create a bucket?"
COLLEAGUE = "UCOLLEAGUE"
#: Slack calls that would mean the bot reacted to what it heard
REPLIES = (
    "chat.postMessage",
    "chat.postEphemeral",
    "reactions.add",
    "users.info",
    "assistant.threads.setStatus",
)


async def answered_thread(bot: SlackBot) -> None:
    """The asker @-mentions the bot; the answer starts the thread THREAD."""
    await bot.mention(QUESTION, ts=THREAD)
    assert [("mention", "ok")] == await bot.finished(1)


def asked(dk: FakeDeveloperKnowledge) -> list[str]:
    return [
        c.arguments["query"] for c in dk.calls if c.tool in ("answer_query", "search_documents")
    ]


def replies(bot: SlackBot) -> dict[str, int]:
    return {method: len(bot.fake.calls_to(method)) for method in REPLIES}


@pytest.mark.parametrize("channel_type", ["channel", "group"])
async def test_askers_follow_up_is_answered_in_the_thread_without_a_mention(
    dk_server: FakeDeveloperKnowledge, channel_type: Any
) -> None:
    """In a public or private channel, the asker's "what about in Go?" in the bot's thread
    is answered there, asked together with the thread's question; progress is a reaction."""
    async with running_bot(dk_server) as bot:
        await answered_thread(bot)
        await bot.channel_message(
            "what about in Go?", thread_ts=THREAD, parent_user_id=ASKER, channel_type=channel_type
        )
        assert ("thread", "ok") == (await bot.finished(2))[-1]
        answer = bot.fake.calls_to("chat.postMessage")[-1]

        assert ("C1", THREAD) == (answer.args["channel"], answer.args["thread_ts"])
        assert [QUESTION, f"{QUESTION} — follow-up: what about in Go?"] == asked(dk_server)
        assert 2 == len(bot.fake.calls_to("reactions.add"))
        assert [] == bot.fake.calls_to("assistant.threads.setStatus")
        assert [] == bot.fake.invalid_payloads


async def test_follow_up_in_the_thread_of_a_command_answer_is_answered(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A /gdocs answer starts a thread whose first message is the bot's; the command's
    asker is still the thread's asker."""
    async with running_bot(dk_server) as bot:
        await bot.command(QUESTION)
        [answer] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)
        root = answer.result["ts"]
        await bot.channel_message(
            "and how do I delete it?", thread_ts=root, parent_user_id=BOT_USER_ID
        )
        assert ("thread", "ok") == (await bot.finished(2))[-1]

        assert root == bot.fake.calls_to("chat.postMessage")[-1].args["thread_ts"]
        assert f"{QUESTION} — follow-up: and how do I delete it?" == asked(dk_server)[-1]


@pytest.mark.parametrize(
    ("policy", "answered"), [("asker", False), ("anyone", True), ("off", False)]
)
async def test_someone_elses_follow_up_is_answered_only_under_anyone(
    dk_server: FakeDeveloperKnowledge, policy: str, answered: bool
) -> None:
    """THREAD_FOLLOWUPS=asker answers the asker alone, anyone answers anyone in the thread,
    off answers nobody."""
    async with running_bot(dk_server, thread_followups=policy) as bot:
        await answered_thread(bot)
        before = replies(bot)
        await bot.channel_message(
            "what about in Go?", user=COLLEAGUE, thread_ts=THREAD, parent_user_id=ASKER
        )
        outcome = (await bot.finished(2))[-1]

        assert (("thread", "ok") if answered else ("thread", "ignored")) == outcome
        assert (2 if answered else 1) == len(asked(dk_server))
        assert answered == (replies(bot) != before)


async def test_off_ignores_even_the_askers_follow_up(dk_server: FakeDeveloperKnowledge) -> None:
    """THREAD_FOLLOWUPS=off: a mention is needed for every answer."""
    async with running_bot(dk_server, thread_followups="off") as bot:
        await answered_thread(bot)
        await bot.channel_message("what about in Go?", thread_ts=THREAD)
        assert ("thread", "ignored") == (await bot.finished(2))[-1]
        assert [QUESTION] == asked(dk_server)


async def test_the_thread_keeps_its_first_asker(dk_server: FakeDeveloperKnowledge) -> None:
    """A colleague who @-mentions the bot in the thread is answered, but does not become
    the thread's asker: their next unmentioned question is ignored, the asker's is not."""
    async with running_bot(dk_server) as bot:
        await answered_thread(bot)
        await bot.mention("what about in Go?", user=COLLEAGUE, thread_ts=THREAD)
        await bot.finished(2)
        await bot.channel_message("what about in Java?", user=COLLEAGUE, thread_ts=THREAD)
        await bot.finished(3)
        await bot.channel_message("what about in Rust?", thread_ts=THREAD)
        outcomes = await bot.finished(4)

        assert [("thread", "ignored"), ("thread", "ok")] == outcomes[2:]
        assert not any("Java" in q for q in asked(dk_server))
        assert "Rust" in asked(dk_server)[-1]


async def test_a_mention_in_the_thread_is_answered_once(dk_server: FakeDeveloperKnowledge) -> None:
    """An @-mention in the bot's thread arrives twice (app_mention and message.channels):
    it is answered once, as the mention."""
    async with running_bot(dk_server) as bot:
        await answered_thread(bot)
        ts = "1710000000.000150"
        await bot.mention("what about in Go?", ts=ts, thread_ts=THREAD)
        heard = payloads.channel_message_event(
            f"<@{BOT_USER_ID}> what about in Go?", user=ASKER, thread_ts=THREAD
        )
        await bot.event(heard | {"ts": ts, "event_ts": ts})
        outcomes = await bot.finished(3)

        assert sorted([("mention", "ok"), ("thread", "ignored")]) == sorted(outcomes[1:])
        assert 2 == len(bot.fake.calls_to("chat.postMessage"))
        assert 2 == len(asked(dk_server))


#: (what the bot hears, keyword arguments of `channel_message`) for messages it must ignore
IGNORED: list[tuple[str, dict[str, Any]]] = [
    ("thanks!", {"thread_ts": THREAD}),
    ("great, that worked for me and my team", {"thread_ts": THREAD}),
    ("how do I delete it?", {"thread_ts": THREAD, "subtype": "bot_message"}),
    ("how do I delete it?", {"thread_ts": THREAD, "user": "UOTHERAPP", "bot_id": "BOTHER"}),
    ("how do I delete it?", {"thread_ts": THREAD, "subtype": "message_changed"}),
    ("joined", {"subtype": "channel_join"}),
    ("how do I delete a bucket?", {}),
    ("how do I delete a bucket?", {"thread_ts": "1710000000.999999"}),
    (f"<@{COLLEAGUE}> how do I delete it?", {"thread_ts": THREAD}),
    ("how do I delete it? <@UOTHER|someone>", {"thread_ts": THREAD}),
    ("<!here> how do I delete it?", {"thread_ts": THREAD}),
]
IGNORED_IDS = [
    "thanks",
    "a-remark",
    "bot_message",
    "bot_id",
    "message_changed",
    "channel_join",
    "top-level",
    "other-thread",
    "mentions-someone",
    "mentions-someone-later",
    "at-here",
]


@pytest.mark.parametrize(("text", "how"), IGNORED, ids=IGNORED_IDS)
async def test_other_messages_are_ignored_without_any_call(
    dk_server: FakeDeveloperKnowledge, text: str, how: dict[str, Any]
) -> None:
    """Chatter, bots, edits, joins, top-level messages, other threads and replies addressed
    to someone: no upstream call, no reply, no reaction, no users.info."""
    async with running_bot(dk_server) as bot:
        await answered_thread(bot)
        before = replies(bot)
        sent = await bot.channel_message(text, **how)
        outcomes = await bot.finished(2)

        assert 200 == sent.status
        assert ("thread", "ignored") == outcomes[-1]
        assert [QUESTION] == asked(dk_server)
        assert before == replies(bot)


@pytest.mark.parametrize("level", [logging.DEBUG, logging.INFO], ids=["DEBUG", "INFO"])
async def test_what_the_bot_hears_is_never_logged_above_debug(
    dk_server: FakeDeveloperKnowledge, caplog: pytest.LogCaptureFixture, level: int
) -> None:
    """Each ignored message is one DEBUG line with a reason (at INFO: none), and its text is
    in no log line above DEBUG — nor is an answered follow-up's."""
    caplog.set_level(level)
    caplog.set_level(level, logger="bot")
    async with running_bot(dk_server) as bot:
        await answered_thread(bot)
        for n, (text, how) in enumerate(IGNORED):
            await bot.channel_message(f"{text} zebra-{n}", **how)
        await bot.channel_message("what about zebra-answered?", thread_ts=THREAD)
        outcomes = await bot.finished(len(IGNORED) + 2)

    assert len(IGNORED) == outcomes.count(("thread", "ignored"))
    ignored = [r for r in caplog.records if getattr(r, "outcome", None) == "ignored"]
    assert (len(IGNORED) if level == logging.DEBUG else 0) == len(ignored)
    assert all(r.levelno == logging.DEBUG for r in ignored)
    above_debug = [
        r.getMessage() + str(r.__dict__) for r in caplog.records if r.levelno > logging.DEBUG
    ]
    assert above_debug  # the answered follow-up logs its INFO line
    assert not any("zebra" in line for line in above_debug)


# --- the rule itself, without Slack ----------------------------------------------------------
def _reply(text: str, **fields: Any) -> dict[str, Any]:
    event = payloads.channel_message_event(text, user=ASKER, thread_ts=THREAD)
    return event | fields


@pytest.mark.parametrize(
    ("event", "why"),
    [
        (_reply("what about in Go?"), None),
        (_reply("Does it work with Terraform"), None),
        (_reply("ok thanks"), "does not read as a question"),
        (_reply("what about in Go?", ts=THREAD), "not a reply in a thread"),
        (_reply("what about in Go?", user=BOT_USER_ID), "not a person's new message"),
        (_reply("what about in Go?", user=None), "not a person's new message"),
        (_reply("what about in Go?", bot_id="B1"), "not a person's new message"),
        (_reply("what about in Go?", subtype="thread_broadcast"), "not a person's new message"),
        (_reply(f"<@{BOT_USER_ID}> what about in Go?"), "mentions someone"),
    ],
)
def test_follow_up_rule_table(event: dict[str, Any], why: str | None) -> None:
    """Which thread replies may be follow-ups, before the store is asked."""
    found = why_not_a_follow_up(event, BOT_USER_ID)
    assert (found is None) == (why is None)
    assert (found or "").startswith(why or "")


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("thanks!", False),
        ("ok, makes sense", False),
        ("that fixed it, the bucket is there now and everything works", False),
        ("does this work in Go", True),
        ("how about Java", True),
        ("and in Java?", True),
        ("show me the Terraform version", True),
    ],
)
def test_what_reads_as_a_question(text: str, question: bool) -> None:
    """A question mark or a first word that asks; length alone does not make a question."""
    assert question == reads_as_question(text)


@pytest.mark.parametrize(
    ("text", "addressed"),
    [
        ("<@U123ABC> can you check?", True),
        ("can you check, <@W123|bob>?", True),
        ("<!subteam^S123> anyone?", True),
        ("<!channel> how?", True),
        ("see <#C123|general> and <https://cloud.google.com|docs>?", False),
        ("what about 1 < 2 > 0?", False),
    ],
)
def test_what_counts_as_addressed_to_someone(text: str, addressed: bool) -> None:
    """Mentions of people, groups and the channel; channel links and URLs are not."""
    assert addressed == addresses_someone(text)
