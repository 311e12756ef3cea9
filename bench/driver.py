"""The benchmark's moving parts: the bot as a subprocess, the fakes, and signed commands."""

from __future__ import annotations

import argparse
import asyncio
import compileall
import contextlib
import functools
import hashlib
import hmac
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
from aiohttp import web

from bench.fakes import FakeSlackApi, FakeUpstream

SIGNING_SECRET = "bench-signing-secret"
#: the bot's user id, as the fake Slack's auth.test reports it
BOT_USER_ID = "UBOT"
ROOT = Path(__file__).resolve().parents[1]


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time process `pid` has used so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_memory_kb(pid: int, field: str) -> int | None:
    """A memory figure of process `pid` in KB from /proc/PID/status (`VmRSS`: resident now,
    `VmHWM`: the most it has been resident); None once the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def wait_healthy(
    proc: subprocess.Popen[bytes],
    port: int,
    *,
    t0: float,
    within: float,
    poll: float,
    name: str = "bot",
) -> None:
    """Until the bot at `port` answers `/healthz` 200 (RuntimeError: it exited, or `within`
    seconds from `t0` passed). Polled: the bench times the bot's start-up this way."""
    url = f"http://127.0.0.1:{port}/healthz"
    async with aiohttp.ClientSession() as session:
        while time.monotonic() - t0 < within:
            if proc.poll() is not None:
                raise RuntimeError(f"{name}: the bot exited with {proc.returncode}")
            try:
                async with session.get(url) as resp:
                    if resp.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(poll)
    raise RuntimeError(f"{name}: the bot did not become healthy in {within:g} s")


def sign(body: str, ts: str) -> str:
    base = f"v0:{ts}:{body}".encode()
    return "v0=" + hmac.new(SIGNING_SECRET.encode(), base, hashlib.sha256).hexdigest()


@functools.cache
def _precompile_bot() -> None:
    """Byte-compile the bot's modules once, before the first start: an installed bot (the
    image, a pip install) has them compiled, but a checkout run with PYTHONDONTWRITEBYTECODE
    (set on this machine) compiles every module edited since its last .pyc at each start,
    which the cold start would count (about 60 ms for 50 modules, measured)."""
    import bot

    compileall.compile_dir(Path(bot.__file__).parent, quiet=1)


