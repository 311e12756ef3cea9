"""Run `python -m bot serve` as a real subprocess and talk to it over loopback.

Output is read by background threads so a test can wait for a log line (the `listening on`
line gives the ephemeral port) without blocking on a full pipe. The environment is the test
process's (already cleaned of settings by conftest) plus what the test passes, with the GCE
metadata server pointed at a closed loopback port, every remote URL the test does not set
(in its env or the working directory's `.env`) pointed at a closed loopback port too, and
`tests/sitecustomize` first on PYTHONPATH so the subprocess refuses non-loopback sockets.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlencode

import httpx
from dotenv import dotenv_values

from tests.fakes.slack_api import BOT_USER_ID
from tests.fakes.slack_payloads import slash_command_form

LISTENING = re.compile(r"listening on http://[^:]+:(\d+)")

NO_METADATA = {
    "GCE_METADATA_HOST": "127.0.0.1:9",
    "GCE_METADATA_IP": "127.0.0.1:9",
    "NO_GCE_CHECK": "True",
}

#: the remote services' settings, aimed at the discard port on loopback (refused at once)
#: unless a test sets them: a forgotten URL fails the test instead of reaching Google or Slack
CLOSED_REMOTES = {
    "DEVELOPER_KNOWLEDGE_MCP_URL": "http://127.0.0.1:9/mcp",
    "PAY_MCP_URL": "http://127.0.0.1:9/mcp",
    "SLACK_API_URL": "http://127.0.0.1:9/api/",
}

_ROOT = Path(__file__).resolve().parents[2]
#: holds the `sitecustomize` that refuses non-loopback sockets in every subprocess
SOCKET_GUARD_DIR = _ROOT / "tests" / "sitecustomize"


def subprocess_env(base: Mapping[str, str], env: Mapping[str, str], cwd: Path) -> dict[str, str]:
    """`base` + `env` for a subprocess of the tests: no metadata server, closed remotes
    unless configured (here or in `cwd/.env`), the socket guard and the checkout importable."""
    dotenv = cwd / ".env"
    in_dotenv = {k.upper() for k in dotenv_values(dotenv)} if dotenv.is_file() else set()
    closed = {k: v for k, v in CLOSED_REMOTES.items() if k not in env and k not in in_dotenv}
    full = {**base, **NO_METADATA, **closed, **env}
    # the guard first (so `site` finds it), then the checkout, importable from the tmp cwd
    paths = (str(SOCKET_GUARD_DIR), str(_ROOT), full.get("PYTHONPATH"))
    full["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    return full


class BotProcess:
    def __init__(self, env: dict[str, str], cwd: Path, *args: str) -> None:
        full_env = subprocess_env({**os.environ, "PYTHONUNBUFFERED": "1"}, env, cwd)
        self._spawn([sys.executable, "-m", "bot", *(args or ("serve",))], full_env, cwd)

    def _spawn(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        """Start `argv` with its output read by background threads (subclasses run the bot
        another way, e.g. in a container)."""
        self.proc = subprocess.Popen(
            argv,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._cond = threading.Condition()
        self._readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, self.stdout), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, self.stderr), daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        self.port = 0

    def _read(self, stream: IO[str] | None, sink: list[str]) -> None:
        assert stream is not None
        for line in stream:
            with self._cond:
                sink.append(line)
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    @property
    def output(self) -> str:
        with self._cond:
            return "".join(self.stdout) + "".join(self.stderr)

    def wait_for_line(self, pattern: str | re.Pattern[str], timeout: float = 15.0) -> re.Match[str]:
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                match = regex.search("".join(self.stderr) + "".join(self.stdout))
                if match:
                    return match
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (self.proc.poll() is not None and not self._alive_readers()):
                    raise AssertionError(
                        f"no line matching {regex.pattern!r}; output:\n{self.output_unlocked()}"
                    )
                self._cond.wait(min(remaining, 0.5))

    def wait_until(self, condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
        """Wait, bounded, for `condition` (something this process causes elsewhere: a call
        reaching a fake, a metric). Checked at each line of output and every 50 ms between;
        on timeout an AssertionError names `what` and shows the output."""
        deadline = time.monotonic() + timeout
        while not condition():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"timed out after {timeout:g}s waiting for {what}; output:\n{self.output}"
                )
            with self._cond:
                self._cond.wait(min(remaining, 0.05))

    def _alive_readers(self) -> bool:
        return any(r.is_alive() for r in self._readers)

    def output_unlocked(self) -> str:
        return "".join(self.stdout) + "".join(self.stderr)

    def wait_listening(self, timeout: float = 20.0) -> int:
        self.port = int(self.wait_for_line(LISTENING, timeout).group(1))
        return self.port

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.url(path), timeout=5)

    def wait_ready(self, timeout: float = 15.0) -> httpx.Response:
        """Poll /readyz until 200 (readiness is what a load balancer waits for too)."""
        deadline = time.monotonic() + timeout
        while True:
            response = self.get("/readyz")
            if response.status_code == 200 or time.monotonic() > deadline:
                return response
            with self._cond:  # wait on output instead of a bare sleep
                self._cond.wait(0.2)

    def signal(self, signum: int = signal.SIGTERM) -> None:
        self.proc.send_signal(signum)

    def wait(self, timeout: float = 20.0) -> int:
        code = self.proc.wait(timeout)
        for reader in self._readers:
            reader.join(5)
        return code

    def kill(self) -> None:
        """Stop the process if it still runs and release its pipes."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        for reader in self._readers:
            reader.join(5)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def run_to_exit(
    env: dict[str, str], cwd: Path, *args: str, timeout: float = 30.0
) -> subprocess.CompletedProcess[str]:
    """Run the CLI to completion (for start-up failures)."""
    full_env = subprocess_env(os.environ, env, cwd)
    return subprocess.run(
        [sys.executable, "-m", "bot", *(args or ("serve",))],
        env=full_env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def slack_signature(signing_secret: str, body: bytes) -> dict[str, str]:
    """The headers Slack signs a request with (v0 HMAC-SHA256 over timestamp and body)."""
    timestamp = str(int(time.time()))
    digest = hmac.new(
        signing_secret.encode(), f"v0:{timestamp}:".encode() + body, hashlib.sha256
    ).hexdigest()
    return {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": f"v0={digest}"}


def signed_mention(
    signing_secret: str, text: str, *, channel: str = "C1", user: str = "U1"
) -> tuple[bytes, dict[str, str]]:
    """An Events API `app_mention` callback, signed."""
    ts = f"{time.time():.6f}"
    body = json.dumps(
        {
            "token": "deprecated-verification-token",
            "team_id": "T1",
            "api_app_id": "A1",
            "type": "event_callback",
            "event_id": f"Ev{time.time_ns()}",
            "event_time": int(time.time()),
            "authorizations": [{"team_id": "T1", "user_id": BOT_USER_ID, "is_bot": True}],
            "event": {
                "type": "app_mention",
                "user": user,
                "text": f"<@{BOT_USER_ID}> {text}",
                "ts": ts,
                "event_ts": ts,
                "channel": channel,
            },
        }
    ).encode()
    headers = {"Content-Type": "application/json", **slack_signature(signing_secret, body)}
    return body, headers


def signed_button_click(
    signing_secret: str,
    action: dict[str, Any],
    response_url: str,
    *,
    channel: str = "C1",
    user: str = "U1",
    message_ts: str = "1700000000.000001",
) -> tuple[bytes, dict[str, str]]:
    """A `block_actions` interaction: `action` clicked on the message at `message_ts`."""
    payload = {
        "type": "block_actions",
        "team": {"id": "T1", "domain": "test"},
        "user": {"id": user, "username": f"user-{user}", "team_id": "T1"},
        "api_app_id": "A1",
        "token": "deprecated-verification-token",
        "container": {
            "type": "message",
            "message_ts": message_ts,
            "channel_id": channel,
            "is_ephemeral": False,
        },
        "trigger_id": f"trigger.{time.time_ns()}",
        "channel": {"id": channel, "name": "general"},
        "message": {"type": "message", "ts": message_ts, "text": "answer"},
        "response_url": response_url,
        "actions": [{"block_id": "show_docs", "action_ts": str(time.time()), **action}],
    }
    body = urlencode({"payload": json.dumps(payload)}).encode()
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        **slack_signature(signing_secret, body),
    }
    return body, headers


def signed_slash_command(
    signing_secret: str, text: str, response_url: str, **fields: str
) -> tuple[bytes, dict[str, str]]:
    """A slash-command request body and headers signed as Slack signs them (v0 HMAC-SHA256)."""
    form = slash_command_form(text, response_url=response_url, **fields)
    body = urlencode(form).encode()
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        **slack_signature(signing_secret, body),
    }
    return body, headers
