"""`gdocs-bot serve` in HTTP mode, as a real subprocess on loopback: health, readiness,
metrics, a signed slash command answered end to end, graceful shutdown, and start-up
failures that explain themselves without a stack trace."""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path

import httpx
import pytest

from tests.fakes.bot_process import (
    BotProcess,
    run_to_exit,
    signed_button_click,
    signed_mention,
    signed_slash_command,
)
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, FakePay, Fault
from tests.fakes.oauth_token import FakeTokenServer
from tests.fakes.slack_api import FakeSlack

BOT_TOKEN = "xoxb-4242-4343-HttpModeToken"
SIGNING_SECRET = "c0ffee5ecret0123456789abcdef0123"
API_KEY = "test-key"
BUCKETS = "documents/docs.cloud.google.com/storage/docs/creating-buckets"

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def env(slack: FakeSlack, dk_server: FakeDeveloperKnowledge, pay_server: FakePay) -> dict[str, str]:
    """Settings for a bot in HTTP mode wired to the loopback fakes."""
    return {
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": slack.url,
        "GOOGLE_API_KEY": API_KEY,
        "DEVELOPER_KNOWLEDGE_MCP_URL": dk_server.url,
        "PAY_MCP_URL": pay_server.url,
        "HOST": "127.0.0.1",
        "PORT": "0",
        "READINESS_PROBE_SECONDS": "1",
        "SHUTDOWN_GRACE_SECONDS": "10",
    }


def _post_command(bot: BotProcess, slack: FakeSlack, text: str) -> httpx.Response:
    body, headers = signed_slash_command(SIGNING_SECRET, text, slack.response_url("C1"))
    response = httpx.post(bot.url("/slack/events"), content=body, headers=headers, timeout=5)
    if response.status_code == 200:
        slack.acknowledged("C1", response.text)  # shown as Slack would show it
    return response


def _post(bot: BotProcess, request: tuple[bytes, dict[str, str]]) -> httpx.Response:
    body, headers = request
    return httpx.post(bot.url("/slack/events"), content=body, headers=headers, timeout=5)


def _hang(server: FakeDeveloperKnowledge, tool: str = "answer_query") -> Fault:
    """The next call of `tool` never answers: an event stream of keep-alives only, ended when
    the client goes away (so nothing is left running after the test)."""
    fault = Fault(
        status=200,
        content_type="text/event-stream",
        tool=tool,
        chunks=[b": keep-alive\n\n"],
        chunk_delay=0.2,
        endless=True,
    )
    server.faults.append(fault)
    return fault


# --- serving ---------------------------------------------------------------------------
def test_healthz_answers_while_the_process_runs(start_bot, env) -> None:
    """GET /healthz is 200 as soon as the port is bound."""
    bot = start_bot(env)
    response = bot.get("/healthz")
    assert 200 == response.status_code
    assert {"status": "ok"} == response.json()


def test_readyz_is_200_once_slack_and_developer_knowledge_answered(start_bot, env) -> None:
    """Readiness reports both halves ready, in HTTP mode."""
    bot = start_bot(env)
    response = bot.wait_ready()
    assert 200 == response.status_code, response.text
    report = response.json()
    assert report["ready"] is True
    assert "http" == report["mode"]
    assert report["slack"]["ready"] is True
    assert report["developer_knowledge"]["ready"] is True


def test_readyz_turns_503_naming_developer_knowledge_when_it_stops_answering(
    start_bot, env
) -> None:
    """With the DK server gone, /readyz is 503 and says which part is not ready."""
    dk = FakeDeveloperKnowledge()
    dk.api_key = API_KEY
    dk.start()
    bot = start_bot({**env, "DEVELOPER_KNOWLEDGE_MCP_URL": dk.url})
    assert 200 == bot.wait_ready().status_code
    dk.stop()

    seen: list[httpx.Response] = []

    def not_ready() -> bool:
        seen.append(bot.get("/readyz"))
        return seen[-1].status_code == 503

    # no event to wait on: the probe runs every READINESS_PROBE_SECONDS (1 s) in the bot
    bot.wait_until(not_ready, "/readyz to turn 503 after the DK server stopped", timeout=10)
    report = seen[-1].json()
    assert report["developer_knowledge"]["ready"] is False
    assert report["developer_knowledge"]["detail"]
    assert report["slack"]["ready"] is True


