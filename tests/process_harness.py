"""Real `gdocs-bot serve` processes driven as Slack drives them, for the state store's and the
quota's end-to-end tests.

    bot = ServedBot.start(env_for(slack, dk, STATE_URL=redis.url), cwd)
    sent = bot.command(slack, "how do I create a bucket?")      # signed, over loopback
    slack.wait_for("chat.postMessage")
    bot.wait_until(lambda: bot.counter("gdocs_requests_total", kind="command") == 1, "…")

Requests are signed with `tests.slack_requests.SIGNING_SECRET` and built by its
`SlackRequests`; the bot's Web API calls and response_url posts land in the `FakeSlack`.
Each process gets only the settings a test gives it: none leak in from the developer's
shell (the module-scoped fixtures that start these run before the per-test clean-up).
"""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bot.settings import Settings
from tests.fakes.bot_process import BotProcess, subprocess_env
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack
from tests.slack_requests import API_KEY, ASKER, BOT_TOKEN, SIGNING_SECRET, SlackRequests, sign

#: every setting's environment variable: none may come from the shell running the tests
_SETTINGS = frozenset(name.upper() for name in Settings.model_fields)


def env_for(slack: FakeSlack, dk: FakeDeveloperKnowledge, **settings: str) -> dict[str, str]:
    """Settings for a bot in HTTP mode on an ephemeral port, wired to the fakes."""
    return {
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": slack.url,
        "GOOGLE_API_KEY": API_KEY,
        "DEVELOPER_KNOWLEDGE_MCP_URL": dk.url,
        "HOST": "127.0.0.1",
        "PORT": "0",
        "READINESS_PROBE_SECONDS": "1",
        "SHUTDOWN_GRACE_SECONDS": "5",
        "MCP_TIMEOUT_SECONDS": "10",
        # these tests count finished messages (dedupe, replicas): the classic path
        "STREAM_ANSWERS": "false",
        **settings,
    }


@dataclass
class Acked:
    """What the bot answered to one signed request, and how long the answer took."""

    status: int
    body: str
    elapsed: float
    #: the response_url key of a command (see `FakeSlack.responses_to`)
    key: str | None = None


class ServedBot(BotProcess):
    """`python -m bot serve` with only the given settings, listening on loopback."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        base = {k: v for k, v in os.environ.items() if k.upper() not in _SETTINGS}
        self._spawn(
            [sys.executable, "-m", "bot", "serve"],
            subprocess_env({**base, "PYTHONUNBUFFERED": "1"}, env, cwd),
            cwd,
        )
        self._requests: SlackRequests | None = None

    @classmethod
    def start(cls, env: dict[str, str], cwd: Path, *, ready: bool = True) -> ServedBot:
        """Start it and wait until it listens (and, with `ready`, until /readyz is 200)."""
        bot = cls(env, cwd)
        try:
            bot.wait_listening()
            if ready:
                response = bot.wait_ready()
                assert 200 == response.status_code, response.text
        except BaseException:
            bot.kill()
            raise
        return bot

    def _slack(self, slack: FakeSlack) -> SlackRequests:
        if self._requests is None or self._requests.fake is not slack:
            self._requests = SlackRequests(slack, self.url("/slack/events"))
        return self._requests

    def _post(self, body: str, content_type: str, headers: dict[str, str] | None = None) -> Acked:
        all_headers = {"Content-Type": content_type, **sign(body), **(headers or {})}
        started = time.perf_counter()
        response = httpx.post(
            self.url("/slack/events"), content=body.encode(), headers=all_headers, timeout=10
        )
        return Acked(response.status_code, response.text, time.perf_counter() - started)

    def command(self, slack: FakeSlack, text: str, *, user: str = ASKER) -> Acked:
        """A signed `/gdocs <text>`; its ack is shown to the asker as Slack shows it."""
        requests = self._slack(slack)
        # response_url keys unique across processes: replicas share one FakeSlack
        key = f"p{self.port}-cmd{requests.next_id()}"
        body, key = requests.command_body(text, user=user, key=key)
        acked = self._post(body, "application/x-www-form-urlencoded")
        acked.key = key
        if acked.status == 200:
            slack.acknowledged(key, acked.body)
        return acked

    def event(self, body: str, *, retry_num: int | None = None) -> Acked:
        """A signed Events API callback `body` (see `mention_body`), maybe marked a retry."""
        headers = {}
        if retry_num is not None:
            headers = {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"}
        return self._post(body, "application/json", headers)

    def mention_body(self, slack: FakeSlack, text: str, *, event_id: str, ts: str) -> str:
        event = {
            "type": "app_mention",
            "user": ASKER,
            "text": f"<@{BOT_USER_ID}> {text}",
            "ts": ts,
            "event_ts": ts,
            "channel": "C1",
        }
        return self._slack(slack).event_body(event, event_id=event_id)

    # --- what it reports ---------------------------------------------------------------
    def readyz(self) -> tuple[int, dict[str, Any]]:
        response = self.get("/readyz")
        return response.status_code, response.json()

    def metrics(self) -> str:
        return self.get("/metrics").text

    def counter(self, name: str, **labels: str) -> float:
        """The sum of a counter's (or gauge's) series in /metrics matching `labels`; 0 when
        it has none."""
        return metric_value(self.metrics(), name, **labels)


def metric_value(text: str, name: str, **labels: str) -> float:
    """Sum of the series of `name` in Prometheus `text` that carry all of `labels`."""
    total = 0.0
    pattern = re.compile(rf"^{re.escape(name)}(\{{[^}}]*\}})? (\S+)$", re.MULTILINE)
    for match in pattern.finditer(text):
        series = match.group(1) or ""
        if all(f'{k}="{v}"' in series for k, v in labels.items()):
            total += float(match.group(2))
    return total


def has_metric(text: str, name: str) -> bool:
    return re.search(rf"^{re.escape(name)}(\{{| )", text, re.MULTILINE) is not None
