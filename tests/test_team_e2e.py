"""Issue 42's "done when", end to end over signed requests: a team answer saved through the
`save_team_answer` shortcut's form is given in another channel when its visibility allows
(no answer_query call) and not where it does not; it survives a restart on the SQLite file
and is shared by two replicas on one Redis."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.redis_server import RedisServer
from tests.fakes.slack_api import FakeSlack
from tests.slack_harness import ASKER, SlackBot, running_bot
from tests.test_slack_team_save import AS_MARKDOWN, QUESTION, form_values, submit, use_shortcut

#: the asking another member would type, in another form than the one saved
ASKED_ELSEWHERE = "How do I create a bucket"
TEAM_HEAD = "Team answer · saved by"


async def save_through_the_form(bot: SlackBot, where: str) -> None:
    view = await use_shortcut(bot, channel="C1")
    sent = await submit(bot, view, form_values(QUESTION, AS_MARKDOWN, None, where), ASKER)
    assert (200, "") == (sent.status, sent.body)


async def ask_in(bot: SlackBot, channel: str) -> dict[str, Any]:
    done = len(bot.metrics.finished)
    await bot.command(ASKED_ELSEWHERE, channel=channel)
    await bot.finished(done + 1)
    return dict(bot.fake.calls_to("chat.postMessage")[-1].args)


def answer_query_calls(dk: FakeDeveloperKnowledge) -> int:
    return len(dk.tool_calls("answer_query"))


@pytest.mark.parametrize("store", ["sqlite, restarted", "redis, the other replica"])
async def test_a_workspace_answer_from_the_form_is_given_after_a_restart_or_by_a_replica(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path, request: pytest.FixtureRequest, store: str
) -> None:
    """Saved in C1 for the whole workspace by one bot; asked in C2 of the bot that restarted
    on the same SQLite file, or of the other replica on the same Redis: the team's answer,
    and Google's docs are never asked."""
    if store.startswith("redis"):
        url = request.getfixturevalue("redis_server").url
    else:
        url = f"sqlite:///{tmp_path}/state.db"
    fake = FakeSlack().start()
    try:
        async with running_bot(dk_server, fake=fake, state_url=url) as first:
            await save_through_the_form(first, "workspace")
        async with running_bot(dk_server, fake=fake, state_url=url) as second:
            posted = await ask_in(second, "C2")
    finally:
        fake.stop()

    assert ("C2", 1) == (posted["channel"], str(posted["blocks"]).count(TEAM_HEAD))
    assert "Terraform" in str(posted["blocks"])
    assert 0 == answer_query_calls(dk_server)


async def test_a_channel_answer_saved_in_the_form_is_not_given_in_another_channel(
    dk_server: FakeDeveloperKnowledge, redis_server: RedisServer
) -> None:
    """Saved for C1 only, on one replica: the other replica asked in C2 asks Google's docs;
    asked in C1, it gives the team's answer without asking them again."""
    fake = FakeSlack().start()
    try:
        async with running_bot(dk_server, fake=fake, state_url=redis_server.url) as first:
            await save_through_the_form(first, "channel")
        async with running_bot(dk_server, fake=fake, state_url=redis_server.url) as second:
            elsewhere = await ask_in(second, "C2")
            calls_then = answer_query_calls(dk_server)
            here = await ask_in(second, "C1")
    finally:
        fake.stop()

    assert TEAM_HEAD not in str(elsewhere["blocks"])
    assert 1 == calls_then
    assert 1 == str(here["blocks"]).count(TEAM_HEAD)
    assert 1 == answer_query_calls(dk_server)
