"""Light loopback fakes for the guard: they must cost next to nothing themselves.

The test suite's fakes (tests/fakes) validate every Block Kit payload and run the `mcp` SDK;
that is right for correctness and wrong for measuring a bot's own cost. So the guard has
these: a Developer Knowledge MCP server (Streamable HTTP, stateless, JSON answers) whose tools
sleep for a set latency, and a Slack Web API that counts, per channel, the messages carrying
an answer (each answer and search hit has a marker, `ANSWER-<id>` / `SEARCH-<id>`, found
in whatever the bot posts: chat.postMessage, chat.update, an ephemeral or response_url post).
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
MARKER = re.compile(r"(?:ANSWER|SEARCH)-\d+")
TOOLS = ("search_documents", "get_documents", "answer_query")


class McpServer:
    """A stateless MCP Streamable-HTTP server answering in JSON; `call` answers tools/call."""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/mcp", self._handle)
        return app

    async def _handle(self, request: web.Request) -> web.Response:
        msg = await request.json()
        method = msg.get("method", "")
        if "id" not in msg:  # a notification
            return web.Response(status=202)
        if method == "initialize":
            info = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "bench", "version": "1"},
            }
            return rpc(msg, info)
        if method == "tools/list":
            return rpc(
                msg, {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in TOOLS]}
            )
        if method != "tools/call":
            error = {"code": -32601, "message": "no"}
            return web.json_response({"jsonrpc": "2.0", "id": msg["id"], "error": error})
        params = msg.get("params") or {}
        return await self.call(msg, str(params.get("name", "")), params.get("arguments") or {})

    async def call(self, msg: dict[str, Any], tool: str, args: dict[str, Any]) -> web.Response:
        raise NotImplementedError


@dataclass
class FakeUpstream(McpServer):
    """Developer Knowledge tools with latency; counts calls per tool."""

    latency: float = 1.0
    doc_latency: float = 0.1
    calls: Counter[str] = field(default_factory=Counter)

    async def call(self, msg: dict[str, Any], tool: str, args: dict[str, Any]) -> web.Response:
        self.calls[tool] += 1
        return rpc(msg, tool_result(await self._tool(tool, args)))

    async def _tool(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        if tool == "get_documents":
            await asyncio.sleep(self.doc_latency)
            docs = [
                {
                    "name": n,
                    "uri": "https://" + n.removeprefix("documents/"),
                    "title": "Guide " + n.rsplit("/", 1)[-1],
                    "description": "",
                    "content": "# Guide\n\nRun `gcloud storage buckets create`.",
                }
                for n in args.get("names") or []
            ]
            return {"documents": docs}
        match = _QUESTION_ID.search(str(args.get("query", "")))
        qid = match.group(1) if match else "0"
        await asyncio.sleep(self.latency)
        base = f"documents/docs.cloud.google.com/bench/q{qid}"
        if tool == "answer_query":
            return {
                "answerText": f"ANSWER-{qid}: run `gcloud storage buckets create`.\n\n"
                "1. Open the console\n2. Click **Create**",
                "references": [f"{base}/a", f"{base}/b"],
            }
        hits = [
            {"parent": f"{base}/a", "id": "c1", "content": f"SEARCH-{qid} Buckets hold objects."},
            {"parent": f"{base}/b", "id": "c2", "content": "Pricing depends on class."},
        ]
        return {"results": hits}


def tool_result(structured: dict[str, Any]) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": json.dumps(structured)}],
        "structuredContent": structured,
        "isError": False,
    }


def rpc(msg: dict[str, Any], result: dict[str, Any]) -> web.Response:
    return web.json_response({"jsonrpc": "2.0", "id": msg["id"], "result": result})


@dataclass
class FakeSlack:
    """Slack Web API and `response_url`s (`/response/<channel>`): per channel, the messages
    carrying an answer (by their ts: an update of one is not another answer) and when the
    first version of each arrived (time.monotonic())."""

    answers: dict[str, dict[str, float]] = field(default_factory=lambda: defaultdict(dict))
    calls: Counter[str] = field(default_factory=Counter)
    #: set when every channel in `expect` has an answer
    answered: asyncio.Event = field(default_factory=asyncio.Event)
    waiting: set[str] = field(default_factory=set)
    _ts: int = 0

    def app(self) -> web.Application:
        app = web.Application(client_max_size=10 * 1024 * 1024)
        app.router.add_post("/api/{method}", self._api)
        app.router.add_post("/response/{channel}", self._response_url)
        return app

    def expect(self, channels: list[str]) -> None:
        self.waiting = {c for c in channels if not self.answers.get(c)}
        self.answered = asyncio.Event()
        if not self.waiting:
            self.answered.set()

    def record(self, channel: str, message: str, text: str, at: float) -> None:
        """An answer arrived in `channel` (message `message`) if `text` carries a marker."""
        if MARKER.search(text) is None:
            return
        self.answers[channel].setdefault(message, at)
        self.waiting.discard(channel)
        if not self.waiting:
            self.answered.set()

    async def _response_url(self, request: web.Request) -> web.Response:
        now = time.monotonic()
        self.calls["response_url"] += 1
        text = await request.text()
        replaces = text.startswith("{") and json.loads(text).get("replace_original") is True
        message = "original" if replaces else f"response-{self.calls['response_url']}"
        self.record(request.match_info["channel"], message, text, now)
        return web.Response(text="ok")

    async def _api(self, request: web.Request) -> web.Response:
        now = time.monotonic()
        method = request.match_info["method"]
        self.calls[method] += 1
        args = await slack_args(request)
        self._ts += 1
        ts = f"1700000000.{self._ts:06d}"
        if method in ("chat.postMessage", "chat.update", "chat.postEphemeral"):
            self.record(str(args.get("channel")), str(args.get("ts", ts)), json.dumps(args), now)
        return slack_reply(method, args, ts)


async def slack_args(request: web.Request) -> dict[str, Any]:
    """A Web API call's arguments, JSON or form."""
    if request.content_type == "application/json":
        return dict(await request.json())
    return dict(await request.post())


def slack_reply(method: str, args: dict[str, Any], ts: str) -> web.Response:
    """Slack's answer: auth.test and users.info for the bench's workspace, any other method
    ok (with `ts` as the message's, for a post)."""
    if method == "auth.test":
        bot = {"user_id": "UBOT", "bot_id": "BBOT", "team_id": "T1", "user": "gdocs"}
        return web.json_response({"ok": True, **bot})
    if method == "users.info":
        user = {"id": args.get("user"), "locale": "en-US", "tz": "Europe/Rome"}
        return web.json_response({"ok": True, "user": user})
    channel = str(args.get("channel", ""))
    return web.json_response({"ok": True, "channel": channel, "ts": ts, "message_ts": ts})
