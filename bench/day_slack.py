"""The day scenario's Slack Web API: records what each question got, and when.

Like bench/fakes.py's FakeSlack it costs next to nothing, but it keeps what was posted:
each `chat.postMessage` (and `response_url` post) is read for the markers the fake Developer
Knowledge server puts in answers and search hits (`GENANSWER-<topic>`, `SEARCHHIT-<topic>`),
and given to the question it answers: a command's by its own channel or `response_url`, a
mention's by its thread (a follow-up shares its root's thread: the answer about the
follow-up's topic is the follow-up's). Posts without a marker are notices (a wait note, an
error) and are kept apart.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from aiohttp import web

from bench.day_upstream import MARKER
from bench.fakes import slack_args, slack_reply


@dataclass(frozen=True)
class Posted:
    at: float  # time.monotonic()
    #: generated | team (a team answer, bench/day_team.py) | search | notice
    kind: str
    topic: str | None
    #: how it reached Slack: chat.postMessage, response_url, chat.postEphemeral
    via: str
    text: str = ""


@dataclass
class Asked:
    """What the fake knows of one question (registered by the driver before it is sent)."""

    idx: int
    topic: str
    sent: float | None = None
    answers: list[Posted] = field(default_factory=list)
    notices: list[Posted] = field(default_factory=list)
    answered: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class RecordingSlack:
    asked: dict[int, Asked] = field(default_factory=dict)
    #: (channel, thread ts or None) -> questions asked there, in order
    places: dict[tuple[str, str | None], list[int]] = field(
        default_factory=lambda: defaultdict(list)
    )
    calls: Counter[str] = field(default_factory=Counter)
    _ts: int = 0

    def app(self) -> web.Application:
        app = web.Application(client_max_size=10 * 1024 * 1024)
        app.router.add_post("/api/{method}", self._api)
        app.router.add_post("/response/{idx}", self._response_url)
        return app

    def expect(self, idx: int, topic: str, channel: str, thread_ts: str | None) -> Asked:
        asked = self.asked[idx] = Asked(idx, topic)
        self.places[(channel, thread_ts)].append(idx)
        return asked

    async def _response_url(self, request: web.Request) -> web.Response:
        now = time.monotonic()
        body = (await request.read()).decode("utf-8", errors="replace")
        self.calls["response_url"] += 1
        idx = int(request.match_info["idx"])
        if idx in self.asked and not _deletes(body):
            self._give(self.asked[idx], _classify(now, body, "response_url"))
        return web.Response(text="ok")

    async def _api(self, request: web.Request) -> web.Response:
        now = time.monotonic()
        method = request.match_info["method"]
        self.calls[method] += 1
        args = await slack_args(request)
        self._ts += 1
        ts = f"1700000000.{self._ts:06d}"
        if method in ("chat.postMessage", "chat.postEphemeral"):
            channel, thread = str(args.get("channel")), args.get("thread_ts")
            posted = _classify(now, json.dumps(args), method)
            self._to_question(channel, str(thread) if thread else None, posted)
        return slack_reply(method, args, ts)

    def _to_question(self, channel: str, thread: str | None, posted: Posted) -> None:
        here = [self.asked[i] for i in self.places.get((channel, thread), []) if i in self.asked]
        sent = [a for a in here if a.sent is not None and a.sent <= posted.at]
        if not sent:
            return
        if posted.kind == "notice":
            # a notice goes to the latest question there still waiting, else the latest
            waiting = [a for a in sent if not a.answers]
            (waiting or sent)[-1].notices.append(posted)
            return
        same = [a for a in sent if a.topic == posted.topic]
        fresh = [a for a in same if not a.answers] or [a for a in sent if not a.answers]
        self._give((fresh or same or sent)[0 if fresh else -1], posted)

    @staticmethod
    def _give(asked: Asked, posted: Posted) -> None:
        if posted.kind == "notice":
            asked.notices.append(posted)
            return
        asked.answers.append(posted)
        asked.answered.set()


def _deletes(body: str) -> bool:
    """A `response_url` post that takes the progress note down (no content of its own)."""
    try:
        data = json.loads(body)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("delete_original") is True


def _classify(now: float, body: str, via: str) -> Posted:
    found = MARKER.findall(body)
    generated = [topic for kind, topic in found if kind == "GENANSWER"]
    if generated:
        return Posted(now, "generated", generated[0], via)
    team = [topic for kind, topic in found if kind == "TEAMANSWER"]
    if team:
        return Posted(now, "team", team[0], via)
    if found:
        return Posted(now, "search", found[0][1], via)
    return Posted(now, "notice", None, via, body[:600])