def test_signed_slash_command_is_answered_in_the_channel(start_bot, env, slack) -> None:
    """A signed /gdocs POSTed to /slack/events is acked and answered with chat.postMessage."""
    bot = start_bot(env)
    bot.wait_ready()
    response = _post_command(bot, slack, "how do I create a Cloud Storage bucket?")
    assert 200 == response.status_code

    (post,) = slack.wait_for("chat.postMessage", 1, timeout=15)
    assert "C1" == post.args["channel"]
    assert "create a Cloud Storage bucket" in post.args["text"]
    assert [] == slack.invalid_payloads


@pytest.mark.parametrize(("setting", "loop"), [(None, "uvloop"), ("asyncio", "asyncio")])
def test_serve_runs_on_uvloop_unless_event_loop_says_asyncio(
    start_bot, env, slack, setting: str | None, loop: str
) -> None:
    """uvloop by default (less CPU per question); EVENT_LOOP=asyncio answers just the same."""
    bot = start_bot(env if setting is None else {**env, "EVENT_LOOP": setting})
    bot.wait_ready()
    assert 200 == _post_command(bot, slack, "how do I create a Cloud Storage bucket?").status_code

    (post,) = slack.wait_for("chat.postMessage", 1, timeout=15)
    assert "create a Cloud Storage bucket" in post.args["text"]
    assert f"({loop} event loop)" in bot.output


def test_unsigned_request_is_refused(start_bot, env, slack) -> None:
    """A request with a wrong signature gets 401 and never reaches the documentation servers."""
    bot = start_bot(env)
    body, headers = signed_slash_command("not-the-secret", "how do I x?", slack.response_url("C1"))
    response = httpx.post(bot.url("/slack/events"), content=body, headers=headers, timeout=5)
    assert 401 == response.status_code


def test_metrics_count_a_handled_command_in_prometheus_text(start_bot, env, slack) -> None:
    """GET /metrics is Prometheus text that counts the command just answered."""
    bot = start_bot(env)
    bot.wait_ready()
    _post_command(bot, slack, "how do I create a Cloud Storage bucket?")
    slack.wait_for("chat.postMessage", 1, timeout=15)

    def counted() -> bool:
        return 'gdocs_requests_total{kind="command",outcome="ok"} 1' in bot.get("/metrics").text

    bot.wait_until(counted, "the command to be counted in /metrics")
    response = bot.get("/metrics")
    assert "text/plain; version=0.0.4" == response.headers["content-type"]
    assert "# TYPE gdocs_requests_total counter" in response.text


def test_the_garbage_collector_runs_once_the_bot_serves(start_bot, env, slack) -> None:
    """Start-up runs without the garbage collector; once the bot serves it is on again, at
    the serving thresholds (a pass every 50,000 allocations, not 700), and /metrics counts
    its passes."""
    bot = start_bot(env)
    bot.wait_ready()
    for n in range(3):
        _post_command(bot, slack, f"how do I create bucket number {n}?")
    slack.wait_for("chat.postMessage", 3, timeout=15)
    text = bot.get("/metrics").text
    passes = re.search(r'^python_gc_collections_total\{generation="0"\} (\d+)', text, re.M)
    assert passes is not None, "no python_gc_collections_total in /metrics"
    thresholds = re.findall(r'^python_gc_threshold\{generation="(\d)"\} (\d+)', text, re.M)
    assert [("0", "50000"), ("1", "20"), ("2", "100")] == thresholds


# --- shutdown --------------------------------------------------------------------------
def test_sigterm_during_an_answer_posts_it_then_exits_0(start_bot, env, slack, dk_server) -> None:
    """An answer in flight at SIGTERM is still posted; new commands hear 'try again'; exit 0."""
    dk_server.latency = 2.0
    bot = start_bot(env)
    bot.wait_ready()
    assert 200 == _post_command(bot, slack, "how do I create a Cloud Storage bucket?").status_code
    bot.wait_until(lambda: bool(dk_server.tool_calls("answer_query")), "the upstream call")

    bot.signal(signal.SIGTERM)
    stopped_at = time.monotonic()
    # still acknowledged (a 503 would only make Slack retry), and told to come back
    assert 200 == _post_command(bot, slack, "what is Firestore pricing?").status_code
    assert 503 == bot.get("/readyz").status_code

    (post,) = slack.wait_for("chat.postMessage", 1, timeout=10)
    assert "create a Cloud Storage bucket" in post.args["text"]
    assert 0 == bot.wait(timeout=15)
    assert time.monotonic() - stopped_at < 10  # within SHUTDOWN_GRACE_SECONDS
    notices = json.dumps(slack.responses_to("C1"), ensure_ascii=False)
    assert "restarting" in notices
    assert "Traceback" not in bot.output


