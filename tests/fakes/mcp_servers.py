"""Fake Google documentation MCP servers, built with the official `mcp` SDK.

`FakeDeveloperKnowledge` and `FakePay` serve the real tool shapes from an in-memory corpus and
record every call. An ASGI wrapper in front of the SDK app injects faults one request at a
time (`server.faults.append(...)`), refuses the 2026 revision to force the 2025 lifecycle, and
checks credentials, so the client is tested against a real MCP peer over loopback HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from tests.fakes.quota import QuotaEnforcer
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
    #: answer `{"jsonrpc": "2.0", "id": <the request's id>, "result": rpc_result}` instead of `body`
    rpc_result: dict[str, Any] | None = None
    #: send the body as these chunks, `chunk_delay` apart; `$ID` becomes the request's id
    chunks: list[bytes] | None = None
    chunk_delay: float = 0.0
    #: repeat `chunks` until the client goes away (an SSE stream that never answers)
    endless: bool = False
    #: drop the connection after the chunks instead of finishing the response
    reset: bool = False
    #: bytes of this fault's body the fake managed to send, and whether it sent them all
    sent: int = 0
    finished: bool = False


def google_error(code: int, status: str, message: str) -> Fault:
    body = json.dumps({"error": {"code": code, "message": message, "status": status}})
    return Fault(status=code, body=body.encode())


@dataclass
class RecordedCall:
    tool: str
    arguments: dict[str, Any]
    headers: dict[str, str]
    #: params._meta as sent (the 2026-07-28 envelope)
    meta: dict[str, Any] = field(default_factory=dict)


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
            meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
            self.owner.calls.append(
                RecordedCall(tool, params.get("arguments") or {}, headers, meta)
            )

        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                # the body is consumed; what comes next is the real disconnect, which SSE
                # responses wait for (answering it at once would abort every stream)
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        request_id = payload.get("id") if isinstance(payload, dict) else None
        fault = self.owner._take_fault(tool)
        if fault is None:
            fault = self.owner._check(method, tool, headers, request_id)
        if fault is not None:
            await _send_fault(fault, request_id, receive, send)
            return
        if method == "tools/call":
            with self.owner._tracking():
                await self.inner(scope, replay, send)
            return
        await self.inner(scope, replay, send)


async def _send_fault(fault: Fault, request_id: Any, receive: Receive, send: Send) -> None:
    if fault.delay:
        await asyncio.sleep(fault.delay)
    raw_headers = [(b"content-type", fault.content_type.encode())]
    raw_headers += [(k.encode(), v.encode()) for k, v in fault.headers.items()]
    await send({"type": "http.response.start", "status": fault.status, "headers": raw_headers})
    if fault.chunks is None:
        body = fault.body
        if fault.rpc_result is not None:
            body = json.dumps(
                {"jsonrpc": "2.0", "id": request_id, "result": fault.rpc_result}
            ).encode()
        await send({"type": "http.response.body", "body": body})
        fault.sent, fault.finished = len(body), True
        return
    gone = asyncio.Event()

    async def watch_disconnect() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        gone.set()

    watcher = asyncio.create_task(watch_disconnect())
    rid = json.dumps(request_id).encode()
    try:
        for _ in range(100_000 if fault.endless else 1):
            for chunk in fault.chunks:
                if gone.is_set():
                    return
                chunk = chunk.replace(b"$ID", rid)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                fault.sent += len(chunk)
                if fault.chunk_delay:
                    await asyncio.sleep(fault.chunk_delay)
        if fault.reset:
            # an exception after the response started makes uvicorn drop the connection
            raise ConnectionResetError("fault: connection reset mid-stream")
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        fault.finished = True
    finally:
        watcher.cancel()


class _FakeServerBase:
    def __init__(
        self,
        *,
        json_response: bool = True,
        stateless: bool = True,
        structured_output: bool | None = None,
    ) -> None:
        #: False: tools answer with text content only (no structuredContent)
        self.structured_output = structured_output
        #: tool calls being served now, and the most at once
        self.in_flight = 0
        self.max_in_flight = 0
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

    def _check(
        self, method: str, tool: str, headers: dict[str, str], request_id: Any = None
    ) -> Fault | None:
        if (
            self.refuse_2026
            and headers.get("mcp-protocol-version") == "2026-07-28"
            and method != "initialize"
        ):
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
        key_ok = self.api_key is None or headers.get("x-goog-api-key") == self.api_key
        bearer = headers.get("authorization")
        bearer_ok = self.bearer is not None and bearer == f"Bearer {self.bearer}"
        if not key_ok and not bearer_ok:
            return google_error(
                400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."
            )
        if self.bearer is not None and self.api_key is None and not bearer_ok:
            return google_error(
                401, "UNAUTHENTICATED", "Request had invalid authentication credentials."
            )
        return None

    @contextlib.contextmanager
    def _tracking(self) -> Iterator[None]:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            yield
        finally:
            self.in_flight -= 1

    def expire_sessions(self) -> None:
        """Forget every 2025 session, as a restarted server would: their ids now answer 404."""
        self.mcp.session_manager._server_instances.clear()

    def requests_for(self, method: str) -> list[dict[str, str]]:
        """Headers of every request of `method` (initialize, tools/list, tools/call…)."""
        return [h for m, h in self.requests if m == method]

    def _add_tool(self, fn: Callable[..., Any], name: str, description: str) -> None:
        self.mcp.tool(name=name, description=description, structured_output=self.structured_output)(
            fn
        )

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

    def __init__(
        self,
        *,
        tool_names: tuple[str, ...] = ("search_documents", "get_documents", "answer_query"),
        **kwargs: Any,
    ) -> None:
        #: name -> {uri, title, description, content}
        self.documents: dict[str, dict[str, str]] = {}
        #: question -> (answer markdown, referenced names); default answers cite the first doc
        self.answers: dict[str, tuple[str, list[str]]] = {}
        #: make answer_query fail as quota-exhausted in one of three forms: http, jsonrpc, result
        self.quota_exhausted: str | None = None
        #: enforce answer_query's per-minute and per-day quota (tests/fakes/quota.py)
        self.quota: QuotaEnforcer | None = None
        #: tools to expose; older revisions had search_document_chunks, batch_get_documents and
        #: get_document
        self.tool_names = tool_names
        #: answer_query waits until this is set (a held answer, for Stop tests)
        self.answer_gate: threading.Event | None = None
        #: answer_query calls waiting at the gate now
        self.answers_held = 0
        super().__init__(**kwargs)

    def add_document(self, name: str, title: str, content: str, description: str = "") -> None:
        uri = "https://" + name.removeprefix("documents/")
        self.documents[name] = {
            "name": name,
            "uri": uri,
            "title": title,
            "description": description,
            "content": content,
        }

    def _register_tools(self) -> None:
        server = self

        async def search_documents(query: str) -> dict[str, Any]:
            await asyncio.sleep(server.latency)
            words = [w for w in query.lower().split() if w]
            results = []
            for name, doc in server.documents.items():
                text = (doc["title"] + " " + doc["content"]).lower()
                if not words or any(w in text for w in words):
                    results.append(
                        {"parent": name, "id": f"{name}#chunk0", "content": doc["content"][:300]}
                    )
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
            gate = server.answer_gate
            if gate is not None:
                server.answers_held += 1
                try:
                    await asyncio.to_thread(gate.wait, 30.0)
                finally:
                    server.answers_held -= 1
            if server.quota is not None and server.quota.form == "result":
                refusal = server.quota.admit()
                if refusal is not None:
                    raise ToolError(server.quota.message(refusal))
            if server.quota_exhausted == "result":
                raise ToolError(
                    "429 RESOURCE_EXHAUSTED: Quota exceeded for quota metric "
                    "'Answer generation requests per day'"
                )
            if query in server.answers:
                text, refs = server.answers[query]
            else:
                refs = list(server.documents)[:2]
                text = f"Here is how: **{query}**. See the docs."
            return {"answerText": text, "references": refs}

        async def get_document(name: str) -> dict[str, Any]:
            await asyncio.sleep(server.latency)
            if name not in server.documents:
                raise ToolError(f"404 NOT_FOUND: {name} not found")
            return server.documents[name]

        variants: dict[str, tuple[Callable[..., Any], str]] = {
            "search_documents": (search_documents, "Search Google developer docs"),
            "search_document_chunks": (search_documents, "Search chunks of Google developer docs"),
            "get_documents": (get_documents, "Get documents by name (at most 20)"),
            "batch_get_documents": (get_documents, "Get documents by name (at most 20)"),
            "get_document": (get_document, "Get one document by name"),
            "answer_query": (answer_query, "Answer a question from the docs"),
        }
        for name in self.tool_names:
            fn, description = variants[name]
            self._add_tool(fn, name, description)

    def _check(
        self, method: str, tool: str, headers: dict[str, str], request_id: Any = None
    ) -> Fault | None:
        if tool == "answer_query" and self.quota_exhausted == "http":
            return google_error(
                429,
                "RESOURCE_EXHAUSTED",
                "Quota exceeded for quota metric 'Answer generation requests per day'",
            )
        if tool == "answer_query" and self.quota_exhausted == "jsonrpc":
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32000, "message": "429 RESOURCE_EXHAUSTED: quota exceeded"},
                }
            )
            return Fault(status=200, body=body.encode())
        refused = super()._check(method, tool, headers, request_id)
        if refused is None and tool == "answer_query" and self.quota is not None:
            refused = _quota_fault(self.quota, request_id)
        return refused


def _quota_fault(quota: QuotaEnforcer, request_id: Any) -> Fault | None:
    """Google's 429 as an HTTP error or a JSON-RPC error (the tool itself sends the third
    form, a result with isError), when the quota refuses this call."""
    if quota.form == "result":
        return None
    refusal = quota.admit()
    if refusal is None:
        return None
    if quota.form == "http":
        return Fault(status=429, body=quota.http_body(refusal))
    body = {"jsonrpc": "2.0", "id": request_id, "error": quota.rpc_error(refusal)}
    return Fault(status=200, body=json.dumps(body).encode())


class FakePay(_FakeServerBase):
    """Google Pay & Wallet: search_documentation {userQuery, languageCode?}; OAuth only."""

    def __init__(self, **kwargs: Any) -> None:
        #: (title, uri, content)
        self.pages: list[tuple[str, str, str]] = []
        super().__init__(**kwargs)

    def _register_tools(self) -> None:
        server = self

        async def search_documentation(
            userQuery: str, languageCode: str | None = None
        ) -> dict[str, Any]:
            await asyncio.sleep(server.latency)
            words = userQuery.lower().split()
            results = [
                {
                    "title": t,
                    "uri": u,
                    "content": c + (f" [{languageCode}]" if languageCode else ""),
                }
                for t, u, c in server.pages
                if any(w in (t + " " + c).lower() for w in words)
            ]
            return {"results": results}

        self._add_tool(
            search_documentation, "search_documentation", "Search Google Pay and Wallet docs"
        )
