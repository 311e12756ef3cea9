"""Run `python -m bot serve` as a real subprocess and talk to it over loopback.

Output is read by background threads so a test can wait for a log line (the `listening on`
line gives the ephemeral port) without blocking on a full pipe. The environment is the test
process's (already cleaned of settings by conftest) plus what the test passes, with the GCE
metadata server pointed at a closed loopback port.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO
from urllib.parse import urlencode

import httpx

from tests.fakes.slack_payloads import slash_command_form

LISTENING = re.compile(r"listening on http://[^:]+:(\d+)")

NO_METADATA = {
    "GCE_METADATA_HOST": "127.0.0.1:9",
    "GCE_METADATA_IP": "127.0.0.1:9",
    "NO_GCE_CHECK": "True",
}


class BotProcess:
    def __init__(self, env: dict[str, str], cwd: Path, *args: str) -> None:
        full_env = {**os.environ, **NO_METADATA, "PYTHONUNBUFFERED": "1", **env}
        # the checkout must be importable from the tmp cwd even without an install
        root = str(Path(__file__).resolve().parents[2])
        full_env["PYTHONPATH"] = os.pathsep.join(p for p in (root, full_env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot", *(args or ("serve",))],
            env=full_env,
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
    full_env = {**os.environ, **NO_METADATA, **env}
    root = str(Path(__file__).resolve().parents[2])
    full_env["PYTHONPATH"] = os.pathsep.join(p for p in (root, full_env.get("PYTHONPATH")) if p)
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


def signed_slash_command(
    signing_secret: str, text: str, response_url: str, **fields: str
) -> tuple[bytes, dict[str, str]]:
    """A slash-command request body and headers signed as Slack signs them (v0 HMAC-SHA256)."""
    form = slash_command_form(text, response_url=response_url, **fields)
    body = urlencode(form).encode()
    timestamp = str(int(time.time()))
    digest = hmac.new(
        signing_secret.encode(), f"v0:{timestamp}:".encode() + body, hashlib.sha256
    ).hexdigest()
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": f"v0={digest}",
    }
    return body, headers
