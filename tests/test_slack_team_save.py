"""Saving and managing team answers end to end, over signed requests: the "Save as team
answer" shortcut opens a prefilled form at once; its Save stores the answer with its
author, time, permalink and review date, or says in the form why not (too long, the store
down); a private channel's answer stays there; `/gdocs team` lists them with Edit / Remove
for their author and not for another member; Remove removes and Edit replaces."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.render import (
    ACTION_TEAM_LIST_EDIT,
    ACTION_TEAM_LIST_REMOVE,
    ALSO_BLOCK,
    ANSWER_BLOCK,
    QUESTION_BLOCK,
    TEAM_FORM_CALLBACK,
    TEAM_STORE_DOWN,
    VISIBILITY_BLOCK,
)
from bot.store import StoreUnavailable
from bot.team import TeamAnswer, TeamAnswers
from tests.fakes.clock import TestClock
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.slack_harness import ASKER, SlackBot, running_bot

MEMBER = "UMEMBER1"
COLLEAGUE = "UCOLL001"
ROOT_TS = "1710000299.000001"
QUESTION = "how do I create a bucket?"
REPLY = "We use <https://terraform.io|Terraform> &amp; `gsutil` here, not the console."
AS_MARKDOWN = "We use [Terraform](https://terraform.io) & `gsutil` here, not the console."
NOW = datetime(2026, 12, 1, 17, 0, tzinfo=UTC)


def options(view: dict[str, Any]) -> list[str]:
    [block] = [b for b in view["blocks"] if b.get("block_id") == VISIBILITY_BLOCK]
    return [o["value"] for o in block["element"]["options"]]


def initial(view: dict[str, Any], block_id: str) -> str | None:
    block_id = question_id(view) if block_id == QUESTION_BLOCK else block_id
    [block] = [b for b in view["blocks"] if b.get("block_id") == block_id]
    value = block["element"].get("initial_value")
    return str(value) if value is not None else None


def form_values(
    question: str | None, answer: str | None, also: str | None = None, where: str = "channel"
) -> dict[str, dict[str, Any]]:
    chosen = {"type": "radio_buttons", "selected_option": {"value": where}}
    return {
        QUESTION_BLOCK: {QUESTION_BLOCK: question},
        ANSWER_BLOCK: {ANSWER_BLOCK: answer},
        ALSO_BLOCK: {ALSO_BLOCK: also},
        VISIBILITY_BLOCK: {VISIBILITY_BLOCK: chosen},
    }


async def use_shortcut(
    bot: SlackBot, channel: str = "C1", text: str = REPLY, thread: bool = True
) -> dict[str, Any]:
    """COLLEAGUE's reply in a thread asking QUESTION, saved by ASKER; the form as it ends up
    (the last views.open or views.update)."""
    if thread:
        bot.fake.threads[(channel, ROOT_TS)] = [{"user": MEMBER, "text": QUESTION, "ts": ROOT_TS}]
    done = len(bot.metrics.finished)
    sent = await bot.message_shortcut(
        text,
        author=COLLEAGUE,
        channel=channel,
        thread_ts=ROOT_TS if thread else None,
        callback_id="save_team_answer",
    )
    assert (200, "") == (sent.status, sent.body)
    await bot.finished(done + 1)
    views = [c for c in bot.fake.calls if c.method in ("views.open", "views.update")]
    return dict(views[-1].args["view"])


def question_id(view: dict[str, Any]) -> str:
    [block] = [b for b in view["blocks"] if b.get("label", {}).get("text") == "Question"]
    return str(block["block_id"])


async def submit(bot: SlackBot, view: dict[str, Any], values: dict[str, Any], user: str) -> Any:
    """`values` (by form_values) as Slack sends them: the question under its block's id."""
    asked = question_id(view)
    values = {(asked if k == QUESTION_BLOCK else k): v for k, v in values.items()}
    values[asked] = {asked: values[asked][QUESTION_BLOCK]}
    done = len(bot.metrics.finished)
    sent = await bot.view_submission(
        TEAM_FORM_CALLBACK, view["private_metadata"], values, user=user
    )
    await bot.finished(done + 1)
    return sent


