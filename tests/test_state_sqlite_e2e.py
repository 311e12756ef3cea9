"""The default state store, an SQLite file in the working directory, with real `gdocs-bot
serve` processes and the installed console script: a restart keeps the cache, the quota
ledger and its pause; the CLI reads the file while the bot writes it; a corrupt file stops
start-up with one line naming STATE_URL.

The restart happens once for the module (`restarted`): a first bot answers a question and
is refused answer_query for the day, stops (SIGTERM), and a second starts in the same
directory with the same (default) settings."""

from __future__ import annotations

import json
import signal
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import test_replicas
from tests.fakes.bot_process import run_to_exit
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.slack_api import FakeSlack
from tests.process_harness import ServedBot, env_for, metric_value
from tests.test_cli import gdocs

pytestmark = pytest.mark.timeout(120)

#: answered by the first bot, before the restart
CACHED = "how do I create a Cloud Storage bucket?"
#: refused answer_query for the day by the server, before the restart
SPENT = "how do I delete a Cloud Storage bucket?"
DB = "gdocs-state.db"


@dataclass
class Restarted:
    """The second bot, after the first one's life in the same directory."""

    bot: ServedBot
    cwd: Path
    env: dict[str, str]
    #: answer_query calls the fake saw before the restart (one answered, one refused)
    calls_before: int


#: the fake servers, started once for the module, as in test_replicas.py
dk, slack = test_replicas.dk, test_replicas.slack


@pytest.fixture(scope="module")
def restarted(
    dk: FakeDeveloperKnowledge, slack: FakeSlack, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Restarted]:
    cwd = tmp_path_factory.mktemp("sqlite-bot")
    env = env_for(slack, dk)  # no STATE_URL: the default, ./gdocs-state.db
    first = ServedBot.start(env, cwd)
    try:
        first.command(slack, CACHED)
        slack.wait_for("chat.postMessage", 1, timeout=20)
        dk.quota_exhausted = "http"  # "… requests per day"
        first.command(slack, SPENT)
        slack.wait_for("chat.postMessage", 2, timeout=20)
        first.signal(signal.SIGTERM)
        assert 0 == first.wait(timeout=20), first.output
    finally:
        first.kill()
        dk.quota_exhausted = None  # from now on answer_query would answer
    second = ServedBot.start(env, cwd)
    try:
        yield Restarted(second, cwd, env, len(dk.tool_calls("answer_query")))
    finally:
        second.kill()


def _post_for(slack: FakeSlack, question: str) -> str:
    for call in reversed(slack.calls_to("chat.postMessage")):
        shown = json.dumps([call.args.get("text"), call.args.get("blocks")], ensure_ascii=False)
        if question in shown:
            return shown
    raise AssertionError(f"no message answers {question!r}")


def _ask(restarted: Restarted, slack: FakeSlack, question: str) -> str:
    posts = len(slack.calls_to("chat.postMessage"))
    restarted.bot.command(slack, question, user="UAFTER1")
    slack.wait_for("chat.postMessage", posts + 1, timeout=20)
    return _post_for(slack, question)


def test_the_state_file_is_made_in_the_working_directory_for_its_owner_only(
    restarted: Restarted,
) -> None:
    """No setting: the state is ./gdocs-state.db (and, in WAL mode, its -wal and -shm files),
    readable and writable by the bot's user only."""
    files = sorted(restarted.cwd.glob(DB + "*"))
    assert {DB, DB + "-wal", DB + "-shm"} == {f.name for f in files}
    modes = {f.name: oct(stat.S_IMODE(f.stat().st_mode)) for f in files}
    assert {name: "0o600" for name in modes} == modes


def test_a_restart_keeps_the_cache(
    restarted: Restarted, slack: FakeSlack, dk: FakeDeveloperKnowledge
) -> None:
    """The question the first bot answered is answered again by the second from the file,
    with no answer_query call."""
    calls = len(dk.tool_calls("answer_query"))
    shown = _ask(restarted, slack, CACHED)
    assert "Here is how" in shown
    assert calls == len(dk.tool_calls("answer_query"))


