"""The day scenario's Slack requests: slash commands and app_mention events as Slack sends
them, signed with the bench's signing secret (bench/driver.py)."""

from __future__ import annotations

import json
import time
import uuid
from urllib.parse import urlencode

import aiohttp

from bench.driver import BOT_USER_ID, sign
from bench.replica import Replica
from bench.stream import Question


def signed_headers(body: str) -> dict[str, str]:
    ts = str(int(time.time()))
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": sign(body, ts)}


def message_ts(q: Question) -> str:
    return f"{1_700_000_000 + q.idx}.000100"


def request_for(q: Question, stream: list[Question], slack_url: str) -> tuple[str, str]:
    """The signed-to-be body of `q` as Slack sends it: a slash command or an app_mention."""
    if q.surface == "command":
        form = {
            "token": "x",
            "team_id": "T1",
            "channel_id": q.channel,
            "channel_name": "bench",
            "user_id": q.asker,
            "command": "/gdocs",
            "text": q.text,
            "api_app_id": "A1",
            "response_url": f"{slack_url}/response/{q.idx}",
            "trigger_id": f"{q.idx}.{uuid.uuid4().hex}",
        }
        return urlencode(form), "application/x-www-form-urlencoded"
    event = {
        "type": "app_mention",
        "user": q.asker,
        "text": f"<@{BOT_USER_ID}> {q.text}",
        "ts": message_ts(q),
        "channel": q.channel,
        "event_ts": message_ts(q),
    }
    if q.thread_of is not None:
        event["thread_ts"] = message_ts(stream_by_idx(stream)[q.thread_of])
    body = {
        "token": "x",
        "team_id": "T1",
        "api_app_id": "A1",
        "type": "event_callback",
        # the same for Slack's retries of this delivery: the bot dedupes by it
        "event_id": f"Ev{q.idx:05d}{uuid.uuid5(uuid.NAMESPACE_OID, q.text).hex[:8]}",
        "event_time": int(time.time()),
        "event": event,
    }
    return json.dumps(body), "application/json"


def stream_by_idx(stream: list[Question]) -> dict[int, Question]:
    return {q.idx: q for q in stream}


async def warm_up(replicas: list[Replica], slack_url: str) -> None:
    """One `/gdocs help` to each replica (its ack path and first Slack call warm, as in a
    deployed bot; no upstream call, nothing in the figures)."""
    form = {
        "token": "x",
        "team_id": "T1",
        "channel_id": "CWARM",
        "user_id": "UWARM",
        "command": "/gdocs",
        "text": "help",
        "api_app_id": "A1",
        "response_url": f"{slack_url}/response/999999",
    }
    async with aiohttp.ClientSession() as session:
        for replica in replicas:
            body = urlencode(form | {"trigger_id": uuid.uuid4().hex})
            headers = {"Content-Type": "application/x-www-form-urlencoded", **signed_headers(body)}
            async with session.post(replica.events_url, data=body, headers=headers) as resp:
                await resp.read()