def errors(sent: Any) -> dict[str, str]:
    body = json.loads(sent.body)
    assert "errors" == body["response_action"]
    return dict(body["errors"])


def saved_answer(author: str = ASKER, visibility: str = "channel") -> TeamAnswer:
    return TeamAnswer(
        id="team_ans_1",
        question=QUESTION,
        answer="Use Terraform: `terraform apply` in infra/buckets.",
        author=author,
        saved_at=NOW - timedelta(days=200),
        review_at=NOW - timedelta(days=20),
        visibility="channel" if visibility == "channel" else "workspace",
        channel="C1",
        channel_name="infra",
    )


async def team_list(bot: SlackBot, user: str) -> tuple[dict[str, Any], str]:
    """`/gdocs team` by `user` in C1: the ephemeral list and the key of its response_url."""
    done = len(bot.metrics.finished)
    sent = await bot.command("team", user=user)
    await bot.finished(done + 1)
    [shown] = bot.fake.responses_to(sent.key)
    return shown, sent.key


def buttons(message: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        e["action_id"]: e
        for block in message.get("blocks", [])
        for e in block.get("elements", [])
        if e.get("type") == "button"
    }


async def press(bot: SlackBot, pressed: dict[str, Any], user: str) -> str:
    """`user` presses `pressed` on the ephemeral list; the key of its response_url."""
    done = len(bot.metrics.finished)
    action = {k: pressed[k] for k in ("action_id", "type", "value")}
    sent = await bot.action(action, user=user, ephemeral=True)
    assert 200 == sent.status
    await bot.finished(done + 1)
    return str(sent.key)


