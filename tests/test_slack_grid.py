"""Enterprise Grid, an org-wide install with ONE bot token (SLACK_BOT_TOKEN), over signed
requests against the recording fake Slack: auth.test answers as the organisation E1; people
of its workspaces T1, T2 and T3 (W… ids) ask by mention, DM, follow-up, shortcut (`team:
null`), Try again and `/gdocs`. Each stream names the asker and the asker's own workspace;
channel settings, the day's answers and the cache are the organisation's, fair use a
person's."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from slack_bolt.async_app import AsyncBoltContext
from slack_bolt.authorization import AuthorizeResult

from bot.render import ACTION_TRY_AGAIN
from bot.slack import identity
from bot.slack.app import resume
from bot.slack.listeners.commands import shortcut_payload
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, Fault
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack
from tests.fakes.slack_event_payloads import (
    channel_message_event,
    grid_interaction,
    org_wide_auth_test,
)
from tests.quota_e2e_support import NO_RATE_LIMIT, Shown, answer_calls, shown_in
from tests.slack_harness import BOT_TOKEN, SlackBot, running_bot
from tests.team_support import team_answer

pytestmark = pytest.mark.timeout(60)

ORG = "E1"
#: person -> their workspace in ORG
ALICE, BOB, CARO = "W1ALICE", "W2BOB", "W3CARO"
HOME = {ALICE: "T1", BOB: "T2", CARO: "T3"}
QUESTION = "how do I create a bucket?"


@asynccontextmanager
async def org_wide_bot(dk: FakeDeveloperKnowledge, **overrides: Any) -> AsyncIterator[SlackBot]:
    """The bot with SLACK_BOT_TOKEN an org-wide token of ORG (auth.test says so; users.info
    places each person in their workspace of ORG)."""
    fake = FakeSlack().start()
    fake.identities[BOT_TOKEN] = org_wide_auth_test(ORG, user_id=BOT_USER_ID)
    fake.placed.update({user: (team, ORG) for user, team in HOME.items()})
    try:
        async with running_bot(dk, fake=fake, **overrides) as bot:
            yield bot
    finally:
        fake.stop()


def recipients(bot: SlackBot) -> list[tuple[str, str | None, str | None]]:
    """(channel, recipient_user_id, recipient_team_id) of each chat.startStream."""
    return [
        (c.args["channel"], c.args.get("recipient_user_id"), c.args.get("recipient_team_id"))
        for c in bot.fake.calls_to("chat.startStream")
    ]


def finished_streams(bot: SlackBot) -> int:
    return sum(1 for s in bot.fake.streams.all() if not s.open)


async def test_an_org_wide_install_streams_each_mention_to_its_askers_own_workspace(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Mentions from T1 and T2 (Slack's `user_team` naming only the organisation) are each
    streamed to the asker in the asker's workspace, with the mention stripped from the
    question (the bot user auth.test named) and one auth.test for the one token."""
    async with org_wide_bot(dk_server, stream_answers=True) as bot:
        await bot.grid_mention(QUESTION, user=ALICE, team="T1", channel="C1")
        await bot.grid_mention(QUESTION + " in Go", user=BOB, team="T2", channel="C2")
        outcomes = await bot.finished(2)

        assert [("mention", "ok"), ("mention", "ok")] == outcomes
        assert [("C1", ALICE, "T1"), ("C2", BOB, "T2")] == recipients(bot)
        assert 2 == finished_streams(bot)
        queries = [c.arguments["query"] for c in dk_server.tool_calls("answer_query")]
        assert [QUESTION, QUESTION + " in Go"] == queries
        assert 1 == len(bot.fake.calls_to("auth.test"))
        assert [] == bot.fake.calls_to("chat.postMessage")
        assert [] == bot.fake.invalid_payloads


