"""`gdocs-bot feedback export`, the installed console script, reading the SQLite store that a
real `gdocs-bot serve` process wrote while people voted on its answers over signed HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from bot.render import FEEDBACK_MODAL_CALLBACK
from tests.fakes import slack_event_payloads as payloads
from tests.fakes.bot_process import (
    BotProcess,
    signed_button_click,
    signed_slash_command,
    slack_signature,
)
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.slack_api import FakeSlack, SlackCall
from tests.test_cli import gdocs

BOT_TOKEN = "xoxb-4242-4343-FeedbackExportToken"
SIGNING_SECRET = "f33dbac5ecret0123456789abcdef0123"
API_KEY = "test-key"
STATE_URL = "sqlite:///state.db"
BUCKETS_URL = "https://docs.cloud.google.com/storage/docs/creating-buckets"

pytestmark = pytest.mark.timeout(90)


@dataclass
class Voted:
    """A bot process that answered two questions and took three votes (one with a note)."""

    cwd: Path
    answer_ts: str
    search_ts: str


def _post(bot: BotProcess, request: tuple[bytes, dict[str, str]]) -> None:
    body, headers = request
    response = httpx.post(bot.url("/slack/events"), content=body, headers=headers, timeout=5)
    assert 200 == response.status_code, response.text


def _ask(bot: BotProcess, slack: FakeSlack, text: str, count: int) -> SlackCall:
    _post(bot, signed_slash_command(SIGNING_SECRET, text, slack.response_url(f"c{count}")))
    return slack.wait_for("chat.postMessage", count, timeout=15)[count - 1]


def _vote(bot: BotProcess, slack: FakeSlack, answer: SlackCall, user: str, up: bool) -> None:
    [element] = answer.args["blocks"][-1]["elements"]
    value = element["positive_button" if up else "negative_button"]["value"]
    action = payloads.feedback_action(value, text="👍" if up else "👎")
    click = signed_button_click(
        SIGNING_SECRET,
        action,
        slack.response_url(f"v-{user}"),
        user=user,
        message_ts=answer.result["ts"],
    )
    _post(bot, click)


def _submit_comment(bot: BotProcess, value: str, user: str, comment: str) -> None:
    payload = payloads.view_submission(
        user=user,
        callback_id=FEEDBACK_MODAL_CALLBACK,
        private_metadata=value,
        values={"comment": {"comment": comment}},
        trigger_id=f"trigger-v-{user}",
    )
    body = urlencode({"payload": json.dumps(payload)}).encode()
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        **slack_signature(SIGNING_SECRET, body),
    }
    _post(bot, (body, headers))


@pytest.fixture
def voted(dk_server: FakeDeveloperKnowledge, tmp_path: Path) -> Iterator[Voted]:
    """`serve` on a SQLite file in tmp_path: an answer (👍 by U1, 👍 then 👎 by U3) and a
    search reply (👎 by U2 with a note)."""
    slack = FakeSlack().start()
    env = {
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": slack.url,
        "GOOGLE_API_KEY": API_KEY,
        "DEVELOPER_KNOWLEDGE_MCP_URL": dk_server.url,
        "STATE_URL": STATE_URL,
        "HOST": "127.0.0.1",
        "PORT": "0",
    }
    bot = BotProcess(env, tmp_path, "serve")
    try:
        bot.wait_listening()
        answer = _ask(bot, slack, "how do I create a bucket?", 1)
        search = _ask(bot, slack, "search firestore pricing", 2)
        _vote(bot, slack, answer, "U1", up=True)
        _vote(bot, slack, answer, "U3", up=True)
        _vote(bot, slack, search, "U2", up=False)
        slack.wait_for("chat.postEphemeral", 3, timeout=15)  # each vote stored, then thanked
        _vote(bot, slack, answer, "U3", up=False)  # changes their mind: replaces the 👍
        [down] = search.args["blocks"][-1]["elements"]
        _submit_comment(bot, down["negative_button"]["value"], "U2", "Prices are from 2024")
        slack.wait_for("chat.postEphemeral", 5, timeout=15)
        yield Voted(tmp_path, answer.result["ts"], search.result["ts"])
    finally:
        bot.kill()
        slack.stop()


def _export(cwd: Path, *args: str) -> list[dict[str, Any]]:
    result = gdocs(cwd, "feedback", "export", *args, STATE_URL=STATE_URL)
    assert 0 == result.returncode, result.stderr
    assert "" == result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_export_prints_one_json_object_per_vote_with_its_answer(voted: Voted) -> None:
    """Three votes (a changed vote counts once): time in UTC, vote, question, kind, tool,
    answer, reference URLs, comment, channel and ts; never who voted, never a token."""
    result = gdocs(voted.cwd, "feedback", "export", STATE_URL=STATE_URL)
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    by_vote = sorted((row["kind"], row["vote"], row["comment"]) for row in rows)

    assert 0 == result.returncode, result.stderr
    assert [
        ("answer", "down", ""),
        ("answer", "up", ""),
        ("search", "down", "Prices are from 2024"),
    ] == by_vote
    answer = next(row for row in rows if row["kind"] == "answer")
    assert {
        "question": "how do I create a bucket?",
        "tool": "answer_query",
        "channel": "C1",
        "ts": voted.answer_ts,
    }.items() <= answer.items()
    assert answer["answer"].startswith("Here is how")
    assert BUCKETS_URL in answer["references"]
    for row in rows:
        moment = datetime.fromisoformat(row["time"])
        assert timedelta(0) == moment.utcoffset()
        assert datetime.now(UTC) - moment < timedelta(minutes=5)
        assert {"time", "vote", "question", "kind", "answer", "references", "comment"} <= set(row)
        assert "voter" not in row
    assert BOT_TOKEN not in result.stdout
    assert SIGNING_SECRET not in result.stdout
    assert [row["time"] for row in rows] == sorted(row["time"] for row in rows)


def test_vote_and_since_filter_the_export(voted: Voted) -> None:
    """--vote keeps one direction; --since keeps votes from that UTC day on."""
    today = datetime.now(UTC).date()
    downs = _export(voted.cwd, "--vote", "down")
    ups = _export(voted.cwd, "--vote", "up")

    assert ["down", "down"] == [row["vote"] for row in downs]
    assert [("answer", "up")] == [(row["kind"], row["vote"]) for row in ups]
    assert 3 == len(_export(voted.cwd, "--since", today.isoformat()))
    assert [] == _export(voted.cwd, "--since", (today + timedelta(days=1)).isoformat())
    assert 1 == len(_export(voted.cwd, "--since", today.isoformat(), "--vote", "up"))


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--since", "2026-02-30"), "--since takes a date as YYYY-MM-DD"),
        (("--since", "yesterday"), "--since takes a date as YYYY-MM-DD"),
        (("--since", "20261103"), "--since takes a date as YYYY-MM-DD"),
        (("--vote", "sideways"), "--vote takes up or down"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(
    tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    """A bad date or vote: exit 2, one line on stderr naming the option, nothing on stdout,
    and no store opened (no file created)."""
    result = gdocs(tmp_path, "feedback", "export", *args, STATE_URL=STATE_URL)
    lines = result.stderr.strip().splitlines()

    assert 2 == result.returncode
    assert 1 == len(lines), result.stderr
    assert said in lines[0]
    assert "" == result.stdout
    assert not (tmp_path / "state.db").exists()


def test_a_store_that_does_not_answer_is_an_error_not_an_empty_export(tmp_path: Path) -> None:
    """Redis refusing connections: exit 1 and one line naming STATE_URL, no output."""
    result = gdocs(tmp_path, "feedback", "export", STATE_URL="redis://127.0.0.1:9/0")
    lines = result.stderr.strip().splitlines()

    assert 1 == result.returncode
    assert 1 == len(lines), result.stderr
    assert "STATE_URL" in lines[0]
    assert "" == result.stdout