# --- the shortcut and its form ---------------------------------------------------------------
async def test_the_shortcut_opens_the_form_at_once_prefilled_with_the_reply_and_thread_question(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """views.open is the first Slack call (its trigger lives 3 s) with the reply as plain
    Markdown; views.update then adds the thread's question and, for a public channel, the
    whole workspace."""
    async with running_bot(dk_server) as bot:
        view = await use_shortcut(bot)
        first = next(c.method for c in bot.fake.calls if c.method != "auth.test")
        [opened] = bot.fake.calls_to("views.open")
        [updated] = bot.fake.calls_to("views.update")

        assert "views.open" == first
        assert AS_MARKDOWN == initial(opened.args["view"], ANSWER_BLOCK)
        assert ["channel"] == options(opened.args["view"])  # not yet known to be public
        assert opened.result["view"]["id"] == updated.args["view_id"]
        assert QUESTION == initial(view, QUESTION_BLOCK)
        assert AS_MARKDOWN == initial(view, ANSWER_BLOCK)
        assert ["channel", "workspace"] == options(view)
        assert [] == bot.fake.invalid_payloads


async def test_the_question_filled_in_later_is_a_new_input_so_slack_shows_it(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """views.update sets the question under a block id the opened form did not have (Slack
    may keep an input's empty typed state under the same id); Save reads it there and says
    a problem with it there."""
    async with running_bot(dk_server) as bot:
        view = await use_shortcut(bot)
        [opened] = bot.fake.calls_to("views.open")
        refused = errors(await submit(bot, view, form_values("q" * 501, AS_MARKDOWN), ASKER))
        sent = await submit(bot, view, form_values(QUESTION, AS_MARKDOWN), ASKER)
        [kept] = await bot.deps.team.all()

        assert question_id(view) != question_id(opened.args["view"])
        assert [question_id(view)] == list(refused)
        assert (200, "") == (sent.status, sent.body)
        assert QUESTION == kept.question
        assert [] == bot.fake.invalid_payloads


async def test_saving_the_form_keeps_author_time_permalink_and_review_date(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Save stores the answer by the saver, now, with the message's permalink and a review
    date TEAM_ANSWER_REVIEW_DAYS ahead; the form closes and the saver alone is told."""
    clock = TestClock(NOW)
    async with running_bot(dk_server, clock=clock, team_answer_review_days=30) as bot:
        view = await use_shortcut(bot)
        values = form_values(QUESTION, AS_MARKDOWN, "make a bucket\n\nnew bucket?", "workspace")
        sent = await submit(bot, view, values, ASKER)
        [told] = await bot.fake.await_calls("chat.postEphemeral")
        [kept] = await bot.deps.team.all()
        [permalink] = bot.fake.calls_to("chat.getPermalink")

        assert (200, "") == (sent.status, sent.body)
        assert (ASKER, NOW, NOW + timedelta(days=30)) == (
            kept.author,
            kept.saved_at,
            kept.review_at,
        )
        assert (QUESTION, AS_MARKDOWN) == (kept.question, kept.answer)
        assert ("make a bucket", "new bucket?") == kept.also
        assert ("workspace", "C1", "approved") == (kept.visibility, kept.channel, kept.status)
        assert kept.permalink == permalink.result["permalink"]
        assert permalink.args["message_ts"] in str(json.dumps(view["private_metadata"]))
        assert (ASKER, "C1") == (told.args["user"], told.args["channel"])
        assert told.args["text"].startswith(f"Saved as a team answer for “{QUESTION}”")
        assert [] == bot.fake.invalid_payloads


@pytest.mark.parametrize(
    ("field", "values"),
    [
        (QUESTION_BLOCK, form_values("q" * 501, "an answer")),
        (ANSWER_BLOCK, form_values(QUESTION, "a" * 8001)),
        (ALSO_BLOCK, form_values(QUESTION, "an answer", "\n".join(f"p{i}" for i in range(6)))),
        (ALSO_BLOCK, form_values(QUESTION, "an answer", "p" * 501)),
        (QUESTION_BLOCK, form_values(None, "an answer")),
    ],
    ids=["question", "answer", "six phrasings", "long phrasing", "no question"],
)
async def test_a_field_out_of_bounds_is_refused_in_the_form_and_nothing_is_saved(
    dk_server: FakeDeveloperKnowledge, field: str, values: dict[str, Any]
) -> None:
    """One short sentence on the field (Slack enforces max_length in its client only)."""
    async with running_bot(dk_server) as bot:
        view = await use_shortcut(bot)
        said = errors(await submit(bot, view, values, ASKER))

        field = question_id(view) if field == QUESTION_BLOCK else field
        assert [field] == list(said)
        assert said[field].endswith(".")
        assert len(said[field]) < 80
        assert [] == await bot.deps.team.all()
        assert [] == bot.fake.calls_to("chat.postEphemeral")


async def test_a_store_that_is_down_says_so_in_the_form_and_keeps_nothing(
    dk_server: FakeDeveloperKnowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The form stays open with its text and says it could not save; no "Saved" notice."""

    async def unavailable(self: TeamAnswers, answer: TeamAnswer) -> TeamAnswer:
        raise StoreUnavailable("redis did not answer")

    async with running_bot(dk_server) as bot:
        view = await use_shortcut(bot)
        monkeypatch.setattr(TeamAnswers, "save", unavailable)
        said = errors(await submit(bot, view, form_values(QUESTION, AS_MARKDOWN), ASKER))
        monkeypatch.undo()

        assert {ANSWER_BLOCK: TEAM_STORE_DOWN} == said
        assert [] == await bot.deps.team.all()
        assert [] == bot.fake.calls_to("chat.postEphemeral")


async def test_in_a_private_channel_only_this_channel_is_offered_and_kept(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Slack says C2 is private: no "whole workspace" at all, and a submission claiming it
    is saved for C2 alone."""
    async with running_bot(dk_server) as bot:
        bot.fake.private_channels.add("C2")
        view = await use_shortcut(bot, channel="C2")
        sent = await submit(bot, view, form_values(QUESTION, "ours", where="workspace"), ASKER)
        [kept] = await bot.deps.team.all()

        assert ["channel"] == options(view)
        assert all(
            "workspace" not in json.dumps(c.args) for c in bot.fake.calls if "views" in c.method
        )
        assert (200, "") == (sent.status, sent.body)
        assert ("channel", "C2") == (kept.visibility, kept.channel)


async def test_a_threads_first_message_is_the_answer_not_the_question(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Saved from a message that starts no known thread: the question is left to the saver,
    and its DM (D…) keeps it there without asking Slack about the channel, under no name
    (Slack's "directmessage" is none)."""
    async with running_bot(dk_server) as bot:
        view = await use_shortcut(bot, channel="D0123", thread=False, text=QUESTION)
        await submit(bot, view, form_values("where?", QUESTION), ASKER)
        [kept] = await bot.deps.team.all()

        assert (None, QUESTION) == (initial(view, QUESTION_BLOCK), initial(view, ANSWER_BLOCK))
        assert ["channel"] == options(view)
        assert [] == bot.fake.calls_to("conversations.info")
        assert ("D0123", None) == (kept.channel, kept.channel_name)


# --- /gdocs team ---------------------------------------------------------------------------
async def test_gdocs_team_with_no_team_answers_says_so_and_asks_slack_nothing(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    async with running_bot(dk_server) as bot:
        shown, _ = await team_list(bot, MEMBER)

        assert "No team answers are given here yet" in shown["text"]
        assert [] == bot.fake.calls_to("users.info")


async def test_gdocs_team_lists_with_edit_and_remove_for_the_author_not_another_member(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Question, author, age, uses for everyone; the buttons and "review due" for its
    author alone (MEMBER is no admin)."""
    clock = TestClock(NOW)
    async with running_bot(dk_server, clock=clock) as bot:
        await bot.deps.team.save(saved_answer())
        await bot.deps.team.count_use("team_ans_1")
        own, _ = await team_list(bot, ASKER)
        other, _ = await team_list(bot, MEMBER)
        text = json.dumps(own["blocks"], ensure_ascii=False)

        assert {ACTION_TEAM_LIST_EDIT, ACTION_TEAM_LIST_REMOVE} == set(buttons(own))
        assert "confirm" in buttons(own)[ACTION_TEAM_LIST_REMOVE]
        assert {} == buttons(other)
        for said in (QUESTION, f"<@{ASKER}>", "saved 6 months ago", "used once", "review due"):
            assert said in text
        assert "review due" not in json.dumps(other["blocks"])
        assert [] == bot.fake.invalid_payloads


async def test_remove_removes_and_replaces_the_list_in_place(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    async with running_bot(dk_server, clock=TestClock(NOW)) as bot:
        await bot.deps.team.save(saved_answer())
        own, _ = await team_list(bot, ASKER)
        key = await press(bot, buttons(own)[ACTION_TEAM_LIST_REMOVE], ASKER)
        [replaced] = bot.fake.responses_to(key)

        assert await bot.deps.team.get("team_ans_1") is None
        assert replaced["replace_original"] is True
        assert f"Removed the team answer for “{QUESTION}”" in replaced["text"]
        assert "No team answers are given here yet" in replaced["text"]


async def test_another_members_forged_remove_or_edit_is_refused_and_changes_nothing(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    async with running_bot(dk_server, clock=TestClock(NOW)) as bot:
        await bot.deps.team.save(saved_answer())
        own, _ = await team_list(bot, ASKER)
        for action_id in (ACTION_TEAM_LIST_REMOVE, ACTION_TEAM_LIST_EDIT):
            await press(bot, buttons(own)[action_id], MEMBER)
        said = [c.args["text"] for c in bot.fake.calls_to("chat.postEphemeral")]

        assert await bot.deps.team.get("team_ans_1") == saved_answer()
        assert [] == bot.fake.calls_to("views.open")
        assert ["Only its author and the team's admins can change that team answer."] * 2 == said


async def test_remove_or_edit_with_the_store_down_says_so_and_keeps_the_list(
    dk_server: FakeDeveloperKnowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not "something went wrong": the store's own sentence, to the presser alone."""

    async def unavailable(self: TeamAnswers, answer_id: str) -> None:
        raise StoreUnavailable("redis did not answer")

    async with running_bot(dk_server, clock=TestClock(NOW)) as bot:
        await bot.deps.team.save(saved_answer())
        own, _ = await team_list(bot, ASKER)
        monkeypatch.setattr(TeamAnswers, "get", unavailable)
        keys = [await press(bot, buttons(own)[a], ASKER) for a in buttons(own)]
        said = [c.args["text"] for c in bot.fake.calls_to("chat.postEphemeral")]
        monkeypatch.undo()

        assert [] == [r for key in keys for r in bot.fake.responses_to(key)]
        assert 2 == len(said)
        assert all(s.startswith("I can't reach the team answers right now") for s in said)
        assert await bot.deps.team.get("team_ans_1") == saved_answer()


async def test_edit_opens_the_form_and_saving_replaces_keeping_author_and_id(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A TEAM_ANSWERS_ADMINS member edits ASKER's answer: same id and author, new text,
    review date from now."""
    clock = TestClock(NOW)
    async with running_bot(dk_server, clock=clock, team_answers_admins=MEMBER) as bot:
        await bot.deps.team.save(saved_answer())
        listed, _ = await team_list(bot, MEMBER)
        await press(bot, buttons(listed)[ACTION_TEAM_LIST_EDIT], MEMBER)
        [opened] = await bot.fake.await_calls("views.open")
        view = opened.args["view"]
        sent = await submit(bot, view, form_values(QUESTION, "Use Terraform 2."), MEMBER)
        [kept] = await bot.deps.team.all()

        assert saved_answer().answer == initial(view, ANSWER_BLOCK)
        assert (200, "") == (sent.status, sent.body)
        assert ("team_ans_1", ASKER, "Use Terraform 2.") == (kept.id, kept.author, kept.answer)
        assert (saved_answer().saved_at, NOW + timedelta(days=180)) == (
            kept.saved_at,
            kept.review_at,
        )


async def test_saving_an_edit_shows_the_list_it_came_from_anew_with_what_was_saved(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Edit pressed on `/gdocs team`'s list: after Save the list is replaced where it was,
    saying what was saved; no separate notice."""
    async with running_bot(dk_server, clock=TestClock(NOW)) as bot:
        await bot.deps.team.save(saved_answer())
        listed, _ = await team_list(bot, ASKER)
        key = await press(bot, buttons(listed)[ACTION_TEAM_LIST_EDIT], ASKER)
        [opened] = await bot.fake.await_calls("views.open")
        await submit(bot, opened.args["view"], form_values("how do buckets work?", "TF."), ASKER)
        [shown] = await bot.fake.await_responses(key)

        assert shown["replace_original"] is True
        assert shown["text"].startswith("Saved as a team answer for “how do buckets work?”")
        assert "how do buckets work?" in json.dumps(shown["blocks"])
        assert [] == bot.fake.calls_to("chat.postEphemeral")


async def test_an_answer_longer_than_a_slack_form_is_not_opened_to_be_cut(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """An imported 8,000-character answer: Edit says how to change it instead of opening a
    form that would save it cut to 3,000."""
    async with running_bot(dk_server, clock=TestClock(NOW)) as bot:
        await bot.deps.team.save(saved_answer().model_copy(update={"answer": "a" * 3001}))
        own, _ = await team_list(bot, ASKER)
        await press(bot, buttons(own)[ACTION_TEAM_LIST_EDIT], ASKER)
        [said] = bot.fake.calls_to("chat.postEphemeral")

        assert [] == bot.fake.calls_to("views.open")
        assert "gdocs-bot team export" in said.args["text"]


async def test_team_in_a_direct_message_points_to_the_command(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The list and its buttons are `/gdocs team`'s; nothing is asked of Google's docs."""
    async with running_bot(dk_server) as bot:
        await bot.dm("team")
        await bot.finished(1)
        said = bot.fake.everything_sent()

        assert "Type `/gdocs team` in a channel" in said
        assert [] == dk_server.calls
