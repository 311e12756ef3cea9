"""App Home end to end: the Messages tab's suggested prompts (once a day), the Home tab's
view (what the bot does, the team's answers left, the servers' state, the viewer's recent
questions), published at most once a minute, and Ask again answered in the viewer's DM."""

from __future__ import annotations

import json
from typing import Any

from bot.render import ASK_AGAIN_ACTION_RE, PROMPTS_TITLE, suggested_prompts
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.slack_api import SlackCall
from tests.fakes.slack_checks import MAX_PROMPTS
from tests.slack_harness import ASKER, SlackBot, running_bot

OTHER = "UOTHER9"


def texts(view: dict[str, Any]) -> str:
    return json.dumps(view["blocks"], ensure_ascii=False)


def ask_again_buttons(view: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block["accessory"]
        for block in view["blocks"]
        if ASK_AGAIN_ACTION_RE.match(block.get("accessory", {}).get("action_id", ""))
    ]


async def published_home(bot: SlackBot, user: str = ASKER, count: int = 1) -> SlackCall:
    """Open the Home tab; the views.publish call it led to."""
    await bot.app_home_opened("home", user=user)
    calls = await bot.fake.await_calls("views.publish", count)
    return calls[-1]


# --- the Messages tab --------------------------------------------------------------------
async def test_opening_the_messages_tab_sets_the_suggested_prompts_without_a_thread(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """setSuggestedPrompts for the DM the event names: the bot's prompts (at most four) and
    title, and no thread_ts (which the agent view silently ignores)."""
    async with running_bot(dk_server) as bot:
        sent = await bot.app_home_opened("messages", channel="D9")
        [call] = await bot.fake.await_calls("assistant.threads.setSuggestedPrompts")
        await bot.finished(1)

        assert 200 == sent.status
        assert "D9" == call.args["channel_id"]
        assert "thread_ts" not in call.args
        assert suggested_prompts() == call.args["prompts"]
        assert 1 <= len(call.args["prompts"]) <= MAX_PROMPTS
        assert PROMPTS_TITLE == call.args["title"]
        assert [] == bot.fake.invalid_payloads
        assert [] == dk_server.calls


async def test_the_prompts_are_set_once_a_day_per_person(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The same person opening the tab again that day gets no second call; someone else
    gets their own."""
    async with running_bot(dk_server) as bot:
        await bot.app_home_opened("messages", channel="D9")
        await bot.app_home_opened("messages", channel="D9")
        await bot.app_home_opened("messages", user=OTHER, channel="D10")
        await bot.finished(3)
        calls = bot.fake.calls_to("assistant.threads.setSuggestedPrompts")

        assert ["D9", "D10"] == [call.args["channel_id"] for call in calls]
        assert ("prompts", "already_today") in bot.metrics.finished


async def test_prompts_that_fail_are_tried_again_at_the_next_opening(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A refused call does not use up the day: the next opening sets them."""
    async with running_bot(dk_server) as bot:
        bot.fake.fail("assistant.threads.setSuggestedPrompts", "internal_error")
        await bot.app_home_opened("messages", channel="D9")
        await bot.finished(1)
        await bot.app_home_opened("messages", channel="D9")
        await bot.finished(2)

        assert 2 == len(bot.fake.calls_to("assistant.threads.setSuggestedPrompts"))
        assert [("prompts", "failed"), ("prompts", "ok")] == bot.metrics.finished


# --- the Home tab --------------------------------------------------------------------------
async def test_a_newcomers_home_explains_the_bot_and_says_the_servers_are_not_answering() -> None:
    """No history: intro, forms, the day's 50 answers in the viewer's zone, the servers not
    (yet) answering, and an invitation instead of questions; a valid view of ≤ 100 blocks."""
    async with running_bot(None) as bot:  # the documentation server is down
        bot.fake.timezones[ASKER] = "Europe/Rome"
        publish = await published_home(bot)
        await bot.finished(1)
        view = publish.args["view"]

        assert ASKER == publish.args["user_id"]
        assert "home" == view["type"]
        assert len(view["blocks"]) <= 100
        assert "`/gdocs search &lt;query&gt;`" in texts(view)
        assert "50 of 50 left for the team" in texts(view)
        assert "Europe/Rome time" in texts(view)
        assert ":red_circle:" in texts(view)
        assert "You haven't asked me anything yet" in texts(view)
        assert [] == ask_again_buttons(view)
        assert [] == bot.fake.invalid_payloads


async def test_home_after_questions_shows_them_newest_first_and_what_is_left(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Questions asked by command, mention and DM are listed newest first with Ask again;
    the generated answer they used is counted; the servers have answered."""
    async with running_bot(dk_server) as bot:
        await bot.command("how do I create a bucket?")
        await bot.finished(1)
        await bot.mention("firestore pricing")
        await bot.finished(2)
        await bot.dm("search cloud run <!channel>", channel="D5")
        await bot.finished(3)
        publish = await published_home(bot)
        await bot.finished(4)
        view = publish.args["view"]
        buttons = ask_again_buttons(view)

        assert [
            "ask1:search cloud run <!channel>",
            "ask1:firestore pricing",
            "ask1:how do I create a bucket?",
        ] == [button["value"] for button in buttons]
        assert "search cloud run &lt;!channel&gt;" in texts(view)
        assert "49 of 50 left for the team" in texts(view)
        assert ":large_green_circle:" in texts(view)
        assert [] == bot.fake.invalid_payloads


async def test_home_is_published_at_most_once_a_minute_per_person(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Opening Home twice in a row publishes once; another person gets their own view."""
    async with running_bot(dk_server) as bot:
        await bot.app_home_opened("home")
        await bot.app_home_opened("home")
        await bot.app_home_opened("home", user=OTHER)
        await bot.finished(3)

        assert [ASKER, OTHER] == [c.args["user_id"] for c in bot.fake.calls_to("views.publish")]
        assert ("home", "recently_published") in bot.metrics.finished


async def test_a_home_that_failed_to_publish_is_published_at_the_next_opening(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A refused views.publish does not hold the next opening back for a minute."""
    async with running_bot(dk_server) as bot:
        bot.fake.fail("views.publish", "internal_error")
        await bot.app_home_opened("home")
        await bot.finished(1)
        await bot.app_home_opened("home")
        await bot.finished(2)

        assert 2 == len(bot.fake.calls_to("views.publish"))
        assert [("home", "publish_failed"), ("home", "ok")] == bot.metrics.finished


# --- Ask again -------------------------------------------------------------------------------
async def test_ask_again_answers_the_question_in_the_viewers_dm(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The button's question is asked again; a "Looking that up…" in the DM (the user id as
    channel) becomes the answer, with its sources and feedback buttons."""
    async with running_bot(dk_server) as bot:
        await bot.command("how do I create a bucket?")
        await bot.finished(1)
        view = (await published_home(bot)).args["view"]
        await bot.finished(2)
        [button] = ask_again_buttons(view)
        sent = await bot.home_click(
            {k: button[k] for k in ("action_id", "type", "value")} | {"block_id": "b1"}, view=view
        )
        await bot.finished(3)
        progress = bot.fake.calls_to("chat.postMessage")[-1]
        [answer] = bot.fake.calls_to("chat.update")

        assert 200 == sent.status
        assert ASKER == progress.args["channel"]
        assert "Looking that up" in progress.args["text"]
        assert (ASKER, progress.result["ts"]) == (answer.args["channel"], answer.args["ts"])
        shown = json.dumps(answer.args["blocks"], ensure_ascii=False)
        assert "Here is how: *how do I create a bucket?*" in shown
        assert "Sources" in shown
        assert "context_actions" == answer.args["blocks"][-1]["type"]
        # the same question again: the answer kept from the first time, no second call
        assert 1 == len(dk_server.tool_calls("answer_query"))
        assert [] == bot.fake.invalid_payloads


async def test_a_forged_ask_again_value_asks_nothing(dk_server: FakeDeveloperKnowledge) -> None:
    """A value the bot did not make: a short note in the DM, no upstream call."""
    async with running_bot(dk_server) as bot:
        view = {"type": "home", "blocks": []}
        action = {"action_id": "ask_again:0", "type": "button", "value": "<!here> please"}
        await bot.home_click(action, view=view)
        [note] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)

        assert ASKER == note.args["channel"]
        assert "out of date or was not made by this bot" in note.args["text"]
        assert [] == dk_server.calls