def test_sigterm_with_a_hung_upstream_exits_0_once_the_grace_period_ends(
    start_bot, env, slack, dk_server
) -> None:
    """An answer that never comes back holds shutdown for SHUTDOWN_GRACE_SECONDS, no longer:
    exit 0 about a second later, with a warning that answers were still in flight."""
    hung = _hang(dk_server)
    bot = start_bot({**env, "SHUTDOWN_GRACE_SECONDS": "1", "MCP_TIMEOUT_SECONDS": "120"})
    bot.wait_ready()
    assert 200 == _post_command(bot, slack, "how do I create a Cloud Storage bucket?").status_code
    bot.wait_until(lambda: hung.sent > 0, "the answer_query call to hang upstream")

    bot.signal(signal.SIGTERM)
    stopped_at = time.monotonic()
    assert 0 == bot.wait(timeout=15)
    elapsed = time.monotonic() - stopped_at
    assert 0.9 <= elapsed < 1 + 3, f"exit took {elapsed:.1f}s for a grace period of 1 s"
    assert "still in flight" in bot.output
    assert not hung.finished
    assert "Traceback" not in bot.output


def test_a_second_signal_stops_without_waiting_for_answers(
    start_bot, env, slack, dk_server
) -> None:
    """SIGTERM, then SIGTERM again while an answer hangs: exit 0 at once, not after the 30 s
    grace period."""
    hung = _hang(dk_server)
    bot = start_bot({**env, "SHUTDOWN_GRACE_SECONDS": "30", "MCP_TIMEOUT_SECONDS": "120"})
    bot.wait_ready()
    assert 200 == _post_command(bot, slack, "how do I create a Cloud Storage bucket?").status_code
    bot.wait_until(lambda: hung.sent > 0, "the answer_query call to hang upstream")

    bot.signal(signal.SIGTERM)
    bot.wait_for_line("finishing 1 answer\\(s\\) in flight")
    bot.signal(signal.SIGTERM)
    stopped_at = time.monotonic()
    assert 0 == bot.wait(timeout=15)
    assert time.monotonic() - stopped_at < 5
    assert "second signal" in bot.output
    assert "Traceback" not in bot.output


def test_sigint_stops_an_idle_bot_at_once(start_bot, env) -> None:
    """Ctrl-C on an idle bot exits 0 without waiting for the grace period."""
    bot = start_bot(env)
    bot.wait_ready()
    started = time.monotonic()
    bot.signal(signal.SIGINT)
    assert 0 == bot.wait(timeout=10)
    assert time.monotonic() - started < 5
    assert "Traceback" not in bot.output


# --- start-up failures -------------------------------------------------------------------
def test_missing_slack_settings_print_one_line_each_and_exit_2(tmp_path: Path) -> None:
    """No token, no signing secret: each named on its own line, exit 2, no traceback."""
    result = run_to_exit({"GOOGLE_API_KEY": API_KEY, "PORT": "0", "HOST": "127.0.0.1"}, tmp_path)
    assert 2 == result.returncode
    lines = result.stderr.strip().splitlines()
    assert any("SLACK_BOT_TOKEN" in line for line in lines)
    assert any("SLACK_SIGNING_SECRET" in line for line in lines)
    assert "Traceback" not in result.stderr + result.stdout
    assert len(lines) <= 4, result.stderr


def test_invalid_bot_token_at_start_exits_2_naming_slack_bot_token(
    tmp_path: Path, env, slack
) -> None:
    """auth.test answering invalid_auth stops start-up with one clear line."""
    slack.auth_ok = False
    result = run_to_exit(env, tmp_path)
    assert 2 == result.returncode
    (line,) = [x for x in result.stderr.splitlines() if "SLACK_BOT_TOKEN" in x]
    assert "invalid_auth" in line
    assert "Traceback" not in result.stderr
    assert BOT_TOKEN not in result.stderr


