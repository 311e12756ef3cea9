"""App Home end to end: the Messages tab's suggested prompts (once a day), the Home tab's
view (what the bot does, the team's answers left, the servers' state, the viewer's recent
questions), published at most once a minute, and Ask again answered in the viewer's DM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bot.render import ASK_AGAIN_ACTION_RE, PROMPTS_TITLE, suggested_prompts
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, Fault, google_error
from tests.fakes.slack_api import FakeSlack, SlackCall
from tests.fakes.slack_checks import MAX_PROMPTS
from tests.slack_harness import ASKER, SlackBot, running_bot

OTHER = "UOTHER9"


def texts(view: dict[str, Any]) -> str:
    return json.dumps(view["blocks"], ensure_ascii=False)


def ask_buttons(view: dict[str, Any], prefix: str = "ask_again:") -> list[dict[str, Any]]:
    """The Ask again buttons of the recent questions (or, `ask_example:`, the examples')."""
    return [
        block["accessory"]
        for block in view["blocks"]
        if ASK_AGAIN_ACTION_RE.match(action := block.get("accessory", {}).get("action_id", ""))
        and action.startswith(prefix)
    ]


def ask_again_buttons(view: dict[str, Any]) -> list[dict[str, Any]]:
    return ask_buttons(view)


async def click(bot: SlackBot, button: dict[str, Any], view: dict[str, Any]) -> None:
    action = {k: button[k] for k in ("action_id", "type", "value")} | {"block_id": "b1"}
    assert 200 == (await bot.home_click(action, view=view)).status


def failing(dk_server: FakeDeveloperKnowledge, count: int = 20) -> None:
    """The next `count` answer_query requests get an HTTP 500."""
    body = b'{"error": {"code": 500, "message": "internal", "status": "INTERNAL"}}'
    dk_server.faults.extend(Fault(status=500, body=body, tool="answer_query") for _ in range(count))


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
async def test_a_newcomers_home_explains_the_bot_and_claims_nothing_before_a_call() -> None:
    """No history: intro, forms, the day's 50 answers in the viewer's zone, no claim about
    servers not called yet, and an invitation instead of questions; ≤ 100 blocks."""
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
        assert "(your time)" in texts(view)  # Europe/Rome, not PT
        assert ":white_circle: No call to Google's documentation servers" in texts(view)
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
            "ask2:search:cloud run <!channel>",
            "ask2:search:firestore pricing",
            "ask2:answer:how do I create a bucket?",
        ] == [button["value"] for button in buttons]
        assert "“cloud run &lt;!channel&gt;”" in texts(view)
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


