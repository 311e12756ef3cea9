"""One bot replica: `python -m bot serve` (HTTP mode) as a subprocess on 127.0.0.1.

It runs with the test suite's loopback guard (tests/sitecustomize first on PYTHONPATH: any
socket to an address outside 127.0.0.0/8 fails), no `.env` (its own empty working directory)
and the settings it is given. Its CPU time and peak RSS come from /proc; its counters from
its own `/metrics`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

from bench.driver import (
    ROOT,
    SIGNING_SECRET,
    free_port,
    process_cpu_seconds,
    process_memory_kb,
    wait_healthy,
)

GUARD_DIR = ROOT / "tests" / "sitecustomize"
_SAMPLE = re.compile(r"^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def bot_env(settings: dict[str, str]) -> dict[str, str]:
    """The bot's environment: this one without Slack/Google settings, the loopback guard,
    no metadata server, and `settings`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "GOOGLE_", "STATE_", "ANSWER_", "CACHE_"))
    }
    paths = (str(GUARD_DIR), str(ROOT), env.get("PYTHONPATH"))
    env.update(
        PYTHONPATH=os.pathsep.join(p for p in paths if p),
        SLACK_BOT_TOKEN="xoxb-bench-token",
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        GOOGLE_API_KEY="bench-api-key",
        LOG_LEVEL="INFO",
        # the day's fake Slack reads answers from chat.postMessage: not streamed (the day
        # measures how far the quota goes, not how an answer is delivered)
        STREAM_ANSWERS="false",
        HOST="127.0.0.1",
        GCE_METADATA_HOST="127.0.0.1:9",
        GCE_METADATA_IP="127.0.0.1:9",
        NO_GCE_CHECK="True",
    )
    env.update(settings)
    return env


class Replica:
    def __init__(self, name: str, settings: dict[str, str], *, verbose: bool = False) -> None:
        self.name = name
        self.port = free_port()
        self.workdir = Path(tempfile.mkdtemp(prefix="gdocs-bench-replica-"))
        self._env = bot_env({**settings, "PORT": str(self.port)})
        self._verbose = verbose
        self.proc: subprocess.Popen[bytes] | None = None
        self._peak_kb = 0

    @property
    def events_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/slack/events"

    async def start(self, within: float = 30.0) -> float:
        """Spawn the bot; seconds until its `/healthz` answered 200."""
        t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "serve"],
            env=self._env,
            cwd=self.workdir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=None if self._verbose else subprocess.DEVNULL,
        )
        try:
            await wait_healthy(
                self.proc, self.port, t0=t0, within=within, poll=0.02, name=self.name
            )
        except RuntimeError:
            self.stop()
            raise
        return time.monotonic() - t0

    def cpu_seconds(self) -> float:
        """User + system CPU time the bot has used so far."""
        assert self.proc is not None
        return process_cpu_seconds(self.proc.pid)

    def peak_rss_mb(self) -> float:
        """VmHWM: the most resident memory the process has had (read while it runs)."""
        if self.proc is not None and self.proc.poll() is None:
            self._peak_kb = process_memory_kb(self.proc.pid, "VmHWM") or self._peak_kb
        return self._peak_kb / 1024

    async def metrics(self) -> Samples:
        """Every sample of the bot's `/metrics`."""
        url = f"http://127.0.0.1:{self.port}/metrics"
        async with aiohttp.ClientSession() as session, session.get(url) as resp:
            text = await resp.text()
        return parse_metrics(text)

    def stop(self) -> None:
        """Stop the bot (its peak RSS read just before) and remove its working directory."""
        if self.proc is not None and self.proc.poll() is None:
            self.peak_rss_mb()
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


def parse_metrics(text: str) -> Samples:
    out: Samples = {}
    for line in text.splitlines():
        match = _SAMPLE.match(line.strip())
        if match is None or line.startswith("#"):
            continue
        name, labels, value = match.groups()
        pairs = tuple(sorted(_LABEL.findall(labels or "")))
        try:
            out[(name, pairs)] = float(value)
        except ValueError:
            continue
    return out


def metric_sum(samples: Samples, name: str, **labels: str) -> float:
    """The sum of `name` over the series whose labels include `labels`."""
    want = set(labels.items())
    return sum(v for (n, pairs), v in samples.items() if n == name and want <= set(pairs))
