"""One bot process on 127.0.0.1: `python -m bot serve` (HTTP mode) from this tree or another
(`tree`: a checkout of an older commit, first on PYTHONPATH), or the naive bot
(`module="bench.naive_bot"`).

It runs with the test suite's loopback guard (tests/sitecustomize first on PYTHONPATH: any
socket to an address outside 127.0.0.0/8 fails), no `.env` (its own empty working directory)
and the settings it is given. Its CPU time and peak RSS come from /proc; its counters from
its own `/metrics`.
"""

from __future__ import annotations

import compileall
import functools
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
_OURS = ("SLACK_", "GOOGLE_", "STATE_", "ANSWER_", "CACHE_", "MCP_", "RATE_LIMIT_", "PYTHONPATH")

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def bot_env(settings: dict[str, str], tree: Path) -> dict[str, str]:
    """This environment without the bot's settings, the loopback guard and `tree` first on
    PYTHONPATH, no metadata server, and `settings`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_OURS)}
    env.update(
        PYTHONPATH=os.pathsep.join((str(GUARD_DIR), str(tree))),
        SLACK_BOT_TOKEN="xoxb-bench-token",
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        GOOGLE_API_KEY="bench-api-key",
        LOG_LEVEL="INFO",
        # the fakes read answers from chat.postMessage: not streamed
        STREAM_ANSWERS="false",
        HOST="127.0.0.1",
        GCE_METADATA_HOST="127.0.0.1:9",
        GCE_METADATA_IP="127.0.0.1:9",
        NO_GCE_CHECK="True",
    )
    env.update(settings)
    return env


@functools.cache
def precompile(tree: Path) -> None:
    """Byte-compile the tree's `bot` once, before its first start: an installed bot has its
    modules compiled, but a checkout run with PYTHONDONTWRITEBYTECODE compiles every module
    edited since its last .pyc at each start, which the cold start would count."""
    compileall.compile_dir(tree / "bot", quiet=1)


class Replica:
    def __init__(
        self,
        name: str,
        settings: dict[str, str],
        *,
        tree: Path = ROOT,
        module: str = "bot",
        verbose: bool = False,
    ) -> None:
        self.name = name
        self.port = free_port()
        self.tree = tree
        self.workdir = Path(tempfile.mkdtemp(prefix="gdocs-bench-"))
        self._env = bot_env({**settings, "PORT": str(self.port)}, tree)
        self._argv = [sys.executable, "-m", module] + (["serve"] if module == "bot" else [])
        self._verbose = verbose
        self.proc: subprocess.Popen[bytes] | None = None
        self._peak_kb = 0

    @property
    def events_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/slack/events"

    async def start(self, within: float = 30.0) -> float:
        """Spawn the bot; seconds until its `/healthz` answered 200 (its cold start)."""
        precompile(self.tree)
        t0 = time.monotonic()
        self.proc = subprocess.Popen(
            self._argv,
            env=self._env,
            cwd=self.workdir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=None if self._verbose else subprocess.DEVNULL,
        )
        try:
            await wait_healthy(self.proc, self.port, t0=t0, within=within, name=self.name)
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