def test_unreachable_slack_at_start_exits_1_after_retries(tmp_path: Path, env) -> None:
    """Nothing listening at SLACK_API_URL: a few retries, then exit 1 naming SLACK_API_URL."""
    result = run_to_exit({**env, "SLACK_API_URL": "http://127.0.0.1:9/api/"}, tmp_path)
    assert 1 == result.returncode
    assert "SLACK_API_URL" in result.stderr
    assert "Traceback" not in result.stderr


def test_settings_are_read_from_dotenv_in_the_working_directory(
    tmp_path: Path, env, start_bot
) -> None:
    """The quickstart's `.env` is enough: no environment variables needed."""
    (tmp_path / ".env").write_text("".join(f"{k}={v}\n" for k, v in env.items()))
    bot = start_bot({})
    assert 200 == bot.wait_ready().status_code


# --- secrets ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "oauth_token",
    ["ya29.a0AfB_byDebugShapedAccessToken-0123456789", "opaque-oauth-8f2c41d9e7"],
    ids=["ya29-shaped", "plain-looking"],
)
def test_secrets_never_reach_the_output_even_at_debug_in_json(
    start_bot, env, slack, dk_server, pay_server, tmp_path: Path, oauth_token: str
) -> None:
    """A Pay question (OAuth), a mention and a Show-full-doc click at LOG_LEVEL=DEBUG,
    LOG_FORMAT=json: every stderr line is JSON, and no token, key or secret appears in the
    bot's output or in anything it sent to Slack."""
    tokens = FakeTokenServer().start()
    try:
        tokens.tokens.append(oauth_token)
        pay_server.bearer = oauth_token
        key_file = tokens.service_account_file(tmp_path)
        bot = start_bot(
            {
                **env,
                "LOG_LEVEL": "DEBUG",
                "LOG_FORMAT": "json",
                "GOOGLE_APPLICATION_CREDENTIALS": str(key_file),
                "GOOGLE_CLOUD_PROJECT": "test-project",
            }
        )
        bot.wait_ready()
        question = "How do I build a PaymentDataRequest for Google Pay?"
        assert 200 == _post_command(bot, slack, question).status_code
        bot.wait_for_line('"message": "slack command handled"')
        mention = signed_mention(SIGNING_SECRET, "how do I create a Cloud Storage bucket?")
        assert 200 == _post(bot, mention).status_code
        bot.wait_for_line('"message": "slack mention handled"')
        click = {"action_id": "show_doc:0", "type": "button", "value": BUCKETS}
        action = signed_button_click(SIGNING_SECRET, click, slack.response_url("A1"))
        assert 200 == _post(bot, action).status_code
        bot.wait_for_line('"message": "slack action handled"')
        metrics = bot.get("/metrics").text
        bot.signal(signal.SIGTERM)
        assert 0 == bot.wait(timeout=15)
    finally:
        tokens.stop()

    # each reached the server it is meant for, the Pay question with the OAuth token
    for kind in ("command", "mention", "action"):
        assert f'gdocs_requests_total{{kind="{kind}",outcome="ok"}} 1' in metrics
    (pay_call,) = pay_server.tool_calls("search_documentation")
    assert f"Bearer {oauth_token}" == pay_call.headers["authorization"]
    assert dk_server.tool_calls("answer_query")
    assert dk_server.tool_calls("get_documents")
    assert any(
        "Create buckets" in c.args.get("text", "") for c in slack.calls_to("chat.postMessage")
    )

    private_key_line = tokens.private_pem.splitlines()[1]
    secrets = (BOT_TOKEN, SIGNING_SECRET, API_KEY, oauth_token, private_key_line)
    output, sent_to_slack = bot.output, slack.everything_sent()
    for secret in secrets:
        assert secret not in output
        assert secret not in sent_to_slack
    lines = [line for line in "".join(bot.stderr).splitlines() if line.strip()]
    assert any('"level": "DEBUG"' in line for line in lines)
    for line in lines:
        assert isinstance(json.loads(line), dict), line
