"""Nothing lost: a question acknowledged by a bot that is then killed (SIGKILL, no goodbye)
is answered by the next process on the same SQLite file, or by another replica on the same
Redis — once, with a short note — and work that can no longer be finished is dropped and
counted. Real `gdocs-bot serve` subprocesses, signed Slack requests, loopback fakes."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import httpx
import pytest

from bot.slack.work.worklog import RECORD_CODEC, WorkRecord
from bot.store import open_store
from tests.fakes.bot_process import BotProcess, signed_mention, signed_slash_command
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, Fault
from tests.fakes.redis_server import RedisServer
from tests.fakes.slack_api import FakeSlack

SIGNING_SECRET = "c0ffee5ecret0123456789abcdef0123"
RESTART_NOTE = "Sorry for the delay — I had to restart."
QUESTION = "how do I create a Cloud Storage bucket?"

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def env(slack: FakeSlack, dk_server: FakeDeveloperKnowledge, tmp_path: Path) -> dict[str, str]:
    return {
        "SLACK_BOT_TOKEN": "xoxb-4242-4343-DurableToken",
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": slack.url,
        "GOOGLE_API_KEY": "test-key",
        "DEVELOPER_KNOWLEDGE_MCP_URL": dk_server.url,
        "HOST": "127.0.0.1",
        "PORT": "0",
        "STATE_URL": f"sqlite:///{tmp_path / 'state.db'}",
        "WORK_LEASE_SECONDS": "1",
        "WORK_RECOVERY_SECONDS": "0.3",
        # a dead replica's single-flight lock holds the question back this long at most
        "MCP_TIMEOUT_SECONDS": "4",
        # one finished message (the streamed answer's restart: test_a_stream_cut_by_a_kill_…)
        "STREAM_ANSWERS": "false",
    }


def _hang(server: FakeDeveloperKnowledge) -> Fault:
    """The next answer_query never answers (until the client goes away)."""
    fault = Fault(
        status=200,
        content_type="text/event-stream",
        tool="answer_query",
        chunks=[b": keep-alive\n\n"],
        chunk_delay=0.2,
        endless=True,
    )
    server.faults.append(fault)
    return fault


def _command(bot: BotProcess, slack: FakeSlack, text: str, key: str = "C1") -> None:
    body, headers = signed_slash_command(SIGNING_SECRET, text, slack.response_url(key))
    response = httpx.post(bot.url("/slack/events"), content=body, headers=headers, timeout=5)
    assert 200 == response.status_code
    slack.acknowledged(key, response.text)


def _answers(slack: FakeSlack) -> list[str]:
    """Every answer to QUESTION the bot showed: posted, or sent through a response_url."""
    calls = slack.calls_to("chat.postMessage")
    posted = [c.args.get("text", "") for c in calls if c.result.get("ok", True)]
    responded = [str(body.get("text", "")) for _, body in slack.responses]
    shown = [text for text in posted + responded if "create a Cloud Storage bucket" in text]
    return [text for text in shown if "Looking that up" not in text]


def _unfinished(state_url: str) -> list[str]:
    """The ids of work still recorded in the bot's store (none: nothing more will be sent)."""

    async def scan() -> list[str]:
        store = await open_store(state_url, prefix="gdocs:", max_entries=1000)
        try:
            return [record.id for _, record in await store.scan("work:", RECORD_CODEC, 100)]
        finally:
            await store.aclose()

    return asyncio.run(scan())


def _wait_until_finished(bot: BotProcess, state_url: str) -> None:
    bot.wait_until(lambda: not _unfinished(state_url), "no unfinished work left", timeout=20)


