"""Team answers given before Google's docs are asked (issue 42, item 2), over signed requests
to the real Bolt app against the MCP fakes and the recording fake Slack: a saved answer is
given where its visibility allows with no answer_query call, says whose it is, and "Ask
Google's docs too" asks them anyway, where and how the question was asked."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.quota import pacific_day
from bot.render import ACTION_ASK_GOOGLE, assistant_status
from bot.report import collect, tally
from bot.team import TeamAnswer, Visibility
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.slack_harness import ASKER, SlackBot, running_bot
from tests.team_support import team_answer
from tests.test_slack_commands import blocks_text, tools_called
from tests.test_slack_streaming import only_stream

pytestmark = pytest.mark.timeout(60)

QUESTION = "how do I create a Cloud Storage bucket?"
PHRASING = "How do we make a GCS bucket?"
BUCKETS_URL = "https://docs.cloud.google.com/storage/docs/creating-buckets"
TEAM_TEXT = (
    "We use Terraform, not the console: run\n\n"
    "```\ngcloud storage buckets create gs://ours --location=europe-west4\n```\n\n"
    f"See [Create buckets]({BUCKETS_URL})."
)
HEAD = "Team answer · saved by <@U0ANA> on 3 Dec 2026 · from <#C2>"
GOOGLE_TOO = "Ask Google's docs too"


async def save(
    bot: SlackBot,
    *,
    visibility: Visibility = "workspace",
    text: str = TEAM_TEXT,
    also: tuple[str, ...] = (PHRASING,),
    question: str = QUESTION,
) -> TeamAnswer:
    """A team answer saved in #infra (C2) by U0ANA, as the shortcut's modal saves it."""
    answer = team_answer(question, text, also=also, visibility=visibility)
    return await bot.deps.team.save(answer)


def button(message: dict[str, Any], action_id: str) -> dict[str, Any]:
    """The message's button with `action_id` (exactly one)."""
    [found] = [
        element
        for block in message.get("blocks") or []
        if block["type"] == "actions"
        for element in block["elements"]
        if element.get("action_id") == action_id
    ]
    return found


async def today(bot: SlackBot) -> dict[str, int]:
    """Today's report counters."""
    day = pacific_day(datetime.now(UTC))
    return {name: n for d, name, n in (await collect(bot.deps.store)).counters if d == day}


async def test_a_workspace_team_answer_is_given_for_its_question_and_phrasing_elsewhere(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Saved in #infra for the workspace: in C1 the question and a saved phrasing (asked
    differently) get it, marked once as the team's, with its Sources and feedback, counted
    as used and as a generated answer saved; answer_query is never called."""
    async with running_bot(dk_server) as bot:
        saved = await save(bot)
        await bot.command(QUESTION, channel="C1")
        await bot.command(PHRASING.lower().rstrip("?"), channel="C3")
        await bot.finished(2)
        posts = [c.args for c in bot.fake.calls_to("chat.postMessage")]
        uses = await bot.deps.team.uses([saved.id])
        counts = await today(bot)

    assert ["C1", "C3"] == [post["channel"] for post in posts]
    for post in posts:
        shown = blocks_text(post)
        assert 1 == shown.count(HEAD)
        assert "europe-west4" in shown
        assert "*Sources*" in shown
        assert BUCKETS_URL in shown
        assert "context_actions" == post["blocks"][-1]["type"]  # 👍 / 👎
        assert GOOGLE_TOO == button(post, ACTION_ASK_GOOGLE)["text"]["text"]
        assert "review due" not in shown.lower()
    assert "answer_query" not in tools_called(dk_server)
    assert {saved.id: 2} == uses
    assert {"questions": 2, tally.TEAM_USED: 2, tally.TEAM_SAVED: 2} == counts
    assert [] == bot.fake.invalid_payloads


async def test_a_channel_team_answer_is_given_only_in_its_channel(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Saved for #infra only: asked in C1, Google's docs answer (answer_query once); asked
    in #infra, the team's answer, no further call."""
    async with running_bot(dk_server) as bot:
        await save(bot, visibility="channel")
        await bot.command(QUESTION, channel="C1")
        await bot.finished(1)
        await bot.command(QUESTION, channel="C2")
        await bot.finished(2)
        elsewhere, there = [c.args for c in bot.fake.calls_to("chat.postMessage")]

    assert ["answer_query"] == tools_called(dk_server)
    assert "Team answer" not in blocks_text(elsewhere)
    assert HEAD in blocks_text(there)
    assert [] == bot.fake.invalid_payloads