def test_a_restart_keeps_the_days_pause(
    restarted: Restarted, slack: FakeSlack, dk: FakeDeveloperKnowledge
) -> None:
    """The day was spent before the restart: a new question after it is searched with the day
    note, without calling answer_query (which would now answer)."""
    calls = len(dk.tool_calls("answer_query"))
    shown = _ask(restarted, slack, "how do I lock a bucket's retention policy?")
    assert "generated answers are used up" in shown
    assert "Here is how" not in shown
    assert calls == len(dk.tool_calls("answer_query"))


def test_a_restart_keeps_the_ledger(restarted: Restarted, slack: FakeSlack) -> None:
    """`/gdocs quota` after the restart: the team's day is spent and the first asker's one
    answer is still counted against their own allowance."""
    status = restarted.bot.command(slack, "quota")  # the first bot's asker (ASKER)
    assert status.key is not None
    [shown] = slack.wait_for_responses(status.key, 1)
    text = json.dumps(shown, ensure_ascii=False)
    assert "*0* of 50 left for the team" in text
    assert "Yours today: *9* of 10 left" in text
    assert "Paused by Google: Today's generated answers are used up" in text


def test_the_cli_reads_the_file_while_the_bot_runs(
    restarted: Restarted, dk: FakeDeveloperKnowledge
) -> None:
    """`gdocs-bot ask` in the bot's directory, while it runs: the bot's cached answer, from
    the same file, and no upstream call."""
    calls = len(dk.calls)
    env = {k: restarted.env[k] for k in ("GOOGLE_API_KEY", "DEVELOPER_KNOWLEDGE_MCP_URL")}
    result = gdocs(restarted.cwd, "ask", CACHED, **env)
    assert 0 == result.returncode, result.stderr
    assert result.stdout.startswith(f"Here is how: **{CACHED}**")
    assert calls == len(dk.calls)


def test_readyz_and_metrics_report_the_sqlite_store(restarted: Restarted) -> None:
    """/readyz names the store (backend, URL) and says it answers; /metrics has it up."""
    status, report = restarted.bot.readyz()
    assert 200 == status
    assert {"backend": "sqlite", "url": f"sqlite:///{DB}", "ok": True, "detail": "ok"} == (
        report["store"]
    )
    assert 1 == metric_value(restarted.bot.metrics(), "gdocs_store_up", backend="sqlite")


# --- a file that is not a database ----------------------------------------------------------
def test_a_corrupt_state_file_stops_serve_and_the_cli_with_one_line_naming_state_url(
    tmp_path: Path, slack: FakeSlack, dk: FakeDeveloperKnowledge
) -> None:
    """Garbage at the STATE_URL path: `serve` and `ask` exit 2, each with one line that names
    STATE_URL, and the file is left as it was."""
    garbage = b"this is not an SQLite database\x00\xff" * 64
    (tmp_path / "state.db").write_bytes(garbage)
    env = env_for(slack, dk, STATE_URL="sqlite:///state.db")
    calls = len(dk.calls)
    served = run_to_exit(env, tmp_path, "serve")
    asked = gdocs(tmp_path, "ask", "how do I create a bucket?", **_cli_env(env))
    for result in (served, asked):
        output = result.stdout + result.stderr
        assert 2 == result.returncode, output
        [line] = result.stderr.strip().splitlines()
        assert "STATE_URL" in line, line
        assert "state.db is not a usable SQLite database" in line, line
        assert "Traceback" not in output
    assert garbage == (tmp_path / "state.db").read_bytes()
    assert calls == len(dk.calls)


def _cli_env(env: dict[str, str]) -> dict[str, str]:
    return {k: env[k] for k in ("GOOGLE_API_KEY", "DEVELOPER_KNOWLEDGE_MCP_URL", "STATE_URL")}
