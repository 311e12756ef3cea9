"""Answer channels and per-channel settings (`/gdocs channel …`, ANSWER_CHANNELS,
CHANNEL_SETTINGS_ADMINS_ONLY), over signed HTTP (and one case over Socket Mode) against the
recording fake Slack and the MCP fakes."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

import pytest

from bot.render import ACTION_SHARE
from tests.fakes import slack_event_payloads as payloads
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.slack_api import BOT_USER_ID
from tests.slack_harness import ASKER, SlackBot, running_bot

QUESTION = "how do I create a Cloud Storage bucket?"
COLLEAGUE = "UCOLLEAGUE"
#: Slack calls that would mean the bot reacted to what it heard
REPLIES = ("chat.postMessage", "chat.postEphemeral", "reactions.add", "users.info")


def asked(dk: FakeDeveloperKnowledge) -> list[str]:
    return [
        c.arguments["query"] for c in dk.calls if c.tool in ("answer_query", "search_documents")
    ]


def shown(args: dict[str, Any]) -> str:
    return json.dumps([args.get("text"), args.get("blocks")], ensure_ascii=False)


def replies(bot: SlackBot) -> dict[str, int]:
    return {method: len(bot.fake.calls_to(method)) for method in REPLIES}


async def switch(bot: SlackBot, words: str, *, done: int, user: str = ASKER) -> str:
    """Run `/gdocs channel <words>`; what the asker was told (ack or response_url), joined."""
    sent = await bot.command(f"channel {words}", user=user)
    assert 200 == sent.status
    await bot.finished(done)
    assert sent.key is not None
    return json.dumps(bot.fake.responses_to(sent.key), ensure_ascii=False)


async def test_channel_auto_answers_a_top_level_question_in_its_thread_without_a_mention(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """`/gdocs channel auto` posts a notice naming who switched and how to undo it; then a
    question asked at the top of the channel is answered in its thread, with no mention."""
    async with running_bot(dk_server) as bot:
        await switch(bot, "auto", done=1)
        [notice] = bot.fake.calls_to("chat.postMessage")
        assert "C1" == notice.args["channel"]
        assert f"<@{ASKER}> turned on automatic answers here" in notice.args["text"]
        assert "`/gdocs channel mentions` turns them off" in notice.args["text"]

        sent = await bot.channel_message(QUESTION, user=COLLEAGUE)
        assert (200, "") == (sent.status, sent.body)
        assert ("auto", "ok") == (await bot.finished(2))[-1]
        answer = bot.fake.calls_to("chat.postMessage")[-1]
        assert "C1" == answer.args["channel"]
        assert answer.args["thread_ts"] is not None
        assert [QUESTION] == asked(dk_server)
        assert "Here is how" in shown(answer.args)
        assert 1 == len(bot.fake.calls_to("reactions.add"))  # progress, as for a mention
        assert [] == bot.fake.invalid_payloads


async def test_the_answer_goes_into_the_questions_own_thread(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The auto answer's thread is the asked message's ts, and a follow-up there from the
    asker is answered too (the thread is remembered like a mention's)."""
    async with running_bot(dk_server) as bot:
        await switch(bot, "auto", done=1)
        event = payloads.channel_message_event(QUESTION, user=COLLEAGUE)
        await bot.event(event)
        await bot.finished(2)
        assert event["ts"] == bot.fake.calls_to("chat.postMessage")[-1].args["thread_ts"]

        await bot.channel_message("what about in Go?", user=COLLEAGUE, thread_ts=event["ts"])
        assert ("thread", "ok") == (await bot.finished(3))[-1]
        assert f"{QUESTION} — follow-up: what about in Go?" == asked(dk_server)[-1]


#: (what the bot hears, keyword arguments of `channel_message`) that an answer channel ignores
IGNORED: list[tuple[str, dict[str, Any]]] = [
    ("the deploy is done, buckets are all set up now", {}),
    ("good morning everyone", {}),
    ("thanks!", {}),
    (f"<@{COLLEAGUE}> how do I create a bucket?", {}),
    ("<!here> how do I create a bucket?", {}),
    ("how do I create a bucket?", {"subtype": "bot_message"}),
    ("how do I create a bucket?", {"user": "UOTHERAPP", "bot_id": "BOTHER"}),
    ("how do I create a bucket?", {"user": BOT_USER_ID, "bot_id": "BBOT"}),
    ("how do I create a bucket?", {"subtype": "message_changed"}),
    ("joined", {"subtype": "channel_join"}),
]
IGNORED_IDS = [
    "statement",
    "greeting",
    "thanks",
    "mentions-a-colleague",
    "at-here",
    "bot_message",
    "another-app",
    "our-own-post",
    "edit",
    "join",
]


