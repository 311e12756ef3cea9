"""Team answers while the shared store (a real redis-server, stopped) is down, over signed
requests to the real Bolt app: the bot then runs on per-process state, which holds no team
answers, so every place that manages them says it cannot reach them instead of "none saved"
or "gone already"; a question is still answered, by Google's docs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from bot.render import ACTION_TEAM_APPROVE, ACTION_TEAM_EDIT
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.redis_server import RedisServer
from tests.slack_harness import ASKER, SlackBot, running_bot
from tests.test_slack_team_drafts import LISTED, click, due_answer, home_of
from tests.test_slack_team_save import MEMBER, QUESTION, buttons, press, saved_answer, team_list

pytestmark = pytest.mark.timeout(60)

UNREACHABLE = "I can't reach the team answers right now"
#: a 👎 suggestion from C1 (a public channel: every team admin sees it)
DRAFT: dict[str, Any] = {"id": "d1", "status": "draft", "channel": "C1"}


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    """A redis-server of this test's own, so stopping it (the outage) touches no other test."""
    server = RedisServer().start()
    yield server
    server.kill()


def said_to(bot: SlackBot, user: str) -> list[str]:
    """What the bot told `user` alone (ephemeral or in their DM)."""
    calls = [*bot.fake.calls_to("chat.postEphemeral"), *bot.fake.calls_to("chat.postMessage")]
    return [c.args["text"] for c in calls if user in (c.args.get("user"), c.args["channel"])]


async def test_gdocs_team_with_the_store_down_says_it_cannot_read_them_not_none_saved(
    dk_server: FakeDeveloperKnowledge, redis: RedisServer
) -> None:
    async with running_bot(dk_server, state_url=redis.url) as bot:
        await bot.deps.team.save(saved_answer())
        redis.stop()
        shown, _ = await team_list(bot, ASKER)

        assert shown["text"].startswith(UNREACHABLE)
        assert "No team answers" not in json.dumps(shown)


async def test_remove_and_edit_with_the_store_down_say_it_cannot_read_it_not_gone(
    dk_server: FakeDeveloperKnowledge, redis: RedisServer
) -> None:
    """The list shown before the outage: its Remove and Edit each say so to the presser,
    and the list stays."""
    async with running_bot(dk_server, state_url=redis.url) as bot:
        await bot.deps.team.save(saved_answer())
        own, _ = await team_list(bot, ASKER)
        redis.stop()
        keys = [await press(bot, pressed, ASKER) for pressed in buttons(own).values()]
        said = said_to(bot, ASKER)

        assert [] == [r for key in keys for r in bot.fake.responses_to(key)]
        assert 2 == len(said)
        assert all(s.startswith(UNREACHABLE) for s in said), said
        assert [] == bot.fake.calls_to("views.open")


async def test_an_admins_home_with_the_store_down_says_it_cannot_read_them(
    dk_server: FakeDeveloperKnowledge, redis: RedisServer
) -> None:
    """Not an empty Home as if no suggestion waited: one line, to a team admin; a member's
    Home says nothing of team answers; with the store fine the line is not there."""
    async with running_bot(dk_server, state_url=redis.url, team_answers_admins=LISTED) as bot:
        await bot.deps.team.save(due_answer().model_copy(update=DRAFT))
        before = json.dumps(await home_of(bot, LISTED))
        redis.stop()
        admin, member = [json.dumps(await home_of(bot, user)) for user in (LISTED, MEMBER)]

        assert "Suggested team answers" in before
        assert UNREACHABLE not in before
        assert UNREACHABLE in admin
        assert "Suggested team answers" not in admin
        assert UNREACHABLE not in member


async def test_approve_and_edit_on_home_with_the_store_down_say_so_not_gone(
    dk_server: FakeDeveloperKnowledge, redis: RedisServer
) -> None:
    """A team admin's Home shown before the outage: Approve and Edit on its suggestion."""
    async with running_bot(dk_server, state_url=redis.url, team_answers_admins=LISTED) as bot:
        await bot.deps.team.save(due_answer().model_copy(update=DRAFT))
        view: dict[str, Any] = await home_of(bot, LISTED)
        redis.stop()
        for action_id in (ACTION_TEAM_APPROVE, ACTION_TEAM_EDIT):
            await click(bot, view, action_id, LISTED)
        said = said_to(bot, LISTED)

        assert 2 == len(said)
        assert all(s.startswith(UNREACHABLE) for s in said), said
        assert [] == bot.fake.calls_to("views.open")


async def test_a_question_with_the_store_down_is_answered_by_google(
    dk_server: FakeDeveloperKnowledge, redis: RedisServer
) -> None:
    """Its team answer is out of reach: Google's docs answer (answer_query called), and
    nothing says it could not read the team answers."""
    async with running_bot(dk_server, state_url=redis.url) as bot:
        await bot.deps.team.save(saved_answer(visibility="workspace"))
        redis.stop()
        await bot.command(QUESTION)
        await bot.finished(1)
        posted = json.dumps([c.args for c in bot.fake.calls_to("chat.postMessage")])

        assert 1 == len(dk_server.tool_calls("answer_query"))
        assert "Team answer" not in posted
        assert UNREACHABLE not in posted