@dataclass
class Round:
    """One burst of slash commands and what came of them."""

    sent: dict[str, float] = field(default_factory=dict)
    acked: dict[str, float] = field(default_factory=dict)
    statuses: list[int] = field(default_factory=list)


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.upstream = FakeUpstream(latency=args.latency, doc_latency=args.doc_latency)
        self.slack = FakeSlackApi()
        self.runners: list[web.AppRunner] = []
        self.proc: subprocess.Popen[bytes] | None = None
        self.bot_port = 0
        self.slack_url = ""
        self.mcp_url = ""

    async def start_fakes(self) -> None:
        for app, attr in ((self.upstream.app(), "mcp_url"), (self.slack.app(), "slack_url")):
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            port = free_port()
            await web.TCPSite(runner, "127.0.0.1", port, backlog=2048).start()
            self.runners.append(runner)
            base = f"http://127.0.0.1:{port}"
            setattr(self, attr, base + ("/mcp" if attr == "mcp_url" else "/api/"))

    def bot_env(self, cap: int) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "GOOGLE_"))}
        env.update(
            SLACK_BOT_TOKEN="xoxb-bench-token",
            SLACK_SIGNING_SECRET=SIGNING_SECRET,
            SLACK_API_URL=self.slack_url,
            GOOGLE_API_KEY="bench-api-key",
            DEVELOPER_KNOWLEDGE_MCP_URL=self.mcp_url,
            PAY_MCP_URL=self.mcp_url,
            MCP_MAX_CONCURRENCY=str(cap),
            MCP_TIMEOUT_SECONDS="60",
            RATE_LIMIT_PER_USER_PER_MINUTE="0",
            # the throughput scenarios measure the bot's own cost, not answer_query's quota
            # (that is the day scenario's subject): no local quota, state in memory
            ANSWER_QUOTA_PER_MINUTE="0",
            ANSWER_QUOTA_PER_DAY="0",
            ANSWER_QUOTA_PER_USER_PER_DAY="0",
            STATE_URL="memory://",  # the store and load scenarios choose theirs (--stores)
            LOG_LEVEL="INFO",  # the production default: its per-request log line counts
            # the bench's fake Slack reads answers from chat.postMessage: not streamed
            STREAM_ANSWERS="false",
            HOST="127.0.0.1",
            GCE_METADATA_HOST="127.0.0.1:9",
            GCE_METADATA_IP="127.0.0.1:9",
            NO_GCE_CHECK="True",
        )
        return env

    async def start_bot(self, cap: int) -> float:
        """Start the bot process; seconds from spawn to the first `/healthz` 200."""
        _precompile_bot()
        self.bot_port = free_port()
        env = self.bot_env(cap)
        env["PORT"] = str(self.bot_port)
        t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "serve"],
            env=env,
            cwd=self.args.workdir,
            stdout=subprocess.DEVNULL,
            stderr=None if self.args.verbose else subprocess.DEVNULL,
        )
        await wait_healthy(self.proc, self.bot_port, t0=t0, within=30, poll=0.005)
        return time.monotonic() - t0

    def bot_cpu_seconds(self) -> float:
        """User + system CPU time the bot process has used so far."""
        assert self.proc is not None
        return process_cpu_seconds(self.proc.pid)

    def bot_rss_mb(self, field: str = "VmRSS") -> int:
        """The bot's resident memory in MB now (VmRSS) or at its highest so far (VmHWM);
        0 once the process is gone."""
        assert self.proc is not None
        return (process_memory_kb(self.proc.pid, field) or 0) // 1024

    def stop_bot(self) -> int:
        """Stop the bot; its peak RSS in MB (VmHWM) read just before."""
        assert self.proc is not None
        peak = self.bot_rss_mb("VmHWM")
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return peak

    async def burst(
        self,
        texts: list[str],
        channels: list[str],
        timeout: float,
        probes: list[tuple[str, str]] | None = None,
    ) -> tuple[Round, Round]:
        """Send one signed /gdocs per text at once; then, while those are in flight, each probe
        (text, channel) one after another; wait until every channel got its answer."""
        rnd, probe_rnd = Round(), Round()
        probes = probes or []
        self.slack.expect(len(set(channels)) + len(probes))
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:
            await asyncio.gather(
                *(
                    self._command(session, rnd, i, t, c)
                    for i, (t, c) in enumerate(zip(texts, channels, strict=True))
                )
            )
            # every burst command is acknowledged and waiting on the upstream now
            for j, (text, channel) in enumerate(probes):
                await self._command(session, probe_rnd, len(texts) + j, text, channel)
                await asyncio.sleep(0.005)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.slack.answered.wait(), timeout)
        return rnd, probe_rnd

    async def paced(
        self,
        texts: list[str],
        channels: list[str],
        rate: float,
        timeout: float,
        *,
        mentions: set[str] | None = None,
    ) -> Round:
        """Send one signed /gdocs per text at `rate` per second (open loop: on schedule, not
        after the previous answer), or an @mention for channels in `mentions`; then wait
        until every channel got its answer."""
        mentions = mentions or set()
        rnd = Round()
        self.slack.expect(len(set(channels)))
        loop = asyncio.get_running_loop()
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:
            start = loop.time() + 0.05

            async def send(i: int, text: str, channel: str) -> None:
                await asyncio.sleep(max(0.0, start + i / rate - loop.time()))  # the schedule
                send_one = self._mention if channel in mentions else self._command
                await send_one(session, rnd, i, text, channel)

            await asyncio.gather(
                *(send(i, t, c) for i, (t, c) in enumerate(zip(texts, channels, strict=True)))
            )
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.slack.answered.wait(), timeout)
        return rnd

    async def _mention(
        self, session: aiohttp.ClientSession, rnd: Round, i: int, text: str, channel: str
    ) -> None:
        """A signed Events API `app_mention` of the bot (answered in its thread)."""
        now = time.time()
        body = json.dumps(
            {
                "token": "x",
                "team_id": "T1",
                "api_app_id": "A1",
                "type": "event_callback",
                "event_id": f"Ev{uuid.uuid4().hex}",  # unique: the bot dedupes by it
                "event_time": int(now),
                "event": {
                    "type": "app_mention",
                    "user": f"U{i:05d}",
                    "text": f"<@{BOT_USER_ID}> {text}",
                    "ts": f"{now:.6f}",
                    "channel": channel,
                    "event_ts": f"{now:.6f}",
                },
            }
        )
        await self._send(session, rnd, channel, body, "application/json")

    async def _command(
        self, session: aiohttp.ClientSession, rnd: Round, i: int, text: str, channel: str
    ) -> None:
        body = urlencode(
            {
                "token": "x",
                "team_id": "T1",
                "channel_id": channel,
                "channel_name": "bench",
                "user_id": f"U{i:05d}",
                "command": "/gdocs",
                "text": text,
                "api_app_id": "A1",
                "response_url": self.slack_url.replace("/api/", f"/response/{i}"),
                "trigger_id": uuid.uuid4().hex,  # unique: the bot dedupes by it
            }
        )
        await self._send(session, rnd, channel, body, "application/x-www-form-urlencoded")

    async def _send(
        self,
        session: aiohttp.ClientSession,
        rnd: Round,
        channel: str,
        body: str,
        content_type: str,
    ) -> None:
        ts = str(int(time.time()))
        headers = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": sign(body, ts),
        }
        url = f"http://127.0.0.1:{self.bot_port}/slack/events"
        rnd.sent[channel] = time.monotonic()
        async with session.post(url, data=body, headers=headers) as resp:
            await resp.read()
            rnd.acked[channel] = time.monotonic()
            rnd.statuses.append(resp.status)

    async def cli_ask(self, question: str) -> tuple[float, float, int]:
        """Run `python -m bot ask`; (wall seconds, upstream seconds, peak RSS MB)."""
        self.upstream.reset()
        env = self.bot_env(cap=8)
        t0 = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "ask", question],
            env=env,
            cwd=self.args.workdir,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        # wait without blocking the loop that serves the fakes
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            await asyncio.sleep(0.002)
        wall = time.monotonic() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise RuntimeError(f"gdocs-bot ask exited {proc.returncode}")
        return wall, sum(self.upstream.spent.values()), int(usage.ru_maxrss) // 1024

    async def close(self) -> None:
        for runner in self.runners:
            await runner.cleanup()
