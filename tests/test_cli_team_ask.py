"""`gdocs-bot ask` and team answers, as the installed console script against the MCP fake and
a real SQLite state file: a workspace team answer is printed, marked as the team's, with no
answer_query call; `--no-team` asks Google's docs; `--json` carries `team`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bot.serving.assembly import open_state
from bot.settings import Settings
from bot.team import TeamAnswers, Visibility
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.team_support import SAVED_AT, team_answer
from tests.test_cli import gdocs

QUESTION = "How do I create a bucket?"
TEXT = "We use **Terraform**, not the console."


def _env(server: FakeDeveloperKnowledge, state: str) -> dict[str, str]:
    key = {"GOOGLE_API_KEY": "test-key", "DEVELOPER_KNOWLEDGE_MCP_URL": server.url}
    return key | {"STATE_URL": state}


def save(tmp_path: Path, visibility: Visibility) -> str:
    """A team answer saved in #infra into the SQLite file `ask` reads; its STATE_URL."""
    state = f"sqlite:///{tmp_path / 'state.db'}"
    answer = team_answer(QUESTION, TEXT, visibility=visibility)

    async def keep() -> None:
        async with open_state(Settings(state_url=state)) as store:
            await TeamAnswers(store, 180, lambda: SAVED_AT).save(answer)

    asyncio.run(keep())
    return state


def test_ask_prints_a_workspace_team_answer_without_asking_google(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    state = save(tmp_path, "workspace")
    result = gdocs(
        tmp_path, "ask", "how", "do", "I", "create", "a", "bucket", **_env(dk_server, state)
    )

    assert 0 == result.returncode, result.stderr
    assert f"Team answer · saved by U0ANA on 3 Dec 2026 · from #infra\n\n{TEXT}\n" == result.stdout
    assert [] == dk_server.tool_calls("answer_query")


def test_ask_json_carries_the_team_mark(dk_server: FakeDeveloperKnowledge, tmp_path: Path) -> None:
    state = save(tmp_path, "workspace")
    result = gdocs(tmp_path, "ask", QUESTION, "--json", **_env(dk_server, state))

    assert 0 == result.returncode, result.stderr
    data = json.loads(result.stdout)
    assert ("team_answer", TEXT) == (data["tool"], data["text"])
    assert ("U0ANA", "infra") == (data["team"]["author"], data["team"]["channel_name"])
    assert [] == dk_server.tool_calls("answer_query")


def test_ask_no_team_asks_googles_docs(dk_server: FakeDeveloperKnowledge, tmp_path: Path) -> None:
    state = save(tmp_path, "workspace")
    result = gdocs(tmp_path, "ask", "--no-team", QUESTION, **_env(dk_server, state))

    assert 0 == result.returncode, result.stderr
    assert "Team answer" not in result.stdout
    assert 1 == len(dk_server.tool_calls("answer_query"))


def test_ask_does_not_print_an_answer_saved_for_one_channel(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """Outside Slack no channel is asking: only workspace answers are shown."""
    state = save(tmp_path, "channel")
    result = gdocs(tmp_path, "ask", QUESTION, **_env(dk_server, state))

    assert 0 == result.returncode, result.stderr
    assert "Team answer" not in result.stdout
    assert 1 == len(dk_server.tool_calls("answer_query"))