async def test_a_dm_and_a_follow_up_from_another_workspace_are_streamed_to_their_asker(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Bob of T2 follows up in Alice's thread (THREAD_FOLLOWUPS=anyone): streamed to Bob in
    T2; his DM is streamed in the DM (Slack needs no recipient there)."""
    async with org_wide_bot(dk_server, stream_answers=True, thread_followups="anyone") as bot:
        await bot.grid_mention(QUESTION, user=ALICE, team="T1", ts="1710000000.000400")
        await bot.finished(1)
        reply = {"type": "message", "channel_type": "channel", "channel": "C1", "user": BOB}
        reply |= {"text": "and in Go?", "ts": "1710000000.000401"}
        await bot.grid_event(reply | {"thread_ts": "1710000000.000400"}, team="T2")
        await bot.finished(2)
        dm = {"type": "message", "channel_type": "im", "channel": "D2", "user": BOB}
        await bot.grid_event(dm | {"text": QUESTION, "ts": "1710000100.000001"}, team="T2")
        outcomes = await bot.finished(3)

        assert ["ok", "ok", "ok"] == [outcome for _, outcome in outcomes]
        assert [("C1", ALICE, "T1"), ("C1", BOB, "T2"), ("D2", None, None)] == recipients(bot)
        assert 3 == finished_streams(bot)
        assert [] == bot.fake.invalid_payloads


async def test_the_ask_shortcut_with_no_team_in_its_payload_streams_to_the_askers_workspace(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Org-wide, Slack sends a shortcut with `team: null` and the workspace in
    `user.team_id`: Bob's "Ask Google's docs" in T2 is streamed to Bob in T2."""
    async with org_wide_bot(dk_server, stream_answers=True) as bot:
        sent = await bot.grid_shortcut(
            QUESTION, author=ALICE, user=BOB, team="T2", ts="1710000300.000001"
        )
        outcomes = await bot.finished(1)

        assert 200 == sent.status
        assert [("shortcut", "ok")] == outcomes
        assert [("C1", BOB, "T2")] == recipients(bot)
        assert 1 == finished_streams(bot)
        assert [] == bot.fake.calls_to("chat.postMessage")
        assert [] == bot.fake.invalid_payloads


async def test_a_shortcut_from_another_workspace_finished_after_a_restart_streams_there(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Bob's shortcut in T2 (`team: null`), recorded before a crash and taken over by
    another process, is streamed to Bob in T2: the work record keeps his workspace."""
    async with org_wide_bot(dk_server, stream_answers=True) as bot:
        payload, _ = bot.shortcut_payload(QUESTION, author=ALICE, user=BOB, team="T2")
        payload = grid_interaction(payload, team="T2", enterprise=ORG)
        kept = shortcut_payload(payload, BOT_USER_ID)
        record = await bot.deps.work.accept("shortcut", kept, key=f"trigger:{BOB}")
        assert record is not None
        await resume(bot.deps, bot.app.client, record)
        await bot.finished(1)

        assert [("C1", BOB, "T2")] == recipients(bot)
        assert 1 == finished_streams(bot)
        assert [] == bot.fake.invalid_payloads


def try_again_button(bot: SlackBot) -> dict[str, Any]:
    [stream] = bot.fake.streams.all()
    [block] = [b for b in stream.final_blocks or [] if b.get("accessory")]
    button: dict[str, Any] = block["accessory"]
    assert ACTION_TRY_AGAIN == button["action_id"]
    return button


async def test_try_again_with_no_team_in_its_payload_streams_to_the_clickers_workspace(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Bob's question in T2 meets an outage; his Try again click (`team: null`) asks again in
    the thread, streamed to Bob in T2."""
    dk_server.faults.extend(Fault(status=503) for _ in range(2))
    async with org_wide_bot(dk_server, mcp_max_retries=1, stream_answers=True) as bot:
        await bot.grid_mention(QUESTION, user=BOB, team="T2", ts="1710000000.000500")
        await bot.finished(1)
        button = try_again_button(bot)

        action = {"action_id": ACTION_TRY_AGAIN, "value": button["value"]}
        await bot.grid_action(
            action,
            user=BOB,
            team="T2",
            message_ts="1710000000.000501",
            thread_ts="1710000000.000500",
        )
        outcomes = await bot.finished(2)

        assert ["unavailable", "ok"] == [outcome for _, outcome in outcomes]
        assert [("C1", BOB, "T2"), ("C1", BOB, "T2")] == recipients(bot)
        assert [] == bot.fake.invalid_payloads


async def test_home_opened_in_another_workspace_lists_that_workspaces_channels_for_that_person(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Bob opens the Home tab in T2: his Home is published, its channel list asked of T2
    (an org-wide token must name the workspace in users.conversations: Bolt's client per
    request adds the payload's `team_id` to each call)."""
    async with org_wide_bot(dk_server) as bot:
        bot.fake.memberships[BOB] = ["C2"]
        await bot.grid_command("channel auto", user=BOB, team="T2", channel="C2")
        await bot.finished(1)
        home = {"type": "app_home_opened", "user": BOB, "channel": "D2", "tab": "home"}
        await bot.grid_event(home | {"event_ts": "1710000200.000001"}, team="T2")
        [published] = await bot.fake.await_calls("views.publish")
        [lookup] = bot.fake.calls_to("users.conversations")

        assert (BOB, "T2") == (lookup.args["user"], lookup.args.get("team_id"))
        assert BOB == published.args["user_id"]
        assert "<#C2>" in json.dumps(published.args["view"])
        assert [] == bot.fake.invalid_payloads


async def test_an_answer_channel_set_in_one_workspace_answers_anyone_there_and_no_other_channel(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Alice (T1) runs `/gdocs channel auto` in C1: Bob of T2 asking at the top of C1 is
    answered in his workspace's stream; the same question in C2 (another channel of the
    organisation) is left alone: settings are keyed by the channel, unique in the org."""
    async with org_wide_bot(dk_server, stream_answers=True) as bot:
        await bot.grid_command("channel auto", user=ALICE, team="T1", channel="C1")
        await bot.finished(1)
        for channel in ("C1", "C2"):
            event = channel_message_event(QUESTION, user=BOB, channel=channel)
            await bot.grid_event(event, team="T2")
        await bot.finished(2)
        await bot.deps.inflight.drain(5)

        assert [("C1", BOB, "T2")] == recipients(bot)
        assert 1 == answer_calls(dk_server)
        assert [] == bot.fake.invalid_payloads


async def grid_ask(bot: SlackBot, question: str, *, user: str) -> Shown:
    """`/gdocs <question>` from `user` in their workspace; what the channel shows."""
    done = len(bot.metrics.finished)
    await bot.grid_command(question, user=user, team=HOME[user])
    await bot.finished(done + 1)
    posts = [
        c.args
        for c in bot.fake.calls_to("chat.postMessage")
        if question in json.dumps(c.args.get("blocks") or [], ensure_ascii=False)
    ]
    assert posts, f"no answer posted for {question!r}"
    return shown_in(posts[-1])


async def test_the_orgs_workspaces_share_the_days_answers_and_the_cache(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """ANSWER_QUOTA_PER_DAY=2 for the whole organisation: Alice (T1) asks, Bob (T2) asks the
    same (a cache hit: no second answer_query), Bob a new one; Caro (T3) then gets pages,
    the day's answers spent; `/gdocs quota` in T3 counts the organisation's."""
    async with org_wide_bot(dk_server, answer_quota_per_day=2, **NO_RATE_LIMIT) as bot:
        shown = [
            await grid_ask(bot, QUESTION, user=ALICE),
            await grid_ask(bot, QUESTION, user=BOB),
            await grid_ask(bot, "how do I delete a bucket?", user=BOB),
            await grid_ask(bot, "how do I list buckets?", user=CARO),
        ]
        sent = await bot.grid_command("quota", user=CARO, team="T3")
        await bot.finished(5)
        assert sent.key is not None
        [status] = bot.fake.responses_to(sent.key)

        assert ["answer", "answer", "answer", "search"] == [s.kind for s in shown]
        assert 2 == answer_calls(dk_server)
        assert "*0* of 2 left for the team" in json.dumps(status, ensure_ascii=False)


async def test_fair_use_stays_per_person_across_the_orgs_workspaces(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """ANSWER_QUOTA_PER_USER_PER_DAY=1: Alice's second question gets pages; Bob of T2, a
    person of his own, still gets an answer."""
    async with org_wide_bot(dk_server, answer_quota_per_user_per_day=1, **NO_RATE_LIMIT) as bot:
        mine = [
            await grid_ask(bot, "how do I index table 1?", user=ALICE),
            await grid_ask(bot, "how do I index table 2?", user=ALICE),
        ]
        bobs = await grid_ask(bot, "how do I index table 3?", user=BOB)

        assert ["answer", "search"] == [s.kind for s in mine]
        assert "answer" == bobs.kind
        assert 2 == answer_calls(dk_server)


async def test_a_team_answer_saved_for_the_workspace_is_given_in_every_workspace_of_the_org(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """One token serves the organisation: Alice's team answer saved in T1 "for the whole
    workspace" answers Bob's question in T2, with no answer_query call."""
    async with org_wide_bot(dk_server) as bot:
        saved = team_answer(QUESTION, "We use Terraform.", author=ALICE, channel="C1")
        await bot.deps.team.save(saved)
        shown = await grid_ask(bot, QUESTION, user=BOB)

        assert "We use Terraform." in shown.text
        assert f"saved by <@{ALICE}>" in shown.text
        assert 0 == answer_calls(dk_server)
        assert [] == bot.fake.invalid_payloads


def test_an_org_wide_installs_workspace_is_not_taken_from_the_clickers_payload() -> None:
    """Bolt's authorization for an org-wide install may name no workspace (its installation
    has `team: null`); a click then has `team: null` and Bolt's context.team_id is the
    clicker's own workspace. The install is read from the authorization alone, so a click
    from another organisation's TX is a Grid workspace to place (None: ask Slack), never
    "the installation's own workspace" (a member)."""
    result = AuthorizeResult(enterprise_id=ORG, team_id=None, bot_token="xoxb-org")
    context = AsyncBoltContext(
        authorize_result=result, team_id="TX", enterprise_id=ORG, is_enterprise_install=True
    )
    home = identity.install(context)
    click = {"type": "block_actions", "team": None, "user": {"id": "UX", "team_id": "TX"}}

    assert identity.Install(None, ORG, True) == home
    assert None is identity.is_guest(identity.asker(click), home)
    single = AsyncBoltContext(authorize_result=AuthorizeResult(enterprise_id=None, team_id="T1"))
    assert identity.Install("T1", None, False) == identity.install(single)
