"""Lightweight loopback fakes for the benchmark: they must cost next to nothing themselves.

The test suite's fakes (tests/fakes) validate every Block Kit payload and run the `mcp` SDK;
that is right for correctness and wrong for measuring the bot's own overhead, so the benchmark
has these: an MCP Streamable-HTTP server (stateless, JSON answers) whose tools sleep for a
configured latency, and a Slack Web API that only timestamps what arrives.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

_QUESTION_ID = re.compile(r"\bq(\d+)\b")


@dataclass
class FakeUpstream:
    """Developer Knowledge MCP tools with latency; records calls and upstream time per question."""

    latency: float = 1.0
    doc_latency: float = 0.1
    calls: Counter[str] = field(default_factory=Counter)
    #: question id -> seconds the upstream spent on it (on its critical path), measured from
    #: a call's arrival to its answer being ready: a late timer is the upstream's time too
    spent: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    #: question id -> tool -> (arrival, answer ready), monotonic
    marks: dict[str, dict[str, tuple[float, float]]] = field(
        default_factory=lambda: defaultdict(dict)
    )
    in_flight: int = 0
    max_in_flight: int = 0
    #: (monotonic time, calls in flight including this one) at the start of every tool call
    in_flight_seen: list[tuple[float, int]] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/mcp", self._handle)
        return app

    def reset(self) -> None:
        self.calls.clear()
        self.spent.clear()
        self.marks.clear()
        self.max_in_flight = 0
        self.in_flight_seen.clear()

    async def _handle(self, request: web.Request) -> web.Response:
        msg = await request.json()
        method = msg.get("method", "")
        if "id" not in msg:  # a notification
            return web.Response(status=202)
        if method == "tools/list":
            tools = [
                {"name": n, "inputSchema": {"type": "object"}}
                for n in ("search_documents", "get_documents", "answer_query")
            ]
            return web.json_response(
                {"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": tools}}
            )
        if method == "initialize":
            info = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "bench", "version": "1"},
            }
            return web.json_response({"jsonrpc": "2.0", "id": msg["id"], "result": info})
        if method != "tools/call":
            return web.json_response(
                {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}
            )
        params = msg.get("params") or {}
        tool = params.get("name", "")
        args = params.get("arguments") or {}
        self.calls[tool] += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self.in_flight_seen.append((time.monotonic(), self.in_flight))
        try:
            return self._result(msg, await self._tool(tool, args))
        finally:
            self.in_flight -= 1

    async def _tool(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        arrived = time.monotonic()
        if tool == "get_documents":
            names = list(args.get("names") or [])
            await asyncio.sleep(self.doc_latency)
            for qid in {m.group(1) for n in names if (m := _QUESTION_ID.search(n))}:
                self._mark(qid, tool, arrived)
            docs = [
                {
                    "name": n,
                    "uri": "https://" + n.removeprefix("documents/"),
                    "title": "Guide " + n.rsplit("/", 1)[-1],
                    "description": "",
                    "content": "# Guide\n\nSome content.",
                }
                for n in names
            ]
            return {"documents": docs}
        query = str(args.get("query", ""))
        match = _QUESTION_ID.search(query)
        qid = match.group(1) if match else "shared"
        await asyncio.sleep(self.latency)
        self._mark(qid, tool, arrived)
        base = f"documents/docs.cloud.google.com/bench/q{qid}"
        if tool == "answer_query":
            return {
                "answerText": f"To do that (q{qid}), run `gcloud storage buckets create`.\n\n"
                "1. Open the console\n2. Click **Create**",
                "references": [f"{base}/a", f"{base}/b"],
            }
        return {
            "results": [
                {"parent": f"{base}/a", "id": "c1", "content": "Buckets hold objects."},
                {"parent": f"{base}/b", "id": "c2", "content": "Pricing depends on class."},
            ]
        }

    def _mark(self, qid: str, tool: str, arrived: float) -> None:
        ready = time.monotonic()
        self.spent[qid] += ready - arrived
        self.marks[qid][tool] = (arrived, ready)

    @staticmethod
    def _result(msg: dict[str, Any], structured: dict[str, Any]) -> web.Response:
        result = {
            "content": [{"type": "text", "text": json.dumps(structured)}],
            "structuredContent": structured,
            "isError": False,
        }
        return web.json_response({"jsonrpc": "2.0", "id": msg["id"], "result": result})


@dataclass
class FakeSlackApi:
    """Slack Web API + response_url endpoint; timestamps every call (time.monotonic())."""

    #: channel -> monotonic time of the first chat.postMessage there
    posted: dict[str, float] = field(default_factory=dict)
    calls: Counter[str] = field(default_factory=Counter)
    answered: asyncio.Event = field(default_factory=asyncio.Event)
    expected: int = 0
    _ts: int = 0

    def app(self) -> web.Application:
        app = web.Application(client_max_size=10 * 1024 * 1024)
        app.router.add_post("/api/{method}", self._api)
        app.router.add_post("/response/{rid}", self._response_url)
        return app

    def expect(self, count: int) -> None:
        self.posted.clear()
        self.expected = count
        self.answered = asyncio.Event()

    async def _response_url(self, request: web.Request) -> web.Response:
        await request.read()
        self.calls["response_url"] += 1
        return web.Response(text="ok")

    async def _api(self, request: web.Request) -> web.Response:
        now = time.monotonic()
        method = request.match_info["method"]
        self.calls[method] += 1
        if request.content_type == "application/json":
            args = await request.json()
        else:
            args = dict(await request.post())
        self._ts += 1
        if method == "chat.postMessage":
            channel = str(args.get("channel"))
            if channel not in self.posted:
                self.posted[channel] = now
                if len(self.posted) >= self.expected:
                    self.answered.set()
            return web.json_response({"ok": True, "channel": channel, "ts": f"1.{self._ts}"})
        if method == "auth.test":
            return web.json_response(
                {"ok": True, "user_id": "UBOT", "bot_id": "BBOT", "team_id": "T1", "user": "gdocs"}
            )
        if method == "users.info":
            return web.json_response(
                {"ok": True, "user": {"id": args.get("user"), "locale": "en-US"}}
            )
        return web.json_response({"ok": True, "ts": f"1.{self._ts}"})
