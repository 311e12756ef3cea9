"""The day scenario's Developer Knowledge server: Google's answer_query quota, for real.

A light MCP Streamable-HTTP server (stateless, JSON answers, like bench/fakes.py) whose
answer_query is admitted or refused by the test suite's `QuotaEnforcer` (tests/fakes/quota.py:
N per rolling minute, M per day) with the real clock, and whose refusals are Google's three
forms in turn: HTTP 429 with the `google.rpc` details, a JSON-RPC error carrying the same JSON,
and a tool result with `isError: true` whose text is Google's message only.

Every call is recorded with the topic it was about (bench/stream.py's ground truth, found from
the query text), when it arrived and when its answer was ready, so the driver can subtract
upstream time per question and tell reuse from fresh calls. Answers and search hits carry a
marker with their topic (`GENANSWER-t03`, `SEARCHHIT-t03`), which the fake Slack reads back
from the posted message: that is how a posted answer is classified, and a wrong merge seen.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from bench.driver import question_key
from bench.fakes import McpServer, rpc, tool_result
from tests.fakes.quota import QuotaEnforcer

#: how the bot joins a follow-up to its thread's question (bot/slack/flows/routing.py)
FOLLOW_UP_JOIN = " — follow-up: "
FORMS = ("http", "jsonrpc", "result")
#: no \b in front: in a posted message's JSON the marker often follows an escaped "\n"
MARKER = re.compile(r"(GENANSWER|SEARCHHIT|TEAMANSWER)-([a-z]\d\d|unknown)\b")


@dataclass(frozen=True)
class Call:
    tool: str
    topic: str
    arrived: float  # time.monotonic()
    ready: float
    #: "minute" / "day" when the quota refused it, None when admitted (or not answer_query)
    refused: str | None = None
    form: str | None = None
    #: a follow-up's query carried its thread's question
    with_context: bool = False


def run_clock(noon: datetime | None = None) -> Any:
    """Real seconds from a fixed Pacific noon: real minute windows, and a "day" (the run)
    that never crosses Pacific midnight, whenever the benchmark runs."""
    start = time.monotonic()
    base = noon or datetime(2026, 6, 15, 19, 0, tzinfo=UTC)  # 12:00 in Los Angeles (PDT)
    return lambda: base + timedelta(seconds=time.monotonic() - start)


@dataclass
class DayUpstream(McpServer):
    """Developer Knowledge tools with latency and the quota; records every call."""

    quota: QuotaEnforcer
    #: exact question text (whitespace collapsed) -> topic id
    topics: dict[str, str]
    answer_latency: float = 2.0
    search_latency: float = 0.5
    doc_latency: float = 0.1
    calls: list[Call] = field(default_factory=list)
    #: queries no topic was found for (a driver bug if not zero)
    unknown: int = 0
    _by_key: dict[str, str] = field(default_factory=dict)
    _refusals: int = 0

    def __post_init__(self) -> None:
        owners: dict[str, set[str]] = {}
        for text, topic in self.topics.items():
            owners.setdefault(question_key(text), set()).add(topic)
        # a key owned by one topic finds that topic for a query the bot rewrote in form
        self._by_key = {k: next(iter(v)) for k, v in owners.items() if len(v) == 1}

    def topic_of(self, query: str) -> tuple[str, bool]:
        """(topic, whether a follow-up's thread question came with it)."""
        with_context = FOLLOW_UP_JOIN in query
        own = query.rsplit(FOLLOW_UP_JOIN, 1)[-1]
        text = " ".join(own.split())
        topic = self.topics.get(text) or self._by_key.get(question_key(text))
        if topic is None:
            self.unknown += 1
            return "unknown", with_context
        return topic, with_context

    async def call(self, msg: dict[str, Any], tool: str, args: dict[str, Any]) -> web.Response:
        if tool == "get_documents":
            return await self._documents(msg, list(args.get("names") or []))
        query = str(args.get("query") or args.get("userQuery") or "")
        topic, with_context = self.topic_of(query)
        arrived = time.monotonic()
        if tool == "answer_query":
            refusal = self.quota.admit()
            if refusal is not None:
                return await self._refuse(msg, refusal, topic, arrived, with_context)
            await asyncio.sleep(self.answer_latency)
            self._record(tool, topic, arrived, with_context=with_context)
            base = f"documents/docs.cloud.google.com/bench/{topic}"
            answer = {
                "answerText": f"GENANSWER-{topic}: run `gcloud storage buckets create`.\n\n"
                "1. Open the console\n2. Click **Create**",
                "references": [f"{base}/a", f"{base}/b"],
            }
            return rpc(msg, tool_result(answer))
        await asyncio.sleep(self.search_latency)
        self._record(tool, topic, arrived, with_context=with_context)
        base = f"documents/docs.cloud.google.com/bench/{topic}"
        hits = [
            {
                "parent": f"{base}/a",
                "id": "c1",
                "content": f"SEARCHHIT-{topic} Buckets hold objects.",
            },
            {"parent": f"{base}/b", "id": "c2", "content": f"SEARCHHIT-{topic} Pricing by class."},
        ]
        return rpc(msg, tool_result({"results": hits}))

    async def _refuse(
        self, msg: dict[str, Any], refusal: Any, topic: str, arrived: float, with_context: bool
    ) -> web.Response:
        form = FORMS[self._refusals % len(FORMS)]
        self._refusals += 1
        await asyncio.sleep(0.02)  # Google refuses at once
        self._record("answer_query", topic, arrived, refusal.limit, form, with_context)
        if form == "http":
            body = self.quota.http_body(refusal)
            return web.Response(status=429, body=body, content_type="application/json")
        if form == "jsonrpc":
            error = self.quota.rpc_error(refusal)
            return web.json_response({"jsonrpc": "2.0", "id": msg["id"], "error": error})
        text = self.quota.message(refusal)
        result = {"content": [{"type": "text", "text": text}], "isError": True}
        return rpc(msg, result)

    async def _documents(self, msg: dict[str, Any], names: list[str]) -> web.Response:
        arrived = time.monotonic()
        await asyncio.sleep(self.doc_latency)
        for topic in {n.split("/bench/", 1)[-1].split("/", 1)[0] for n in names}:
            self._record("get_documents", topic, arrived)
        docs = [
            {
                "name": n,
                "uri": "https://" + n.removeprefix("documents/"),
                "title": "Guide " + n.split("/bench/", 1)[-1].replace("/", " "),
                "description": "",
                "content": "# Guide\n\nSome content.",
            }
            for n in names
        ]
        return rpc(msg, tool_result({"documents": docs}))

    def _record(
        self,
        tool: str,
        topic: str,
        arrived: float,
        refused: str | None = None,
        form: str | None = None,
        with_context: bool = False,
    ) -> None:
        self.calls.append(Call(tool, topic, arrived, time.monotonic(), refused, form, with_context))

    # --- what the report asks ------------------------------------------------------------
    def admitted(self, tool: str = "answer_query") -> list[Call]:
        return [c for c in self.calls if c.tool == tool and c.refused is None]

    def refused(self) -> list[Call]:
        return [c for c in self.calls if c.refused is not None]

    def peak_search_bucket(self) -> int:
        """The most answer_query + search_documents calls in any 60 s (Google's search bucket,
        100 a minute, takes both)."""
        times = sorted(
            c.arrived for c in self.calls if c.tool in ("answer_query", "search_documents")
        )
        best, lo = 0, 0
        for hi, t in enumerate(times):
            while times[lo] <= t - 60:
                lo += 1
            best = max(best, hi - lo + 1)
        return best
