"""👎 suggestions end to end, over signed requests: the "what was wrong?" form's better answer
becomes a draft team answer that answers nobody and shows only on the Home tab of the
team's admins (workspace admins and TEAM_ANSWERS_ADMINS) until one approves it; Discard
drops it; a member's forged Approve is refused; an answer past its review date shows on
its author's Home and not on another member's."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.render import (
    ACTION_TEAM_APPROVE,
    ACTION_TEAM_DISCARD,
    ACTION_TEAM_EDIT,
    FEEDBACK_MODAL_CALLBACK,
    SUGGESTION_BLOCK_ID,
    TEAM_FORM_CALLBACK,
)
from bot.store import StoreUnavailable
from bot.team import TeamAnswer, TeamAnswers
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.slack_api import SlackCall
from tests.slack_harness import ASKER, SlackBot, running_bot
from tests.test_slack_feedback import comment_button

MEMBER = "UMEMBER1"
ADMIN = "UADMIN01"  # a workspace admin (users.info says so)
LISTED = "ULISTED1"  # in TEAM_ANSWERS_ADMINS
QUESTION = "how do I create a bucket?"
SUGGESTION = "We use **Terraform**: `terraform apply` in infra/buckets. <!here> <https://evil.example|google.com>"


def shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def down_value(call: SlackCall) -> str:
    [element] = call.args["blocks"][-1]["elements"]
    return str(element["negative_button"]["value"])


async def suggest(
    bot: SlackBot, suggestion: str | None, comment: str | None = None, channel: str = "C1"
) -> Any:
    """`/gdocs search <question>` in `channel` (a search reply: the question's answer is not
    cached), its 👎 by MEMBER, the form opened from the thanks and sent with `suggestion`."""
    await bot.command(f"search {QUESTION}", channel=channel)
    [reply] = await bot.fake.await_calls("chat.postMessage")
    await bot.finished(1)  # the answer is kept for votes once its reply is posted
    await bot.feedback_click(down_value(reply), user=MEMBER, message_ts=reply.result["ts"])
    [thanks] = await bot.fake.await_calls("chat.postEphemeral")
    await bot.finished(2)
    await bot.action(comment_button(thanks.args), user=MEMBER)
    [opened] = await bot.fake.await_calls("views.open")
    await bot.finished(3)
    values = {"comment": {"comment": comment}, SUGGESTION_BLOCK_ID: {"suggestion": suggestion}}
    sent = await bot.view_submission(
        FEEDBACK_MODAL_CALLBACK, opened.args["view"]["private_metadata"], values, user=MEMBER
    )
    await bot.finished(4)
    return sent


async def home_of(bot: SlackBot, user: str) -> dict[str, Any]:
    """`user` opens Home; the view published for them."""
    before = len(bot.fake.calls_to("views.publish"))
    done = len(bot.metrics.finished)
    await bot.app_home_opened("home", user=user)
    await bot.finished(done + 1)
    calls = [c for c in bot.fake.calls_to("views.publish")[before:] if c.args["user_id"] == user]
    assert calls, f"no Home published for {user}"
    return dict(calls[-1].args["view"])


def due_answer() -> TeamAnswer:
    """ASKER's team answer, saved 200 days ago: past its review date (180 days)."""
    saved = datetime.now(UTC) - timedelta(days=200)
    return TeamAnswer(
        id="due1",
        question="where do our buckets live?",
        answer="europe-west4",
        author=ASKER,
        saved_at=saved,
        review_at=saved + timedelta(days=180),
        visibility="workspace",
    )


def button(view: dict[str, Any], action_id: str) -> dict[str, Any]:
    [found] = [
        element
        for block in view["blocks"]
        for element in [*block.get("elements", []), block.get("accessory") or {}]
        if element.get("action_id") == action_id
    ]
    return found


async def click(bot: SlackBot, view: dict[str, Any], action_id: str, user: str) -> None:
    pressed = button(view, action_id)
    done = len(bot.metrics.finished)
    action = {k: pressed[k] for k in ("action_id", "type", "value")} | {"block_id": "b1"}
    assert 200 == (await bot.home_click(action, view=view, user=user)).status
    await bot.finished(done + 1)


