"""The week's usage in Slack, for workspace admins only: `/gdocs report` answers an admin
privately with the week's figures and top gaps and refuses everyone else; the App Home
shows admins a "This week" section and nobody else. Over signed HTTP, fake Slack and MCP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bot.render import render_home
from bot.slack.memory import UserProfile
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.slack_harness import SlackBot, running_bot
from tests.test_slack_home import published_home, texts

ADMIN = "UADMIN001"
PERSON = "UPERSON01"


def _said(bot: SlackBot, key: str) -> str:
    return json.dumps(bot.fake.responses_to(key), ensure_ascii=False)


async def _a_small_week(bot: SlackBot) -> None:
    """Two generated answers for one topic, one search without a hit (a gap)."""
    await bot.command("how do I create a bucket?", user=PERSON)
    await bot.finished(1)
    await bot.command("How do I create buckets", user=PERSON)
    await bot.finished(2)
    await bot.command("search qqqzzzx", user=PERSON)
    await bot.finished(3)


async def test_gdocs_report_gives_an_admin_the_week_privately(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """An admin's `/gdocs report`: an ephemeral reply (no channel message) with the week's
    questions, the share that got a generated answer and the top gap; no upstream call."""
    async with running_bot(dk_server) as bot:
        bot.fake.admins.add(ADMIN)
        await _a_small_week(bot)
        calls_before = len(dk_server.tool_calls("answer_query"))
        posts_before = len(bot.fake.calls_to("chat.postMessage"))
        sent = await bot.command("report", user=ADMIN)
        await bot.finished(4)
        said = _said(bot, sent.key or "")

        assert "*3* questions" in said
        assert "*67 %* got a generated answer" in said
        assert "1. qqqzzzx (1×)" in said
        assert PERSON not in said
        assert posts_before == len(bot.fake.calls_to("chat.postMessage"))
        assert calls_before == len(dk_server.tool_calls("answer_query"))
        assert [] == bot.fake.invalid_payloads


async def test_gdocs_report_refuses_someone_who_is_not_an_admin(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A member's `/gdocs report`: a clear refusal, only to them, and no figures."""
    async with running_bot(dk_server) as bot:
        await _a_small_week(bot)
        sent = await bot.command("report", user=PERSON)
        await bot.finished(4)
        said = _said(bot, sent.key or "")

        assert "for workspace admins and owners only" in said
        assert "questions" not in said
        assert 3 == len(bot.fake.calls_to("chat.postMessage"))  # the three answers only


async def test_the_home_tab_shows_admins_this_week_and_nobody_else(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """An admin's Home has "This week" with the figures and the gap; a member's has none."""
    async with running_bot(dk_server) as bot:
        bot.fake.admins.add(ADMIN)
        await _a_small_week(bot)
        admin_home = await published_home(bot, user=ADMIN)
        person_home = await published_home(bot, user=PERSON, count=2)

        assert "This week" in texts(admin_home.args["view"])
        assert "*3* questions" in texts(admin_home.args["view"])
        assert "qqqzzzx" in texts(admin_home.args["view"])
        assert "This week" not in texts(person_home.args["view"])
        assert [] == bot.fake.invalid_payloads


async def test_a_profile_kept_before_admins_were_asked_is_asked_again(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A cached profile without `is_admin` (written by an older bot) is not a "no": the
    bot asks users.info, and the admin gets the report."""
    async with running_bot(dk_server) as bot:
        bot.fake.admins.add(ADMIN)
        older = UserProfile(locale="en-US", tz="Europe/Rome")
        await bot.deps.profiles._store.set(  # what an older version kept
            f"profile:{ADMIN}", older, _profile_codec(), 3600
        )
        sent = await bot.command("report", user=ADMIN)
        await bot.finished(1)
        again = await bot.command("report", user=ADMIN)
        await bot.finished(2)

        assert "*0* questions" in _said(bot, sent.key or "")
        assert "*0* questions" in _said(bot, again.key or "")
        assert 1 == len(bot.fake.calls_to("users.info"))  # the answer is kept this time


def _profile_codec() -> Any:
    from bot.slack.memory import PROFILE_CODEC

    return PROFILE_CODEC


def test_a_home_without_a_week_has_no_this_week_section() -> None:
    """render_home with no week (not an admin) shows no "This week" header."""
    from datetime import UTC, datetime

    from bot.render import HomeInput

    now = datetime(2026, 12, 1, 12, tzinfo=UTC)
    view = render_home(HomeInput(answers_left=5, per_day=50, resets_at=now, now=now))

    assert "This week" not in json.dumps(view)


async def test_on_sqlite_the_summary_reads_the_shared_file(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """With the default kind of store (behind the bot's resilient wrapper) the admin's
    summary has the week's questions from the file."""
    async with running_bot(
        dk_server, state_url=f"sqlite:///{tmp_path}/state.db", state_timeout_seconds=5
    ) as bot:
        bot.fake.admins.add(ADMIN)
        await _a_small_week(bot)
        sent = await bot.command("report", user=ADMIN)
        await bot.finished(4)

        assert "*3* questions" in _said(bot, sent.key or "")


async def test_a_store_that_does_not_answer_gives_no_figures_rather_than_zeros(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Redis down (the bot runs on per-process state): an admin's `/gdocs report` says the
    figures cannot be read now, never "0 questions"."""
    async with running_bot(dk_server, state_url="redis://127.0.0.1:9/0") as bot:
        bot.fake.admins.add(ADMIN)
        await bot.command("search firestore", user=PERSON)
        await bot.finished(1)
        sent = await bot.command("report", user=ADMIN)
        await bot.finished(2)
        said = _said(bot, sent.key or "")

        assert "can't read the usage figures right now" in said
        assert "questions" not in said