def test_a_question_acknowledged_before_a_kill_is_answered_once_after_the_restart(
    start_bot, env, slack, dk_server
) -> None:
    """SQLite: the bot is SIGKILLed while Google is still answering; started again on the
    same file it answers the asker, once, saying sorry for the delay."""
    _hang(dk_server)
    first = start_bot(env)
    first.wait_ready()
    _command(first, slack, QUESTION)
    first.wait_until(lambda: bool(dk_server.tool_calls("answer_query")), "the upstream call")
    first.kill()  # SIGKILL: no graceful shutdown, the lease stays until it expires
    assert [] == _answers(slack)

    second = start_bot(env)
    second.wait_until(lambda: bool(_answers(slack)), "the answer after the restart", timeout=20)
    _wait_until_finished(second, env["STATE_URL"])
    (answer,) = _answers(slack)
    assert answer.startswith(RESTART_NOTE)
    assert "Traceback" not in second.output


def test_another_replica_finishes_the_work_of_one_that_died(
    start_bot, env, slack, dk_server, redis_server: RedisServer
) -> None:
    """Redis: replica A is SIGKILLed mid-answer; replica B takes the question over once A's
    lease has expired and answers it — once."""
    shared = {**env, "STATE_URL": redis_server.url}
    _hang(dk_server)
    a = start_bot(shared)
    b = start_bot(shared)
    a.wait_ready()
    b.wait_ready()
    body, headers = signed_mention(SIGNING_SECRET, QUESTION, channel="C7")
    assert 200 == httpx.post(a.url("/slack/events"), content=body, headers=headers).status_code
    a.wait_until(lambda: bool(dk_server.tool_calls("answer_query")), "the upstream call")
    a.kill()

    b.wait_until(lambda: bool(_answers(slack)), "replica B's answer", timeout=20)
    _wait_until_finished(b, redis_server.url)
    (answer,) = _answers(slack)
    assert answer.startswith(RESTART_NOTE)
    (post,) = [c for c in slack.calls_to("chat.postMessage") if QUESTION[:20] in str(c.args)]
    assert "C7" == post.args["channel"]
    assert post.args.get("thread_ts")  # in the mention's thread, as the first replica would


@pytest.mark.parametrize("expired", [False, True])
def test_a_stream_cut_by_a_kill_is_finished_in_the_same_message_after_the_restart(
    start_bot, env, slack, dk_server, expired: bool
) -> None:
    """A mention streaming its answer, the bot SIGKILLed while Google answers: the stream's
    ts was kept with the work, so the next process finishes THAT message with the note —
    stopping the stream if it is still open, else updating it — and posts no second one."""
    streaming = {**env, "STREAM_ANSWERS": "true"}
    _hang(dk_server)
    first = start_bot(streaming)
    first.wait_ready()
    body, headers = signed_mention(SIGNING_SECRET, QUESTION, channel="C5")
    assert 200 == httpx.post(first.url("/slack/events"), content=body, headers=headers).status_code
    first.wait_until(lambda: bool(dk_server.tool_calls("answer_query")), "the upstream call")
    (stream,) = slack.streams.all()
    first.wait_until(lambda: _kept_reply_ts(env["STATE_URL"]) == [stream.ts], "the ts kept")
    first.kill()
    if expired:
        stream.open = False  # Slack's few-minute lifetime ran out meanwhile

    second = start_bot(streaming)
    _wait_until_finished(second, env["STATE_URL"])
    assert [stream] == slack.streams.all()  # no second stream
    assert [] == slack.calls_to("chat.postMessage")
    if expired:
        (update,) = slack.calls_to("chat.update")
        assert stream.ts == update.args["ts"]
        assert update.args["text"].startswith(RESTART_NOTE)
        assert "context_actions" in str(update.args["blocks"])
    else:
        assert stream.final_blocks is not None
        assert RESTART_NOTE == stream.final_blocks[0]["elements"][0]["text"]
        assert "context_actions" == stream.final_blocks[-1]["type"]
        assert QUESTION in stream.text()
        assert [] == slack.calls_to("chat.update")
    assert [] == slack.invalid_payloads


