"""Fake Google documentation MCP servers, built with the official `mcp` SDK.

`FakeDeveloperKnowledge` and `FakePay` serve the real tool shapes from an in-memory corpus and
record every call. An ASGI wrapper in front of the SDK app injects faults one request at a
time (`server.faults.append(...)`), refuses the 2026 revision to force the 2025 lifecycle, and
checks credentials, so the client is tested against a real MCP peer over loopback HTTP.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from tests.fakes.serving import ThreadedServer

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass
class Fault:
    """A raw HTTP answer given instead of the real one, for one request."""

    status: int = 503
    body: bytes = b'{"error": {"code": 503, "message": "unavailable", "status": "UNAVAILABLE"}}'
    content_type: str = "application/json"
    delay: float = 0.0
    #: only requests for this tool (Mcp-Name header or params.name) take the fault
    tool: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


def google_error(code: int, status: str, message: str) -> Fault:
    body = json.dumps({"error": {"code": code, "message": message, "status": status}})
    return Fault(status=code, body=body.encode())


@dataclass
class RecordedCall:
    tool: str
    arguments: dict[str, Any]
    headers: dict[str, str]


class _FaultyASGI:
    """Sits in front of the SDK app: records, authenticates and injects faults."""

    def __init__(self, owner: _FakeServerBase, inner: Any) -> None:
        self.owner = owner
        self.inner = inner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.inner(scope, receive, send)
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        try:
            payload = json.loads(body)
        except ValueError:
            payload = {}
        method = payload.get("method", "") if isinstance(payload, dict) else ""
        params = payload.get("params") or {} if isinstance(payload, dict) else {}
        tool = params.get("name", "") if method == "tools/call" else ""
        self.owner.requests.append((method, headers))
        if method == "tools/call":
            self.owner.calls.append(RecordedCall(tool, params.get("arguments") or {}, headers))

        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return {"type": "http.disconnect"}
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        fault = self.owner._take_fault(tool)
        if fault is None:
            fault = self.owner._check(method, tool, headers, payload.get("id") if isinstance(payload, dict) else None)
        if fault is not None:
            if fault.delay:
                await asyncio.sleep(fault.delay)
            raw_headers = [(b"content-type", fault.content_type.encode())]
            raw_headers += [(k.encode(), v.encode()) for k, v in fault.headers.items()]
            await send({"type": "http.response.start", "status": fault.status, "headers": raw_headers})
            await send({"type": "http.response.body", "body": fault.body})
            return
        await self.inner(scope, replay, send)


class _FakeServerBase:
    def __init__(self, *, json_response: bool = True, stateless: bool = True) -> None:
        self.mcp = MCPServer(self.__class__.__name__)
        self.calls: list[RecordedCall] = []
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.faults: deque[Fault] = deque()
        #: answer 400/-32022 to the 2026-07-28 revision, like a server that only has sessions
        self.refuse_2026 = False
        #: seconds every tool call takes (upstream latency)
        self.latency = 0.0
        self.api_key: str | None = None
        self.bearer: str | None = None
        self._register_tools()
        inner = self.mcp.streamable_http_app(json_response=json_response, stateless_http=stateless)
        self._server = ThreadedServer(_FaultyASGI(self, inner))

    def _register_tools(self) -> None:
        raise NotImplementedError

    def _take_fault(self, tool: str) -> Fault | None:
        for i, fault in enumerate(self.faults):
            if fault.tool is None or fault.tool == tool:
                del self.faults[i]
                return fault
        return None

    def _check(self, method: str, tool: str, headers: dict[str, str], request_id: Any = None) -> Fault | None:
        if self.refuse_2026 and headers.get("mcp-protocol-version") == "2026-07-28" and method != "initialize":
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32022, "message": "Unsupported protocol version"},
                }
            )
            return Fault(status=400, body=body.encode())
        if method != "tools/call":
            return None
        if self.api_key is not None and headers.get("x-goog-api-key") != self.api_key:
            if headers.get("authorization") != f"Bearer {self.bearer}" or self.bearer is None:
                return google_error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.")
        if self.bearer is not None and self.api_key is None:
            if headers.get("authorization") != f"Bearer {self.bearer}":
                return google_error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        return None

    def tool_calls(self, tool: str) -> list[RecordedCall]:
        return [c for c in self.calls if c.tool == tool]

    def start(self) -> _FakeServerBase:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    @property
    def url(self) -> str:
        return f"{self._server.base_url}/mcp"


class FakeDeveloperKnowledge(_FakeServerBase):
    """Developer Knowledge: search_documents, get_documents, answer_query over `documents`."""

    def __init__(self, **kwargs: Any) -> None:
        #: name -> {uri, title, description, content}
        self.documents: dict[str, dict[str, str]] = {}
        #: question -> (answer markdown, referenced names); default answers cite the first doc
        self.answers: dict[str, tuple[str, list[str]]] = {}
        #: make answer_query fail as quota-exhausted in one of three forms: http, jsonrpc, result
        self.quota_exhausted: str | None = None
        self.tool_names = ("search_documents", "get_documents", "answer_query")
        super().__init__(**kwargs)

    def add_document(self, name: str, title: str, content: str, description: str = "") -> None:
        uri = "https://" + name.removeprefix("documents/")
        self.documents[name] = {"name": name, "uri": uri, "title": title, "description": description, "content": content}

    def _register_tools(self) -> None:
        server = self

        async def search_documents(query: str) -> dict[str, Any]:
            await asyncio.sleep(server.latency)
            words = [w for w in query.lower().split() if w]
            results = []
            for name, doc in server.documents.items():
                text = (doc["title"] + " " + doc["content"]).lower()
                if not words or any(w in text for w in words):
                    results.append({"parent": name, "id": f"{name}#chunk0", "content": doc["content"][:300]})
            return {"results": results[:5]}

        async def get_documents(names: list[str]) -> dict[str, Any]:
            await asyncio.sleep(server.latency)
            if len(names) > 20:
                raise ToolError("400 INVALID_ARGUMENT: at most 20 names")
            missing = [n for n in names if n not in server.documents]
            if missing:
                raise ToolError(f"404 NOT_FOUND: {missing[0]} not found")
            return {"documents": [server.documents[n] for n in names]}

        async def answer_query(query: str) -> dict[str, Any]:
            await asyncio.sleep(server.latency)
            if server.quota_exhausted == "result":
                raise ToolError("429 RESOURCE_EXHAUSTED: Quota exceeded for quota metric 'Answer generation requests per day'")
            if query in server.answers:
                text, refs = server.answers[query]
            else:
                refs = list(server.documents)[:2]
                text = f"Here is how: **{query}**. See the docs."
            return {"answerText": text, "references": refs}

        self.mcp.tool(name="search_documents", description="Search Google developer docs")(search_documents)
        self.mcp.tool(name="get_documents", description="Get documents by name (at most 20)")(get_documents)
        self.mcp.tool(name="answer_query", description="Answer a question from the docs")(answer_query)

    def _check(self, method: str, tool: str, headers: dict[str, str], request_id: Any = None) -> Fault | None:
        if tool == "answer_query" and self.quota_exhausted == "http":
            return google_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Answer generation requests per day'")
        if tool == "answer_query" and self.quota_exhausted == "jsonrpc":
            body = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32000, "message": "429 RESOURCE_EXHAUSTED: quota exceeded"}})
            return Fault(status=200, body=body.encode())
        return super()._check(method, tool, headers, request_id)


class FakePay(_FakeServerBase):
    """Google Pay & Wallet: search_documentation {userQuery, languageCode?}; OAuth only."""

    def __init__(self, **kwargs: Any) -> None:
        #: (title, uri, content)
        self.pages: list[tuple[str, str, str]] = []
        super().__init__(**kwargs)

    def _register_tools(self) -> None:
        server = self

        async def search_documentation(userQuery: str, languageCode: str | None = None) -> dict[str, Any]:  # noqa: N803
            await asyncio.sleep(server.latency)
            words = userQuery.lower().split()
            results = [
                {"title": t, "uri": u, "content": c + (f" [{languageCode}]" if languageCode else "")}
                for t, u, c in server.pages
                if any(w in (t + " " + c).lower() for w in words)
            ]
            return {"results": results}

        self.mcp.tool(name="search_documentation", description="Search Google Pay and Wallet docs")(search_documentation)