async def test_ask_googles_docs_too_answers_from_google_in_the_team_answers_thread(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The button under a team answer posted in C1 asks the same question again with the
    team's answer skipped: answer_query once, Google's answer in the team answer's thread.
    The team answer's check of its commands kept nothing under the question's cache key
    (else Google's docs would be "answered" by the team's text)."""
    async with running_bot(dk_server) as bot:
        await save(bot)
        await bot.command(QUESTION, channel="C1")
        [team] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)
        assert "answer_query" not in tools_called(dk_server)
        assert any(c.tool == "get_documents" for c in dk_server.calls)  # its command checked

        ts = team.result["ts"]
        pressed = button(team.args, ACTION_ASK_GOOGLE)
        clicked = await bot.action(
            {"block_id": ACTION_ASK_GOOGLE, **pressed}, channel="C1", message_ts=ts
        )
        assert 200 == clicked.status
        await bot.fake.await_calls("chat.postMessage", 2)
        outcomes = await bot.finished(2)
        google = bot.fake.calls_to("chat.postMessage")[1].args

    assert ["answer_query"] == tools_called(dk_server)
    assert ("C1", ts) == (google["channel"], google["thread_ts"])
    assert "Team answer" not in blocks_text(google)
    assert "Create buckets" in blocks_text(google)
    assert ["ok", "ok"] == [outcome for _, outcome in outcomes]
    assert [] == bot.fake.invalid_payloads


async def test_a_streamed_reply_gives_the_team_answer_with_its_own_step(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A mention, streamed: one step says the team's answer was found (no search), the head
    names it, its Markdown streams, and the final blocks carry Ask Google's docs too."""
    async with running_bot(dk_server, stream_answers=True) as bot:
        await save(bot, text="We deploy with **Terraform**, not gcloud.")
        await bot.mention(QUESTION, ts="1710000000.000100")
        await bot.finished(1)
        stream = only_stream(bot.fake)

    assert [
        ("step-1", "Found the team's answer", "in_progress"),
        ("step-1", "Found the team's answer", "complete"),
    ] == stream.tasks()
    head = json.dumps([c for c in stream.chunks if c["type"] == "blocks"], ensure_ascii=False)
    assert 1 == head.count(HEAD)
    assert "We deploy with **Terraform**, not gcloud." in stream.text()
    final = {"blocks": stream.final_blocks}
    assert GOOGLE_TOO == button(final, ACTION_ASK_GOOGLE)["text"]["text"]
    assert tools_called(dk_server) == []
    assert [] == bot.fake.invalid_payloads


async def test_a_dm_asking_a_saved_question_never_shows_a_status_naming_googles_docs(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """In a DM the status under the question says what the bot does: the team's answer is
    looked up before it is set, so it never says Google's docs are being searched."""
    async with running_bot(dk_server) as bot:
        await save(bot)
        await bot.dm(QUESTION, channel="D42", ts="1710000100.000777")
        await bot.finished(1)
        [post] = bot.fake.calls_to("chat.postMessage")
        statuses = [c.args for c in bot.fake.calls_to("assistant.threads.setStatus")]

    assert HEAD in blocks_text(post.args)
    assert assistant_status("team") == statuses[0]["status"]
    assert all("Google" not in json.dumps(status) for status in statuses)
    assert "answer_query" not in tools_called(dk_server)
    assert [] == bot.fake.invalid_payloads


async def test_a_private_team_answer_stays_private_and_so_does_asking_google_too(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """`/gdocs private …`: the team's answer to the asker alone (Share, Ask Google's docs
    too); the button asks privately again, with answer_query; nothing posted in the channel."""
    async with running_bot(dk_server) as bot:
        await save(bot)
        sent = await bot.command(f"private {QUESTION}", channel="C1")
        await bot.finished(1)
        assert sent.key is not None
        _progress, private = bot.fake.responses_to(sent.key)
        assert HEAD in blocks_text(private)
        assert "Share in channel" in blocks_text(private)
        pressed = button(private, ACTION_ASK_GOOGLE)

        clicked = await bot.action({"block_id": ACTION_ASK_GOOGLE, **pressed}, ephemeral=True)
        await bot.finished(2)
        assert clicked.key is not None
        google = bot.fake.responses_to(clicked.key)[-1]

    assert ["answer_query"] == tools_called(dk_server)
    assert "Share in channel" in blocks_text(google)
    assert "Team answer" not in blocks_text(google)
    assert [] == bot.fake.calls_to("chat.postMessage")
    assert [] == bot.fake.invalid_payloads


async def test_team_text_is_escaped_no_ping_and_no_spoofed_link(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The team's Markdown is untrusted text: `<!channel>` does not ping, a Slack link
    written into it stays words, and a link labelled with another host shows its address."""
    hostile = "Ask <!channel> or see <https://evil.example|google.com> and [google.com](https://evil.example/x)."
    async with running_bot(dk_server) as bot:
        await save(bot, text=hostile)
        await bot.command(QUESTION, channel="C1")
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)

    shown = blocks_text(post.args)
    assert "<!channel>" not in shown
    assert "&lt;!channel&gt;" in shown
    assert "<https://evil.example|google.com>" not in shown
    assert "|google.com>" not in shown
    assert [] == bot.fake.invalid_payloads


async def test_in_a_thread_a_full_question_finds_the_team_answer_a_follow_up_does_not(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """In the bot's thread, the team's question asked in full gets the team's answer there;
    a follow-up is looked up with its thread's question, not by its own words (a team
    answer saved for "and in Go?" answers another thread's question), so Google answers."""
    thread = "1710000000.000100"
    async with running_bot(dk_server) as bot:
        await save(bot)
        await save(bot, text="Another thread's Go answer.", also=(), question="and in Go?")
        await bot.mention("how do I list my buckets?", ts=thread)
        await bot.finished(1)
        await bot.channel_message(QUESTION, thread_ts=thread, parent_user_id=ASKER)
        await bot.finished(2)
        await bot.channel_message("and in Go?", thread_ts=thread, parent_user_id=ASKER)
        await bot.finished(3)
        _first, team, follow_up = [c.args for c in bot.fake.calls_to("chat.postMessage")]

    assert ["answer_query", "answer_query"] == tools_called(dk_server)
    assert (thread, thread) == (team["thread_ts"], follow_up["thread_ts"])
    assert HEAD in blocks_text(team)
    assert "Team answer" not in blocks_text(follow_up)
    assert [] == bot.fake.invalid_payloads