def _kept_reply_ts(state_url: str) -> list[str | None]:
    """The reply ts of each unfinished work record in the bot's store."""

    async def scan() -> list[str | None]:
        store = await open_store(state_url, prefix="gdocs:", max_entries=1000)
        try:
            return [record.reply_ts for _, record in await store.scan("work:", RECORD_CODEC, 100)]
        finally:
            await store.aclose()

    return asyncio.run(scan())


def _seed(state_url: str, record: WorkRecord) -> None:
    """Leave unfinished work in the store, as a process that died would have."""

    async def write() -> None:
        store = await open_store(state_url, prefix="gdocs:", max_entries=1000)
        try:
            await store.add(f"work:{record.id}", record, RECORD_CODEC, 7200)
        finally:
            await store.aclose()

    asyncio.run(write())


def _old_command(slack: FakeSlack, *, age: float, channel: str) -> WorkRecord:
    payload = {
        "command": "/gdocs",
        "text": QUESTION,
        "channel_id": channel,
        "user_id": "UASKER1",
        "response_url": slack.response_url("OLD"),
    }
    return WorkRecord(
        id=f"trigger:old-{channel}",
        kind="command",
        payload=payload,
        accepted_at=time.time() - age,
    )


def test_past_its_response_url_the_answer_is_posted_in_the_channel(start_bot, env, slack) -> None:
    """Work resumed more than 30 minutes after Slack's request cannot use its response_url:
    the answer goes to the channel instead, with the note."""
    _seed(env["STATE_URL"], _old_command(slack, age=31 * 60, channel="C9"))
    bot = start_bot(env)
    bot.wait_until(lambda: bool(_answers(slack)), "the late answer", timeout=20)
    _wait_until_finished(bot, env["STATE_URL"])
    (post,) = slack.calls_to("chat.postMessage")
    assert "C9" == post.args["channel"]
    assert post.args["text"].startswith(RESTART_NOTE)
    assert [] == slack.responses_to("OLD")


def test_work_that_cannot_be_delivered_or_is_too_old_is_dropped_and_counted(
    start_bot, env, slack
) -> None:
    """An hour-old question is dropped, not answered; one whose response_url expired in a
    channel the bot may not post in is dropped too; /metrics counts both by reason."""
    _seed(env["STATE_URL"], _old_command(slack, age=2 * 3600, channel="C8"))
    _seed(env["STATE_URL"], _old_command(slack, age=40 * 60, channel="C6"))
    slack.fail("chat.postMessage", "not_in_channel", times=5)
    bot = start_bot(env)
    _wait_until_finished(bot, env["STATE_URL"])
    metrics = bot.get("/metrics").text
    assert 'gdocs_work_dropped_total{reason="too_old"} 1' in metrics
    assert 'gdocs_work_dropped_total{reason="cannot_post"} 1' in metrics
    assert [] == _answers(slack)
    assert [] == slack.responses_to("OLD")


def test_work_a_graceful_stop_could_not_finish_is_answered_by_the_next_process(
    start_bot, env, slack, dk_server
) -> None:
    """SIGTERM with Google hanging: the grace period ends, the work stays in the store with
    its lease released, and the next process answers it at once (no lease to wait out)."""
    _hang(dk_server)
    slow = {**env, "SHUTDOWN_GRACE_SECONDS": "1", "WORK_LEASE_SECONDS": "60"}
    first = start_bot(slow)
    first.wait_ready()
    _command(first, slack, QUESTION)
    first.wait_until(lambda: bool(dk_server.tool_calls("answer_query")), "the upstream call")
    first.signal(signal.SIGTERM)
    assert 0 == first.wait(timeout=15)
    assert "left 1 unfinished answer(s) for the next process" in first.output

    second = start_bot(slow)  # a 60 s lease: only a released one is taken this soon
    second.wait_until(lambda: bool(_answers(slack)), "the answer after the restart", timeout=15)
    _wait_until_finished(second, env["STATE_URL"])
    (answer,) = _answers(slack)
    assert answer.startswith(RESTART_NOTE)