@pytest.mark.parametrize(("text", "how"), IGNORED, ids=IGNORED_IDS)
async def test_an_answer_channel_leaves_other_messages_alone_without_any_call(
    dk_server: FakeDeveloperKnowledge, text: str, how: dict[str, Any]
) -> None:
    """Statements, greetings, messages to someone else or @here, bots (ours included: Bolt
    drops those before any listener), edits and joins: no reply, no reaction, no users.info,
    no upstream call."""
    async with running_bot(dk_server) as bot:
        await switch(bot, "auto", done=1)
        before = replies(bot)
        sent = await bot.channel_message(text, **how)
        await bot.channel_message("ok")  # each request is handled before its response
        outcomes = await bot.finished(2)

        assert 200 == sent.status
        assert {("thread", "ignored")} == set(outcomes[1:])
        assert [] == asked(dk_server)
        assert before == replies(bot)


async def test_a_top_level_question_elsewhere_is_left_alone(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Only the switched channel answers: the same question in another channel is ignored."""
    async with running_bot(dk_server) as bot:
        await switch(bot, "auto", done=1)
        await bot.channel_message(QUESTION, channel="C2")
        assert ("thread", "ignored") == (await bot.finished(2))[-1]
        assert [] == asked(dk_server)


async def test_channel_mentions_turns_automatic_answers_off_again(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """After `/gdocs channel mentions` (with its own notice) a question is left alone."""
    async with running_bot(dk_server) as bot:
        await switch(bot, "auto", done=1)
        await switch(bot, "mentions", done=2)
        notice = bot.fake.calls_to("chat.postMessage")[-1]
        assert "turned off automatic answers here" in notice.args["text"]
        await bot.channel_message(QUESTION)
        assert ("thread", "ignored") == (await bot.finished(3))[-1]
        assert [] == asked(dk_server)


async def test_channel_without_words_shows_the_settings_and_unknown_words_get_the_usage(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """`/gdocs channel` shows the three settings; `/gdocs channel sometimes` changes nothing
    and gets the usage (no guess); neither posts in the channel."""
    async with running_bot(dk_server) as bot:
        settings = await switch(bot, "", done=1)
        assert "when someone mentions me" in settings
        assert "*Private:* off" in settings
        assert "from the person who asked first (the bot's default)" in settings
        usage = await switch(bot, "sometimes", done=2)
        assert "channel auto" in usage
        assert "channel followups asker|anyone|off" in usage
        bad_value = await switch(bot, "private maybe", done=3)
        assert "channel private on|off" in bad_value
        assert [] == bot.fake.calls_to("chat.postMessage")
        assert "when someone mentions me" in await switch(bot, "", done=4)


async def test_admins_only_refuses_a_member_and_lets_an_admin_switch(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """CHANNEL_SETTINGS_ADMINS_ONLY=true: a member is refused (nothing changes, nothing is
    posted); a workspace admin (users.info is_admin) switches the channel."""
    async with running_bot(dk_server, channel_settings_admins_only=True) as bot:
        bot.fake.admins.add("UADMIN1")
        refused = await switch(bot, "auto", done=1)
        assert "Only workspace admins and owners" in refused
        assert [] == bot.fake.calls_to("chat.postMessage")
        assert [ASKER] == [c.args["user"] for c in bot.fake.calls_to("users.info")]

        await switch(bot, "auto", done=2, user="UADMIN1")
        [notice] = bot.fake.calls_to("chat.postMessage")
        assert "<@UADMIN1> turned on automatic answers" in notice.args["text"]


async def test_switching_where_the_bot_is_not_a_member_says_how_to_invite_it(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The notice cannot be posted (not_in_channel): the change is undone and the asker
    told to invite the bot; a question there afterwards is not answered."""
    async with running_bot(dk_server) as bot:
        bot.fake.outside.add("C1")
        told = await switch(bot, "auto", done=1)
        assert "/invite @gdocs" in told
        assert "Nothing was changed" in told
        assert "mentions" == (await bot.deps.channels.stored("C1")).mode
        bot.fake.outside.clear()
        await bot.channel_message(QUESTION)
        assert ("thread", "ignored") == (await bot.finished(2))[-1]


async def test_answer_channels_from_the_configuration_answer_without_a_command(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """ANSWER_CHANNELS=C1,C9: a question in C1 is answered; `/gdocs channel mentions` there
    is refused, naming the setting."""
    async with running_bot(dk_server, answer_channels="C1, C9") as bot:
        await bot.channel_message(QUESTION)
        assert ("auto", "ok") == (await bot.finished(1))[-1]
        refused = await switch(bot, "mentions", done=2)
        assert "ANSWER_CHANNELS" in refused
        assert 1 == len(bot.fake.calls_to("chat.postMessage"))


async def test_private_on_makes_a_mentions_answer_ephemeral_with_share(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """`/gdocs channel private on`: a mention's answer goes to the asker alone (ephemeral,
    in the thread) with a Share in channel button; nothing but the notice is posted."""
    async with running_bot(dk_server) as bot:
        await switch(bot, "private on", done=1)
        [notice] = bot.fake.calls_to("chat.postMessage")
        assert "made my answers here private" in notice.args["text"]
        await bot.mention(QUESTION, ts="1710000000.000301")
        assert ("mention", "ok") == (await bot.finished(2))[-1]

        [private] = bot.fake.calls_to("chat.postEphemeral")
        assert (ASKER, "1710000000.000301") == (private.args["user"], private.args["thread_ts"])
        buttons = [
            element["action_id"]
            for block in private.args["blocks"]
            if block["type"] == "actions"
            for element in block["elements"]
        ]
        assert ACTION_SHARE in buttons
        assert [notice] == bot.fake.calls_to("chat.postMessage")


async def test_followups_anyone_in_a_channel_overrides_thread_followups(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """THREAD_FOLLOWUPS=asker, but `/gdocs channel followups anyone`: a colleague's
    unmentioned follow-up in the bot's thread is answered there."""
    async with running_bot(dk_server) as bot:
        await switch(bot, "followups anyone", done=1)
        await bot.mention(QUESTION, ts="1710000000.000401")
        await bot.finished(2)
        await bot.channel_message(
            "what about in Go?", user=COLLEAGUE, thread_ts="1710000000.000401"
        )
        assert ("thread", "ok") == (await bot.finished(3))[-1]


async def test_followups_off_in_a_channel_silences_even_the_asker(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """`/gdocs channel followups off`: the asker's own follow-up needs a mention there."""
    async with running_bot(dk_server) as bot:
        await switch(bot, "followups off", done=1)
        await bot.mention(QUESTION, ts="1710000000.000501")
        await bot.finished(2)
        await bot.channel_message("what about in Go?", thread_ts="1710000000.000501")
        assert ("thread", "ignored") == (await bot.finished(3))[-1]
        assert 1 == len(asked(dk_server))


async def test_auto_answers_spend_the_per_person_cap_then_are_search_results(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """ANSWER_QUOTA_PER_USER_PER_DAY=1: the asker's second auto-answered question is
    answered with search results and the usual note, without an answer_query call."""
    async with running_bot(dk_server, answer_quota_per_user_per_day=1) as bot:
        await switch(bot, "auto", done=1)
        await bot.channel_message(QUESTION)
        await bot.channel_message("how do I delete a Cloud Storage bucket?")
        outcomes = await bot.finished(3)

        assert [("auto", "ok"), ("auto", "ok_with_note")] == sorted(outcomes[1:])
        assert 1 == len(dk_server.tool_calls("answer_query"))
        assert 1 == len(dk_server.tool_calls("search_documents"))


async def test_socket_mode_switch_and_auto_answer(dk_server: FakeDeveloperKnowledge) -> None:
    """Over Socket Mode too: the command switches the channel and a top-level question is
    answered in its thread."""
    async with running_bot(dk_server) as bot:
        command, _ = bot.command_body("channel auto")
        response = await bot.socket_mode(dict(parse_qsl(command)))
        assert 200 == response.status
        await bot.finished(1)
        event = payloads.channel_message_event(QUESTION, user=COLLEAGUE)
        response = await bot.socket_mode(json.loads(bot.event_body(event)))
        assert 200 == response.status
        assert ("auto", "ok") == (await bot.finished(2))[-1]
        assert event["ts"] == bot.fake.calls_to("chat.postMessage")[-1].args["thread_ts"]


# --- the Home tab ------------------------------------------------------------------------------
async def test_the_home_tab_shows_the_settings_of_the_viewers_channels(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The viewer is in C1 (an answer channel), C2 (private answers), C3 (no settings) and
    C4 (not theirs): the Home tab lists C1 and C2 with their settings, not C3 or C4."""
    async with running_bot(dk_server, answer_channels="C1") as bot:
        bot.fake.memberships[ASKER] = ["C1", "C2", "C3"]
        await bot.command("channel private on", channel="C2")
        await bot.command("channel followups anyone", channel="C4")
        await bot.finished(2)
        await bot.app_home_opened("home")
        [publish] = await bot.fake.await_calls("views.publish")
        blocks = publish.args["view"]["blocks"]
        listed = [b["text"]["text"] for b in blocks if b["type"] == "section"]
        channels = [t for t in listed if t.startswith("<#")]

        assert 2 == len(channels)
        assert channels[0].startswith("<#C1>")
        assert "*Answers:* automatic" in channels[0]
        assert channels[1].startswith("<#C2>")
        assert "*Private:* on" in channels[1]
        [lookup] = bot.fake.calls_to("users.conversations")
        assert ASKER == lookup.args["user"]
        assert [] == bot.fake.invalid_payloads


async def test_the_home_tab_without_channel_settings_has_no_channel_part(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """No settings anywhere the viewer is: no "Channel settings" header at all."""
    async with running_bot(dk_server) as bot:
        bot.fake.memberships[ASKER] = ["C1"]
        await bot.app_home_opened("home")
        [publish] = await bot.fake.await_calls("views.publish")
        assert "Channel settings" not in json.dumps(publish.args["view"])


async def test_private_on_makes_a_commands_answer_private_too(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """In a `private on` channel, `/gdocs <question>` answers through the response_url alone,
    with Share; only the notice is posted."""
    async with running_bot(dk_server) as bot:
        await switch(bot, "private on", done=1)
        sent = await bot.command(QUESTION)
        assert ("command", "ok") == (await bot.finished(2))[-1]
        answer = bot.fake.responses_to(sent.key or "")[-1]
        assert ACTION_SHARE in json.dumps(answer["blocks"])
        assert 1 == len(bot.fake.calls_to("chat.postMessage"))
