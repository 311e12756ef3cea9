"""`gdocs-bot serve` (and the CLI) against a Redis STATE_URL, as real subprocesses: no server
yet (the bot starts degraded, answers, and uses Redis once it is up), a wrong password (exit
2 with one line naming STATE_URL, never the password), and a healthy one (questions answered
through the bot's bounded connection pool)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.bot_process import run_to_exit
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.redis_server import RedisServer
from tests.fakes.slack_api import FakeSlack
from tests.process_harness import ServedBot, env_for
from tests.test_replicas import post_for

pytestmark = pytest.mark.timeout(120)


def test_a_bot_starts_while_redis_is_down_and_uses_it_once_it_is_up(
    tmp_path: Path, slack: FakeSlack, dk_server: FakeDeveloperKnowledge
) -> None:
    """Nothing listens at STATE_URL yet: the bot starts, answers, and /readyz is 200 with the
    store's state (ok: false); once redis-server starts on that port, ok: true."""
    redis = RedisServer()  # a free port, not started
    bot = ServedBot.start(env_for(slack, dk_server, STATE_URL=redis.url), tmp_path)
    try:
        bot.wait_until(lambda: not bot.readyz()[1]["store"]["ok"], "/readyz to show the store down")
        status, report = bot.readyz()
        assert 200 == status
        assert f"redis://127.0.0.1:{redis.port}/0" == report["store"]["url"]
        bot.command(slack, "how do I make a bucket public?")
        slack.wait_for("chat.postMessage", 1, timeout=20)
        assert "Here is how" in post_for(slack, "how do I make a bucket public?")

        redis.start()
        bot.wait_until(lambda: bot.readyz()[1]["store"]["ok"], "the store to be up", timeout=20)
        assert "Traceback" not in bot.output
    finally:
        bot.kill()
        redis.kill()


def test_a_healthy_redis_serves_the_questions_and_counts_its_calls(
    tmp_path: Path, slack: FakeSlack, dk_server: FakeDeveloperKnowledge, redis_server: RedisServer
) -> None:
    """On a healthy Redis the questions are answered, /metrics counts the store's calls, and
    the server sees no more connections than the bot's pool holds."""
    bot = ServedBot.start(env_for(slack, dk_server, STATE_URL=redis_server.url), tmp_path)
    try:
        for n in range(3):
            assert 200 == bot.command(slack, f"how do I make bucket {n} public?").status
        slack.wait_for("chat.postMessage", 3, timeout=20)
        # each acknowledgement's claim and work record: one batch
        assert bot.counter("gdocs_store_calls_total", op="batch") >= 3
        clients = redis_server.command("CLIENT", "LIST").decode().strip().splitlines()
        assert 2 <= len(clients) <= 32 + 1  # the bot's pool, and this test's own connection
    finally:
        bot.kill()


def test_a_wrong_redis_password_stops_start_up_naming_state_url_without_the_password(
    tmp_path: Path, slack: FakeSlack, dk_server: FakeDeveloperKnowledge
) -> None:
    """redis-server wants another password: `serve` and the CLI exit 2 with one line naming
    STATE_URL; neither password appears anywhere in their output."""
    redis = RedisServer(password="the-right-one-5521").start()
    wrong = f"redis://:not-the-password-8830@127.0.0.1:{redis.port}/0"
    try:
        env = env_for(slack, dk_server, STATE_URL=wrong)
        served = run_to_exit(env, tmp_path, "serve")
        asked = run_to_exit(env, tmp_path, "ask", "how do I create a bucket?")
    finally:
        redis.kill()
    for result in (served, asked):
        output = result.stdout + result.stderr
        assert 2 == result.returncode, output
        [line] = result.stderr.strip().splitlines()
        assert "STATE_URL" in line
        assert "not-the-password-8830" not in output
        assert "the-right-one-5521" not in output
        assert "Traceback" not in output
    assert [] == dk_server.calls
