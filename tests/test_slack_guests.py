"""People from other organisations (Slack Connect guests, EXTERNAL_USERS): over signed HTTP
against the recording fake Slack and the MCP fakes. Their questions spend nothing and get one
notice per channel; their commands, shortcuts and clicks are refused privately; members in
the same channels are answered as before."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Any

from bot.quota import pacific_day
from bot.render import notice
from bot.report import Window, aggregate, collect, render_html, render_json, render_md, tally
from tests.fakes import slack_event_payloads as payloads
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.slack_api import BOT_ID, BOT_USER_ID, FakeSlack
from tests.slack_harness import BOT_TOKEN, SlackBot, running_bot
from tests.test_slack_feedback import answered, feedback_values, stored_votes

MEMBER = "UMEMBER1"
GUEST = "UGUEST77"
OTHER_TEAM = "TOTHER"
QUESTION = "how do I create a Cloud Storage bucket?"
MEMBER_TS = "1710000000.000100"
GUEST_TS = "1710000000.000200"
BUCKETS = "documents/docs.cloud.google.com/storage/docs/creating-buckets"
BUCKETS_URL = "https://docs.cloud.google.com/storage/docs/creating-buckets"
REFUSAL = "organisation that installed me"


def answer_queries(dk: FakeDeveloperKnowledge) -> int:
    return len(dk.tool_calls("answer_query"))


def notices(bot: SlackBot) -> list[dict[str, Any]]:
    """The guest notices posted (chat.postMessage), as sent."""
    return [c.args for c in bot.fake.calls_to("chat.postMessage") if REFUSAL in c.args["text"]]


async def counted(bot: SlackBot) -> dict[str, int]:
    """Today's report counters."""
    day = pacific_day(datetime.now(UTC))
    return {name: n for d, name, n in (await collect(bot.deps.store)).counters if d == day}


async def guest_mention(bot: SlackBot, *, ts: str = GUEST_TS, channel: str = "C1") -> None:
    await bot.mention(
        QUESTION, user=GUEST, ts=ts, channel=channel, user_team=OTHER_TEAM, shared=True
    )