async def asked(bot: SlackBot, dk_server: FakeDeveloperKnowledge) -> tuple[str, int]:
    """`/gdocs <question>` in C1: (the reply, answer_query calls so far)."""
    before = len(bot.fake.calls_to("chat.postMessage"))
    done = len(bot.metrics.finished)
    await bot.command(QUESTION)
    await bot.finished(done + 1)
    reply = bot.fake.calls_to("chat.postMessage")[before:]
    return shown([c.args for c in reply]), len(dk_server.tool_calls("answer_query"))


async def test_a_thumbs_down_with_a_suggestion_keeps_a_draft_and_thanks_once(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The form's suggestion is a draft for the answer's question, by the voter, in the
    answer's channel, naming the 👎'd answer; one thanks says it goes to the admins."""
    async with running_bot(dk_server) as bot:
        sent = await suggest(bot, SUGGESTION)
        [draft] = await bot.deps.team.all()
        thanks = bot.fake.calls_to("chat.postEphemeral")
        record = await bot.deps.feedback.answer(str(draft.from_answer))

        assert (200, "") == (sent.status, sent.body)
        assert ("draft", QUESTION, SUGGESTION) == (draft.status, draft.question, draft.answer)
        assert (MEMBER, "channel", "C1") == (draft.author, draft.visibility, draft.channel)
        assert record is not None
        assert QUESTION == record.question
        assert draft.review_at > draft.saved_at
        assert 2 == len(thanks)  # the 👎's, then the form's
        assert "goes to the team's admins" in shown(thanks[1].args)
        assert [] == bot.fake.invalid_payloads


async def test_a_form_without_a_suggestion_keeps_no_draft(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The line alone is kept with the vote, as before; no draft, the note's thanks."""
    async with running_bot(dk_server) as bot:
        await suggest(bot, None, comment="out of date")
        [vote] = await bot.deps.feedback.votes()

        assert [] == await bot.deps.team.all()
        assert "out of date" == vote.comment
        assert "note is saved" in shown(bot.fake.calls_to("chat.postEphemeral")[1].args)


async def test_a_suggestion_over_the_limit_is_refused_in_the_form(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Over the field's 3,000 characters (forged: Slack's client holds to `max_length`): the
    form stays open with why, the form's limit, under the field; nothing kept."""
    async with running_bot(dk_server) as bot:
        sent = await suggest(bot, "x" * 3001)
        body = json.loads(sent.body)

        assert "errors" == body["response_action"]
        assert "can be 3,000." in body["errors"][SUGGESTION_BLOCK_ID]
        assert [] == await bot.deps.team.all()


async def test_a_suggestion_the_store_did_not_take_is_said_in_the_form(
    dk_server: FakeDeveloperKnowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shared store did not answer: "Couldn't save your suggestion" in the form (its
    text still there), no thanks claiming it was kept."""

    async def unavailable(self: TeamAnswers, answer: TeamAnswer) -> TeamAnswer:
        raise StoreUnavailable("redis did not answer")

    monkeypatch.setattr(TeamAnswers, "save", unavailable)
    async with running_bot(dk_server) as bot:
        sent = await suggest(bot, SUGGESTION)
        body = json.loads(sent.body)

        assert "Couldn't save your suggestion" in body["errors"][SUGGESTION_BLOCK_ID]
        assert 1 == len(bot.fake.calls_to("chat.postEphemeral"))  # the 👎's thanks only


async def test_a_draft_answers_nobody_and_is_not_on_a_members_home(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The question asked again goes to Google (answer_query called), and a member's Home
    (the suggester's included) lists no suggestion."""
    async with running_bot(dk_server) as bot:
        await suggest(bot, SUGGESTION)
        reply, calls = await asked(bot, dk_server)
        views = [await home_of(bot, user) for user in (MEMBER, ASKER)]

        assert ["draft"] == [a.status for a in await bot.deps.team.all()]
        assert 1 == calls
        assert "Terraform" not in reply
        for view in views:
            assert "Suggested team answers" not in shown(view)
            assert "Terraform" not in shown(view)


@pytest.mark.parametrize("admin", [ADMIN, LISTED], ids=["workspace admin", "TEAM_ANSWERS_ADMINS"])
async def test_a_draft_shows_on_a_team_admins_home_escaped(
    dk_server: FakeDeveloperKnowledge, admin: str
) -> None:
    """Question, who suggested it, its first lines escaped (no ping, no link), and
    Approve / Discard."""
    async with running_bot(dk_server, team_answers_admins=LISTED) as bot:
        bot.fake.admins.add(ADMIN)
        await suggest(bot, SUGGESTION)
        view = await home_of(bot, admin)
        text = shown(view)

        assert "Suggested team answers" in text
        assert f"suggested by <@{MEMBER}>" in text
        assert QUESTION in text
        assert "Terraform" in text
        assert "<!here>" not in text
        assert "<https://evil" not in text
        assert "&lt;!here&gt;" in text
        assert button(view, ACTION_TEAM_APPROVE)
        assert button(view, ACTION_TEAM_DISCARD)
        assert [] == bot.fake.invalid_payloads


PRIVATE = "C9PRIV"  # a private channel (conversations.info says so) ADMIN is in


async def test_a_private_channels_suggestion_shows_only_to_admins_in_it(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A private channel's words stay there: on the Home of an admin in it, not of one who
    is not (conversations.members)."""
    async with running_bot(dk_server, team_answers_admins=LISTED) as bot:
        bot.fake.admins.add(ADMIN)
        bot.fake.private_channels.add(PRIVATE)
        bot.fake.memberships.update({ADMIN: [PRIVATE], MEMBER: [PRIVATE]})
        await suggest(bot, SUGGESTION, channel=PRIVATE)
        inside, outside = await home_of(bot, ADMIN), await home_of(bot, LISTED)

        assert "Terraform" in shown(inside)
        assert "Suggested team answers" not in shown(outside)
        assert "Terraform" not in shown(outside)


async def test_a_public_channels_suggestion_shows_to_admins_not_in_it(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """As before: a public channel's draft is on every team admin's Home."""
    async with running_bot(dk_server, team_answers_admins=LISTED) as bot:
        bot.fake.admins.add(ADMIN)
        bot.fake.memberships.update({ADMIN: ["C1"]})
        await suggest(bot, SUGGESTION)
        views = [await home_of(bot, admin) for admin in (ADMIN, LISTED)]

        assert all("Terraform" in shown(view) for view in views)


async def test_an_admins_forged_approve_of_a_private_channels_draft_is_refused(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """An admin not in the private channel replaying Approve from one who is: refused."""
    async with running_bot(dk_server, team_answers_admins=LISTED) as bot:
        bot.fake.admins.add(ADMIN)
        bot.fake.private_channels.add(PRIVATE)
        bot.fake.memberships.update({ADMIN: [PRIVATE]})
        await suggest(bot, SUGGESTION, channel=PRIVATE)
        await click(bot, await home_of(bot, ADMIN), ACTION_TEAM_APPROVE, LISTED)
        [draft] = await bot.deps.team.all()

        assert "draft" == draft.status
        assert ("home_action", "refused") in bot.metrics.finished


async def test_an_approved_suggestion_answers_the_question_without_google(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Approve on the admin's Home: the question is answered with the suggestion, no
    answer_query call; the admin's Home is published again without it."""
    async with running_bot(dk_server, team_answers_admins=LISTED) as bot:
        await suggest(bot, SUGGESTION)
        view = await home_of(bot, LISTED)
        published = len(bot.fake.calls_to("views.publish"))
        await click(bot, view, ACTION_TEAM_APPROVE, LISTED)
        [answer] = await bot.deps.team.all()
        again = bot.fake.calls_to("views.publish")[published:]
        reply, calls = await asked(bot, dk_server)

        assert "approved" == answer.status
        assert 0 == calls
        assert "terraform apply" in reply
        assert [LISTED] == [c.args["user_id"] for c in again]
        assert "Suggested team answers" not in shown(again[0].args["view"])


async def test_a_discarded_suggestion_is_gone(dk_server: FakeDeveloperKnowledge) -> None:
    """Discard drops the draft; the question still goes to Google."""
    async with running_bot(dk_server) as bot:
        bot.fake.admins.add(ADMIN)
        await suggest(bot, SUGGESTION)
        await click(bot, await home_of(bot, ADMIN), ACTION_TEAM_DISCARD, ADMIN)
        _, calls = await asked(bot, dk_server)

        assert [] == await bot.deps.team.all()
        assert 1 == calls
        assert "Suggested team answers" not in shown(bot.fake.calls_to("views.publish")[-1].args)


async def test_a_members_forged_approve_is_refused(dk_server: FakeDeveloperKnowledge) -> None:
    """A member replaying an admin's Approve: a short refusal in their DM, still a draft."""
    async with running_bot(dk_server) as bot:
        bot.fake.admins.add(ADMIN)
        await suggest(bot, SUGGESTION)
        view = await home_of(bot, ADMIN)
        await click(bot, view, ACTION_TEAM_APPROVE, MEMBER)
        [draft] = await bot.deps.team.all()
        [note] = [c for c in bot.fake.calls_to("chat.postMessage") if c.args["channel"] == MEMBER]

        assert "draft" == draft.status
        assert "Only the team's admins" in note.args["text"]
        assert ("home_action", "refused") in bot.metrics.finished


async def test_an_answer_past_its_review_date_shows_on_its_authors_home_only(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """ "Team answers due for review" on the author's Home; another member's has none."""
    async with running_bot(dk_server) as bot:
        await bot.deps.team.save(due_answer())
        mine, theirs = await home_of(bot, ASKER), await home_of(bot, MEMBER)

        assert "Team answers due for review" in shown(mine)
        assert "where do our buckets live?" in shown(mine)
        assert f"saved by <@{ASKER}>" in shown(mine)
        assert "Team answers due for review" not in shown(theirs)
        assert "buckets live" not in shown(theirs)


def edits(view: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The Edit buttons of (the suggestions, the answers due)."""
    rows = [b for b in view["blocks"] if b["type"] == "actions"]
    of_drafts = [e for b in rows for e in b["elements"] if e["action_id"] == ACTION_TEAM_EDIT]
    of_due = [
        b["accessory"]
        for b in view["blocks"]
        if (b.get("accessory") or {}).get("action_id") == ACTION_TEAM_EDIT
    ]
    return of_drafts, of_due


async def press(bot: SlackBot, pressed: dict[str, Any], user: str) -> None:
    view = {"type": "home", "blocks": [{"type": "actions", "elements": [pressed]}]}
    await click(bot, view, str(pressed["action_id"]), user)


async def test_edit_on_home_opens_the_team_answer_form_for_a_draft_and_an_answer_due(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """An admin's Edit on a suggestion: the form with its text, reviewing the draft; the
    author's Edit on an answer due: the form editing it; a member's Edit on a suggestion:
    refused in their DM, no form."""
    async with running_bot(dk_server, team_answers_admins=LISTED) as bot:
        await suggest(bot, SUGGESTION)
        await bot.deps.team.save(due_answer())
        [draft_edit], _ = edits(await home_of(bot, LISTED))
        _, [due_edit] = edits(await home_of(bot, ASKER))
        await press(bot, draft_edit, LISTED)
        await press(bot, due_edit, ASKER)
        await press(bot, draft_edit, MEMBER)
        forms = [c.args["view"] for c in bot.fake.calls_to("views.open")[1:]]
        [refusal] = [
            c for c in bot.fake.calls_to("chat.postMessage") if c.args["channel"] == MEMBER
        ]

        assert 2 == len(forms)  # after the 👎 form: the admin's and the author's
        assert [TEAM_FORM_CALLBACK] * 2 == [form["callback_id"] for form in forms]
        assert '"m":"draft"' in forms[0]["private_metadata"]
        assert "terraform apply" in shown(forms[0])
        assert '"m":"edit"' in forms[1]["private_metadata"]
        assert "where do our buckets live?" in shown(forms[1])
        assert "Only the team's admins" in refusal.args["text"]