# --- what Home says is true now -------------------------------------------------------------
async def test_a_reopen_within_a_minute_shows_what_changed_and_only_then_publishes(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Opened, a question asked, opened again at once: the new question is there; opened a
    third time with nothing changed: no views.publish."""
    async with running_bot(dk_server) as bot:
        await published_home(bot)
        await bot.finished(1)
        await bot.command("how do I create a bucket?")
        await bot.finished(2)
        second = await published_home(bot, count=2)
        await bot.finished(3)
        await bot.app_home_opened("home")
        await bot.finished(4)

        assert ["ask2:answer:how do I create a bucket?"] == [
            b["value"] for b in ask_again_buttons(second.args["view"])
        ]
        assert "49 of 50 left" in texts(second.args["view"])
        assert 2 == len(bot.fake.calls_to("views.publish"))
        assert ("home", "recently_published") == bot.metrics.finished[-1]


async def test_home_tells_the_last_calls_failed_on_another_replica_then_that_they_answer(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """Two replicas on one store: the questions one of them could not answer (HTTP 500) turn
    the other's Home red, saying how many calls failed; once a call answers, it is green."""
    state = f"sqlite:///{tmp_path / 'state.db'}"
    fake = FakeSlack().start()
    try:
        async with (
            running_bot(dk_server, fake=fake, state_url=state) as one,
            running_bot(dk_server, fake=fake, state_url=state) as two,
        ):
            failing(dk_server)
            await one.command("how do I create a bucket?")
            await one.command("how do I delete a bucket?")
            await one.finished(2)
            red = (await published_home(two)).args["view"]
            await two.finished(1)
            dk_server.faults.clear()
            await one.command("how do I list buckets?")
            await one.finished(3)
            green = (await published_home(two, count=2)).args["view"]

            assert "My last 2 calls to Google's documentation servers failed" in texts(red)
            assert ":red_circle:" in texts(red)
            assert "HTTP" not in texts(red)
            assert "answered my last call" in texts(green)
            assert ":large_green_circle:" in texts(green)
    finally:
        fake.stop()


async def test_recent_questions_are_the_words_asked_once_each_with_failures_marked(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """`private` and `search` are not part of the question; the same question asked again
    in another case is one row (the latest); a question that failed says so."""
    async with running_bot(dk_server) as bot:
        await bot.command("private How do I create a bucket?")
        await bot.finished(1)
        await bot.command("search firestore pricing")
        await bot.finished(2)
        await bot.dm("how do I create a BUCKET", channel="D5")
        await bot.finished(3)
        failing(dk_server)
        await bot.command("how do I delete a bucket?")
        await bot.finished(4)
        view = (await published_home(bot)).args["view"]

        assert [
            "ask2:answer:how do I delete a bucket?",
            "ask2:answer:how do I create a BUCKET",
            "ask2:search:firestore pricing",
        ] == [b["value"] for b in ask_again_buttons(view)]
        assert 1 == texts(view).count("not answered")
        assert "private How" not in texts(view)
        assert [] == bot.fake.invalid_payloads


async def test_a_private_question_asked_again_stays_with_its_asker(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A private question keeps its privacy, not its subcommand: Ask again answers it in the
    asker's DM, nothing is posted in the channel it was first asked in."""
    async with running_bot(dk_server) as bot:
        await bot.command("private how do I create a bucket?")
        await bot.finished(1)
        view = (await published_home(bot)).args["view"]
        await bot.finished(2)
        [button] = ask_again_buttons(view)
        await click(bot, button, view)
        await bot.finished(3)

        assert "ask2:answer+private:how do I create a bucket?" == button["value"]
        assert {ASKER} == {c.args["channel"] for c in bot.fake.calls_to("chat.postMessage")}
        assert {ASKER} == {c.args["channel"] for c in bot.fake.calls_to("chat.update")}
        assert [] == bot.fake.invalid_payloads


async def test_an_example_is_asked_with_a_click_and_answered_in_the_dm(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A "Try asking" example's Ask button asks it; the answer comes in the viewer's DM."""
    async with running_bot(dk_server) as bot:
        view = (await published_home(bot)).args["view"]
        await bot.finished(1)
        first = ask_buttons(view, "ask_example:")[0]
        await click(bot, first, view)
        await bot.finished(2)
        [answer] = bot.fake.calls_to("chat.update")
        [call] = dk_server.tool_calls("answer_query")

        assert "How do I create a Cloud Storage bucket with gcloud?" == call.arguments["query"]
        assert ASKER == answer.args["channel"]
        assert "context_actions" == answer.args["blocks"][-1]["type"]
        assert [] == bot.fake.invalid_payloads


async def test_home_during_googles_pause_says_what_the_answer_said_not_no_limit(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A bot with no daily limit of its own, paused by Google's 429: Home says the pause in
    the words of the answer's note, not "this bot sets no daily limit"."""
    text = "429 RESOURCE_EXHAUSTED: Resource has been exhausted (e.g. check quota)."
    fault = google_error(429, "RESOURCE_EXHAUSTED", text)
    fault.tool = "answer_query"
    dk_server.faults.append(fault)
    async with running_bot(dk_server, answer_quota_per_day=0) as bot:
        await bot.command("how do I label a resource?")
        [answer] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)
        view = (await published_home(bot)).args["view"]

        said = "Generated answers are paused for a moment — back in about"
        assert said in json.dumps(answer.args["blocks"], ensure_ascii=False)
        assert said in texts(view)
        assert "no daily limit" not in texts(view)