async def test_in_a_shared_channel_guests_get_one_notice_and_members_are_answered(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """In an answer channel shared with another organisation (THREAD_FOLLOWUPS=anyone): a
    member's mention is answered; the guest's mention, follow-up in the member's thread and
    top-level question make no upstream call and get one notice, in the guest's thread."""
    async with running_bot(dk_server, answer_channels="C1", thread_followups="anyone") as bot:
        await bot.mention(QUESTION, user=MEMBER, ts=MEMBER_TS, shared=True)
        assert [("mention", "ok")] == await bot.finished(1)
        assert 1 == answer_queries(dk_server)

        await guest_mention(bot)
        await bot.channel_message(
            "and in Go?",
            user=GUEST,
            thread_ts=MEMBER_TS,
            parent_user_id=MEMBER,
            user_team=OTHER_TEAM,
            shared=True,
        )
        await bot.channel_message(QUESTION, user=GUEST, user_team=OTHER_TEAM, shared=True)
        assert [("guest", "guest")] * 3 == (await bot.finished(4))[1:]
        # the channel answers its members as before, after the notice too
        await bot.channel_message("what is Cloud Run?", user=MEMBER, shared=True)
        assert ("auto", "ok") == (await bot.finished(5))[-1]

        assert 2 == answer_queries(dk_server)  # the members' only
        [notice] = notices(bot)
        assert ("C1", GUEST_TS) == (notice["channel"], notice["thread_ts"])
        assert GUEST not in json.dumps(notice)
        reacted = [c.args["timestamp"] for c in bot.fake.calls_to("reactions.add")]
        assert (2, MEMBER_TS) == (len(reacted), reacted[0])  # only the members' progress
        assert 3 == (await counted(bot)).get(tally.GUEST_REFUSED)
        assert 2 == (await counted(bot)).get(tally.QUESTIONS)


async def test_a_guests_command_shortcut_and_show_full_doc_are_refused_privately(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """`/gdocs`, "Ask Google's docs", "Save as team answer" and Show full doc from a guest:
    the same sentence to the guest alone, no upstream call, nothing posted or opened; the
    command and the question shortcut count as refused questions, the others do not."""
    async with running_bot(dk_server) as bot:
        sent = await bot.command("how do I deploy to Cloud Run?", user=GUEST, team=OTHER_TEAM)
        acked = json.loads(sent.body)
        assert ("ephemeral", True) == (acked["response_type"], REFUSAL in acked["text"])

        keys = []
        for callback_id in ("ask_gdocs", "save_team_answer"):
            asked = await bot.message_shortcut(
                QUESTION, author=MEMBER, user=GUEST, team=OTHER_TEAM, callback_id=callback_id
            )
            assert (200, "") == (asked.status, asked.body)
            keys.append(asked.key)
        click = await bot.action(
            {"action_id": "show_doc:0", "value": BUCKETS}, user=GUEST, team=OTHER_TEAM
        )
        assert 200 == click.status
        keys.append(click.key)
        for key in keys:
            assert key is not None
            [said] = await bot.fake.await_responses(key)
            assert ("ephemeral", True) == (said["response_type"], REFUSAL in said["text"])

        assert [] == [c.tool for c in dk_server.calls]
        for method in (
            "chat.postMessage",
            "chat.postEphemeral",
            "views.open",
            "files.completeUploadExternal",
        ):
            assert [] == bot.fake.calls_to(method)
        assert 2 == (await counted(bot)).get(tally.GUEST_REFUSED)


async def test_a_guests_link_preview_unfurls_but_home_shows_them_nothing(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Link previews reveal nothing and spend no quota: a guest's still unfurls, in the
    channel where their mention was refused; the Home tab a guest opens gets no view."""
    async with running_bot(dk_server) as bot:
        await guest_mention(bot)
        event = payloads.link_shared_event([BUCKETS_URL], user=GUEST)
        await bot.event(event | {"user_team": OTHER_TEAM}, shared=True)
        [unfurl] = await bot.fake.await_calls("chat.unfurl")
        assert [BUCKETS_URL] == list(unfurl.args["unfurls"])
        home = payloads.app_home_opened_event(user=GUEST, channel="D9", tab="home")
        await bot.event(home | {"user_team": OTHER_TEAM})
        await bot.finished(3)
        assert [] == bot.fake.calls_to("views.publish")
        assert 0 == answer_queries(dk_server)
        assert 1 == len(notices(bot))


async def test_external_users_answer_answers_the_guest_deny_refuses(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """EXTERNAL_USERS=answer: the guest's mention is answered, with no notice; the default
    (deny) refuses the same mention."""
    async with running_bot(dk_server, external_users="answer") as bot:
        await guest_mention(bot)
        assert [("mention", "ok")] == await bot.finished(1)
        assert (1, []) == (answer_queries(dk_server), notices(bot))
    async with running_bot(dk_server) as bot:
        await guest_mention(bot)
        assert [("guest", "guest")] == await bot.finished(1)
        assert (1, 1) == (answer_queries(dk_server), len(notices(bot)))


async def test_on_grid_another_workspace_of_the_organisation_is_answered_another_org_not(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Installed in T1 of organisation E1: users.info (asked once per person) places a user
    of T2 in E1 (answered) and one of T3 in E2 (refused); a person Slack will not place is a
    member; the installation's own people cost no users.info call."""
    fake = FakeSlack().start()
    grid = {"ok": True, "user_id": BOT_USER_ID, "bot_id": BOT_ID, "team_id": "T1"}
    fake.identities[BOT_TOKEN] = grid | {"enterprise_id": "E1", "user": "gdocs", "team": "Test"}
    fake.placed = {"UMATE": ("T2", "E1"), "UOUTSIDE": ("T3", "E2")}
    try:
        async with running_bot(dk_server, fake=fake) as bot:
            await bot.mention(QUESTION, user=MEMBER, shared=True)
            await bot.mention(QUESTION, user="UMATE", user_team="T2", shared=True)
            await bot.mention("and buckets in Go?", user="UMATE", user_team="T2", shared=True)
            await bot.mention(QUESTION, user="UOUTSIDE", user_team="T3", shared=True)
            fake.fail("users.info", "user_not_found")
            await bot.mention("what is Cloud Run?", user="UNPLACED", user_team="T4", shared=True)
            outcomes = sorted(await bot.finished(5))
            assert [("guest", "guest"), *[("mention", "ok")] * 4] == outcomes
            asked_about = [c.args["user"] for c in fake.calls_to("users.info")]
            assert ["UMATE", "UOUTSIDE", "UNPLACED"] == asked_about
            assert 1 == len(notices(bot))
    finally:
        fake.stop()


async def test_a_retried_guest_mention_counts_once(dk_server: FakeDeveloperKnowledge) -> None:
    """Slack's retry of a guest's mention (same event id) is claimed: one count, one notice."""
    async with running_bot(dk_server) as bot:
        event = {
            "type": "app_mention",
            "user": GUEST,
            "user_team": OTHER_TEAM,
            "text": f"<@{BOT_USER_ID}> {QUESTION}",
            "ts": GUEST_TS,
            "channel": "C1",
            "event_ts": GUEST_TS,
        }
        await bot.event(event, event_id="EvGUEST1", shared=True)
        await bot.event(event, event_id="EvGUEST1", shared=True, retry_num=1)
        assert {("guest", "guest"), ("dedupe", "duplicate")} == set(await bot.finished(2))
        assert 1 == (await counted(bot)).get(tally.GUEST_REFUSED)
        assert 1 == len(notices(bot))


async def test_the_report_counts_refused_guest_questions_without_naming_them(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Two refused guest questions (in two channels: two notices) are "Guest questions
    refused: 2" in md, html and JSON, not among the questions, with no user id or text; a
    guest chatting without addressing the bot is not counted."""
    async with running_bot(dk_server) as bot:
        await guest_mention(bot)
        await guest_mention(bot, ts="1710000000.000300", channel="C2")
        await bot.channel_message(
            "lunch?", user=GUEST, channel="C3", user_team=OTHER_TEAM, shared=True
        )
        await bot.finished(3)
        assert 2 == len(notices(bot))
        today = date.fromisoformat(pacific_day(datetime.now(UTC)))
        report = aggregate(await collect(bot.deps.store), Window(today, today), quota_per_day=50)
    md, html, data = render_md(report), render_html(report), json.loads(render_json(report))
    assert "- Guest questions refused: 2" in md
    assert "<p>Guest questions refused: 2</p>" in html
    assert (2, 0) == (data["total"]["guest_refused"], data["total"]["questions"])
    for shown in (md, html, json.dumps(data)):
        assert GUEST not in shown
        assert "bucket" not in shown


async def test_a_guests_vote_is_not_recorded_and_their_dm_is_not_answered(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A guest's 👍 on a member's answer is refused privately and keeps no vote; a guest's DM
    makes no upstream call and gets the notice, in the DM."""
    async with running_bot(dk_server) as bot:
        answer = await answered(bot)
        up, _ = feedback_values(answer.args)
        action = payloads.feedback_action(up)
        ts = answer.result["ts"]
        click = await bot.action(action, user=GUEST, team=OTHER_TEAM, message_ts=ts)
        assert click.key is not None
        [said] = await bot.fake.await_responses(click.key)
        assert REFUSAL in said["text"]
        assert [] == await stored_votes(bot)

        await bot.dm(QUESTION, user=GUEST, channel="D9", user_team=OTHER_TEAM)
        assert ("guest", "guest") == (await bot.finished(3))[-1]
        assert 1 == answer_queries(dk_server)  # the member's command only
        assert ["D9"] == [n["channel"] for n in notices(bot)]


async def test_on_an_org_wide_install_an_event_in_the_askers_own_workspace_needs_no_users_info(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Org-wide on E1 (auth.test names the organisation, not a workspace): Bob of T2 asks by
    DM and in a Slack Connect answer channel, each event sent from his workspace T2 of E1
    (`team_id`, `enterprise_id`, as slack_bolt reads an actor): answered, no users.info
    call. Carol of T3 in the same channel is not placed by the event: Slack is asked once,
    and she is refused."""
    fake = FakeSlack().start()
    fake.identities[BOT_TOKEN] = payloads.org_wide_auth_test("E1", user_id=BOT_USER_ID)
    fake.placed = {"W2BOB": ("T2", "E1"), "W3CAROL": ("T3", "E2")}

    async def in_connect_channel(event: dict[str, Any], n: int) -> None:
        body = payloads.grid_event_callback(
            event, team="T2", enterprise="E1", bot_user=BOT_USER_ID, event_id=f"EvC{n}"
        )
        shared = json.dumps(body | {"is_ext_shared_channel": True})
        await bot.post_signed(shared, content_type="application/json")

    try:
        async with running_bot(dk_server, fake=fake, answer_channels="C1") as bot:
            dm = {"type": "message", "channel_type": "im", "channel": "D2", "user": "W2BOB"}
            await bot.grid_event(dm | {"text": QUESTION, "ts": MEMBER_TS}, team="T2")
            asked = {"type": "message", "channel_type": "channel", "channel": "C1"}
            asked |= {"user": "W2BOB", "text": "what is Cloud Run?", "ts": GUEST_TS}
            await in_connect_channel(asked | {"user_team": "T2"}, 1)
            assert [("auto", "ok"), ("dm", "ok")] == sorted(await bot.finished(2))
            assert [] == fake.calls_to("users.info")

            carol = {"user": "W3CAROL", "user_team": "T3", "ts": "1710000000.000300"}
            await in_connect_channel(asked | carol, 2)
            assert ("guest", "guest") == (await bot.finished(3))[-1]
            assert ["W3CAROL"] == [c.args["user"] for c in fake.calls_to("users.info")]
            assert (2, 1) == (answer_queries(dk_server), len(notices(bot)))
    finally:
        fake.stop()


def test_the_notice_names_the_installing_organisation_not_the_readers_workspace() -> None:
    """Each side of a Slack Connect channel sees it in its own workspace: "this workspace"
    would be the guest's. One sentence, saying whose people are answered."""
    text = notice("guests")["text"]
    assert "the organisation that installed me" in text
    assert "this workspace" not in text
    assert 1 == text.count(".")
