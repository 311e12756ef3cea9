"""What every scenario shares: signed Slack requests, /proc readings, loopback servers."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import platform
import socket
import subprocess
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
from aiohttp import web

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


def median(values: list[float]) -> float:
    return pct(values, 50)


def question_key(text: str) -> str:
    """The bot's own question key, for the day's labels only: imported when first needed,
    so that the other scenarios drive the bot from outside (and run while `bot` is broken)."""
    from bot.upstream import question_key as key

    return key(text)


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time process `pid` has used so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_memory_kb(pid: int, field: str) -> int | None:
    """`VmRSS` (resident now) or `VmHWM` (the most so far) of `pid` in KB; None once gone."""
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


async def serve(app: web.Application, runners: list[web.AppRunner]) -> str:
    """Serve `app` on a free loopback port; its base URL."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port, backlog=2048).start()
    runners.append(runner)
    return f"http://127.0.0.1:{port}"


async def wait_healthy(
    proc: subprocess.Popen[bytes], port: int, *, t0: float, within: float, name: str
) -> None:
    """Until the process answers `GET /healthz` 200, polled every 5 ms (RuntimeError: it
    exited, or `within` seconds from `t0` passed)."""
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
            await asyncio.sleep(0.005)
    raise RuntimeError(f"{name}: the bot did not become healthy in {within:g} s")


def signed_headers(body: str, content_type: str) -> dict[str, str]:
    ts = str(int(time.time()))
    base = f"v0:{ts}:{body}".encode()
    signature = "v0=" + hmac.new(SIGNING_SECRET.encode(), base, hashlib.sha256).hexdigest()
    return {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": signature,
    }


def command(text: str, channel: str, user: str, response_url: str) -> tuple[str, str]:
    """A `/gdocs` slash command as Slack sends it: (body, content type)."""
    form = {
        "token": "x",
        "team_id": "T1",
        "channel_id": channel,
        "channel_name": "bench",
        "user_id": user,
        "command": "/gdocs",
        "text": text,
        "api_app_id": "A1",
        "response_url": response_url,
        "trigger_id": uuid.uuid4().hex,  # unique: the bot dedupes by it
    }
    return urlencode(form), "application/x-www-form-urlencoded"


def mention(
    text: str, channel: str, user: str, ts: str, *, thread_ts: str | None = None, event_id: str = ""
) -> tuple[str, str]:
    """An Events API `app_mention` of the bot as Slack sends it: (body, content type)."""
    event = {
        "type": "app_mention",
        "user": user,
        "text": f"<@{BOT_USER_ID}> {text}",
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
    }
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    body = {
        "token": "x",
        "team_id": "T1",
        "api_app_id": "A1",
        "type": "event_callback",
        "event_id": event_id or f"Ev{uuid.uuid4().hex}",  # the bot dedupes by it
        "event_time": int(time.time()),
        "event": event,
    }
    return json.dumps(body), "application/json"


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} cores, {cpu}; Python {platform.python_version()} on "
        f"{platform.system()} {platform.machine()}"
    )
