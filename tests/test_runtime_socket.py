"""`gdocs-bot serve` in Socket Mode, as a real subprocess against a fake Socket Mode server:
it connects through SLACK_API_URL, acks envelopes over the socket, answers through the Web
API, reconnects when Slack drops or refreshes the connection, and still serves
/healthz, /readyz and /metrics on PORT."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.bot_process import BotProcess
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, FakePay
from tests.fakes.slack_api import FakeSlack
from tests.fakes.socket_mode import FakeSocketMode

APP_TOKEN = "xapp-1-A0001-4242-SocketModeToken"
BOT_TOKEN = "xoxb-4242-4343-SocketBotToken"

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def socket_server() -> Iterator[FakeSocketMode]:
    server = FakeSocketMode().start()
    yield server
    server.stop()


@pytest.fixture
def slack(socket_server: FakeSocketMode) -> Iterator[FakeSlack]:
    fake = FakeSlack()
    fake.socket_url = socket_server.url
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture
def bot(
    tmp_path: Path, slack: FakeSlack, dk_server: FakeDeveloperKnowledge, pay_server: FakePay
) -> Iterator[BotProcess]:
    """A bot in Socket Mode (SLACK_APP_TOKEN set, no signing secret), listening on PORT."""
    env = {
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_APP_TOKEN": APP_TOKEN,
        "SLACK_API_URL": slack.url,
        "GOOGLE_API_KEY": "test-key",
        "DEVELOPER_KNOWLEDGE_MCP_URL": dk_server.url,
        "PAY_MCP_URL": pay_server.url,
        "HOST": "127.0.0.1",
        "PORT": "0",
        "READINESS_PROBE_SECONDS": "1",
        "LOG_LEVEL": "DEBUG",
    }
    process = BotProcess(env, tmp_path, "serve")
    process.wait_listening()
    yield process
    process.kill()


def test_bot_connects_with_the_app_token_through_slack_api_url(
    bot: BotProcess, slack: FakeSlack, socket_server: FakeSocketMode
) -> None:
    """apps.connections.open goes to the fake Web API with the xapp token; the socket opens."""
    socket_server.wait_for_connections(1)
    (open_call,) = slack.wait_for("apps.connections.open", 1)
    assert f"Bearer {APP_TOKEN}" == open_call.headers["authorization"]
    assert 200 == bot.wait_ready().status_code
    report = bot.get("/readyz").json()
    assert "socket" == report["mode"]
    assert report["slack"]["ready"] is True


def test_slash_command_envelope_is_acked_over_the_socket_and_answered(
    bot: BotProcess, slack: FakeSlack, socket_server: FakeSocketMode
) -> None:
    """A slash_commands envelope gets its ack (envelope_id) and the answer is posted."""
    socket_server.wait_for_connections(1)
    bot.wait_ready()
    envelope_id = socket_server.send_slash_command(
        "how do I create a Cloud Storage bucket?", slack.response_url("C1")
    )

    ack = socket_server.wait_for_ack(envelope_id)
    (post,) = slack.wait_for("chat.postMessage", 1, timeout=15)
    assert envelope_id == ack["envelope_id"]
    # the progress note rides on the ack, shown to the asker only
    assert ("ephemeral", "Looking that up…") == (
        ack["payload"]["response_type"],
        ack["payload"]["text"],
    )
    assert "create a Cloud Storage bucket" in post.args["text"]
    assert [] == slack.invalid_payloads


def test_a_mention_over_the_socket_is_streamed_in_its_thread(
    bot: BotProcess, slack: FakeSlack, socket_server: FakeSocketMode
) -> None:
    """An app_mention envelope is acked over the socket and its answer streamed (the
    default): chat.startStream in the mention's thread with the asker, the steps, the
    answer, then chat.stopStream with the final blocks; no chat.postMessage."""
    socket_server.wait_for_connections(1)
    bot.wait_ready()
    mention = {
        "type": "app_mention",
        "user": "U1",
        "text": "<@UBOT> how do I create a Cloud Storage bucket?",
        "ts": "1710000000.000100",
        "event_ts": "1710000000.000100",
        "channel": "C1",
    }
    envelope_id = socket_server.send_event(mention)
    socket_server.wait_for_ack(envelope_id)
    (stop,) = slack.wait_for("chat.stopStream", 1, timeout=15)
    (stream,) = slack.streams.all()

    assert ("C1", "1710000000.000100", "U1") == (
        stream.channel,
        stream.thread_ts,
        stream.recipient_user_id,
    )
    assert ["in_progress", "complete"] == [status for _, _, status in stream.tasks()]
    assert "create a Cloud Storage bucket" in stream.text()
    assert "context_actions" == (stream.final_blocks or [{}])[-1].get("type")
    assert stream.ts == stop.args["ts"]
    assert [] == slack.calls_to("chat.postMessage")
    assert [] == slack.invalid_payloads


def test_bot_reconnects_after_slack_drops_the_connection_and_keeps_answering(
    bot: BotProcess, slack: FakeSlack, socket_server: FakeSocketMode
) -> None:
    """Server-side close: a second apps.connections.open and WebSocket, then work goes on."""
    socket_server.wait_for_connections(1)
    bot.wait_ready()
    socket_server.close_current()

    socket_server.wait_for_connections(2, timeout=20)
    assert 2 <= len(slack.wait_for("apps.connections.open", 2))
    envelope_id = socket_server.send_slash_command(
        "how do I create a Cloud Storage bucket?", slack.response_url("C1")
    )
    socket_server.wait_for_ack(envelope_id)
    slack.wait_for("chat.postMessage", 1, timeout=15)
    assert 200 == bot.wait_ready().status_code


def test_bot_reconnects_when_slack_asks_for_a_refresh(
    bot: BotProcess, slack: FakeSlack, socket_server: FakeSocketMode
) -> None:
    """A `disconnect` message (refresh_requested) makes the bot open a new connection."""
    socket_server.wait_for_connections(1)
    bot.wait_ready()
    socket_server.send_disconnect()

    socket_server.wait_for_connections(2, timeout=20)
    envelope_id = socket_server.send_slash_command(
        "what is Firestore pricing?", slack.response_url("C1")
    )
    socket_server.wait_for_ack(envelope_id)
    slack.wait_for("chat.postMessage", 1, timeout=15)


def test_health_and_metrics_are_served_on_port_in_socket_mode(
    bot: BotProcess, slack: FakeSlack, socket_server: FakeSocketMode
) -> None:
    """/healthz and /metrics answer on PORT even though Slack traffic uses the socket."""
    socket_server.wait_for_connections(1)
    bot.wait_ready()
    envelope_id = socket_server.send_slash_command(
        "how do I create a Cloud Storage bucket?", slack.response_url("C1")
    )
    socket_server.wait_for_ack(envelope_id)
    slack.wait_for("chat.postMessage", 1, timeout=15)

    assert 200 == bot.get("/healthz").status_code
    metrics = bot.get("/metrics")
    assert 200 == metrics.status_code
    assert "gdocs_requests_total" in metrics.text
    assert 404 == bot.get("/slack/events").status_code  # no HTTP route in Socket Mode


def test_sigterm_closes_the_socket_and_exits_0_without_leaking_tokens(
    bot: BotProcess, socket_server: FakeSocketMode
) -> None:
    """Graceful stop in Socket Mode; at DEBUG neither token appears in the output."""
    socket_server.wait_for_connections(1)
    bot.wait_ready()
    bot.signal(signal.SIGTERM)
    assert 0 == bot.wait(timeout=15)
    assert APP_TOKEN not in bot.output
    assert BOT_TOKEN not in bot.output
    assert "Traceback" not in bot.output


def test_invalid_app_token_exits_2_naming_slack_app_token(
    tmp_path: Path, slack: FakeSlack, dk_server: FakeDeveloperKnowledge
) -> None:
    """apps.connections.open refusing the app token stops start-up with one clear line."""
    from tests.fakes.bot_process import run_to_exit

    slack.fail("apps.connections.open", "invalid_auth")
    env = {
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_APP_TOKEN": APP_TOKEN,
        "SLACK_API_URL": slack.url,
        "GOOGLE_API_KEY": "test-key",
        "DEVELOPER_KNOWLEDGE_MCP_URL": dk_server.url,
        "PAY_MCP_URL": dk_server.url,
        "HOST": "127.0.0.1",
        "PORT": "0",
    }
    result = run_to_exit(env, tmp_path)
    assert 2 == result.returncode
    (line,) = [x for x in result.stderr.splitlines() if "SLACK_APP_TOKEN" in x]
    assert "invalid_auth" in line
    assert "Traceback" not in result.stderr
