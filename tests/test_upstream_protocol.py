"""The MCP client speaks every server form: 2026-07-28 stateless, the 2025 session lifecycle,
JSON and SSE answers, structured and text results, and the older tool names."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from aiohttp import web

import bot
from bot.errors import AuthError
from bot.render import error_sentence
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, Fault
from tests.fakes.upstream import service_for, settings_for

BUCKETS = "documents/docs.cloud.google.com/storage/docs/creating-buckets"
PRICING = "documents/firebase.google.com/docs/firestore/pricing"


def _dk(**kwargs: object) -> FakeDeveloperKnowledge:
    server = FakeDeveloperKnowledge(**kwargs)  # type: ignore[arg-type]
    server.api_key = "test-key"
    server.add_document(BUCKETS, "Create buckets", "Use gcloud storage buckets create.")
    server.add_document(PRICING, "Cloud Firestore pricing", "Firestore bills reads and writes.")
    return server


@pytest.fixture
def session_dk() -> Iterator[FakeDeveloperKnowledge]:
    """A 2025-only server with sessions, answering in SSE."""
    server = _dk(json_response=False, stateless=False)
    server.refuse_2026 = True
    server.start()
    yield server
    server.stop()


@pytest.mark.parametrize("json_response", [True, False], ids=["json", "sse"])
@pytest.mark.parametrize("stateless", [True, False], ids=["stateless", "sessions"])
@pytest.mark.parametrize("refuse_2026", [False, True], ids=["2026", "2025-only"])
async def test_search_works_with_every_server_form(
    json_response: bool, stateless: bool, refuse_2026: bool
) -> None:
    """JSON or SSE, stateless or with sessions, 2026 or 2025 only: the search answers the same."""
    server = _dk(json_response=json_response, stateless=stateless)
    server.refuse_2026 = refuse_2026
    server.start()
    try:
        async with service_for(settings_for(server)) as service:
            answer = await service.search("gcloud buckets")
    finally:
        server.stop()
    assert [("Create buckets", "https://docs.cloud.google.com/storage/docs/creating-buckets")] == [
        (hit.title, hit.uri) for hit in answer.hits
    ]


async def test_sends_the_2026_revision_headers_and_envelope(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Every call carries MCP-Protocol-Version, Mcp-Method, Mcp-Name and the _meta envelope."""
    async with service_for(settings_for(dk_server)) as service:
        await service.search("buckets")
    call = dk_server.tool_calls("search_documents")[0]
    assert "2026-07-28" == call.headers["mcp-protocol-version"]
    assert "tools/call" == call.headers["mcp-method"]
    assert "search_documents" == call.headers["mcp-name"]
    assert "test-key" == call.headers["x-goog-api-key"]
    assert call.headers["user-agent"].startswith("gdocs-bot/")  # names us in Google's logs
    assert "gzip" in call.headers["accept-encoding"]
    assert "2026-07-28" == call.meta["io.modelcontextprotocol/protocolVersion"]
    assert {} == call.meta["io.modelcontextprotocol/clientCapabilities"]
    assert [] == dk_server.requests_for("initialize")
    assert "tools/list" == dk_server.requests_for("tools/list")[0]["mcp-method"]


async def test_falls_back_to_the_2025_lifecycle_and_remembers_it(
    session_dk: FakeDeveloperKnowledge,
) -> None:
    """A server refusing 2026-07-28 gets initialize once, then the session on every request."""
    async with service_for(settings_for(session_dk)) as service:
        await service.search("buckets")
        await service.search("firestore")
    assert 1 == len(session_dk.requests_for("initialize"))
    assert 1 == len(session_dk.requests_for("notifications/initialized"))
    refused = [h for _, h in session_dk.requests if h.get("mcp-protocol-version") == "2026-07-28"]
    assert 1 == len(refused), "the 2026 attempt is made once, then the choice is remembered"
    calls = session_dk.tool_calls("search_documents")
    assert all(c.headers.get("mcp-session-id") for c in calls)
    assert {"2025-11-25"} == {c.headers["mcp-protocol-version"] for c in calls}


async def test_initializes_again_once_when_the_session_expires(
    session_dk: FakeDeveloperKnowledge,
) -> None:
    """404 on a session request means it expired: a new session, and the call succeeds."""
    async with service_for(settings_for(session_dk)) as service:
        await service.search("buckets")
        first_session = session_dk.tool_calls("search_documents")[0].headers["mcp-session-id"]
        session_dk.expire_sessions()
        answer = await service.search("firestore")
    assert "Cloud Firestore pricing" == answer.hits[0].title
    assert 2 == len(session_dk.requests_for("initialize"))
    assert first_session != session_dk.tool_calls("search_documents")[-1].headers["mcp-session-id"]


async def test_a_second_404_after_initializing_again_is_an_error(
    session_dk: FakeDeveloperKnowledge,
) -> None:
    """Initialize again happens once per expiry, not in a loop."""
    async with service_for(settings_for(session_dk)) as service:
        await service.search("buckets")
        session_dk.faults.extend([Fault(status=404, body=b"", tool="search_documents")] * 2)
        with pytest.raises(AuthError) as caught:
            await service.search("firestore")
        assert re.search("gcloud services enable", error_sentence(caught.value))
    assert 2 == len(session_dk.requests_for("initialize"))


async def test_skips_notifications_and_pings_in_an_event_stream(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Only the response whose id matches ours is taken from an SSE stream."""
    result = {"structuredContent": {"results": [{"parent": BUCKETS, "content": "from SSE"}]}}
    dk_server.faults.append(
        Fault(
            status=200,
            content_type="text/event-stream",
            tool="search_documents",
            chunks=[
                b": keep-alive\r\n\r\n",
                b'event: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress",'
                b'"params":{"progress":1}}\r\n\r\n',
                b'data: {"jsonrpc":"2.0","id":"other","result":{}}\n\n',
                b'data: {"jsonrpc":"2.0","id":99,"method":"ping"}\n\n',
                b'data: {"jsonrpc":"2.0","id":$ID,\ndata: "result":'
                + json.dumps(result).encode()
                + b"}\n\n",
            ],
        )
    )
    async with service_for(settings_for(dk_server)) as service:
        answer = await service.search("buckets")
    assert ["from SSE"] == [hit.snippet for hit in answer.hits]


@pytest.mark.parametrize("eol", [b"\r\n", b"\n", b"\r"], ids=["crlf", "lf", "cr"])
@pytest.mark.parametrize("size", [1, 3, 7], ids=lambda n: f"{n}-byte chunks")
async def test_event_streams_read_the_same_however_lines_end_and_bytes_arrive(
    dk_server: FakeDeveloperKnowledge, eol: bytes, size: int
) -> None:
    """CRLF, LF or CR line ends; chunks that split a CRLF or a UTF-8 character; data lines of
    one event joined: the answer is the same."""
    result = {"structuredContent": {"results": [{"parent": BUCKETS, "content": "café"}]}}
    body = b'data: "result":' + json.dumps(result, ensure_ascii=False).encode() + b"}"
    lines = [b": ping", b"", b'data: {"jsonrpc":"2.0","id":$ID,', body, b"", b""]
    stream = eol.join(lines)
    # "$ID" is replaced per chunk: keep it whole
    cut = stream.index(b"$ID")
    head, tail = stream[:cut], stream[cut + 3 :]
    chunks = [head[i : i + size] for i in range(0, len(head), size)] + [b"$ID"]
    chunks += [tail[i : i + size] for i in range(0, len(tail), size)]
    dk_server.faults.append(
        Fault(status=200, content_type="text/event-stream", tool="search_documents", chunks=chunks)
    )
    async with service_for(settings_for(dk_server)) as service:
        answer = await service.search("buckets")
    assert ["café"] == [hit.snippet for hit in answer.hits]


async def test_prefers_structured_content_to_the_text_block(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """When both are present, structuredContent is the result."""
    text = json.dumps({"results": [{"parent": PRICING, "content": "from text"}]})
    dk_server.faults.append(
        Fault(
            status=200,
            tool="search_documents",
            rpc_result={
                "content": [{"type": "text", "text": text}],
                "structuredContent": {"results": [{"parent": BUCKETS, "content": "structured"}]},
            },
        )
    )
    async with service_for(settings_for(dk_server)) as service:
        answer = await service.search("buckets")
    assert ["structured"] == [hit.snippet for hit in answer.hits]


async def test_reads_json_from_the_text_block_without_structured_content() -> None:
    """Tools without an output schema put their JSON in a text block; it is read from there."""
    server = _dk(structured_output=False)
    server.start()
    try:
        async with httpx.AsyncClient() as client:
            response = await client.post(
                server.url,
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "search_documents", "arguments": {"query": "firestore"}},
                },
                headers={
                    "X-Goog-Api-Key": "test-key",
                    "Accept": "application/json, text/event-stream",
                },
            )
        raw = response.json()
        async with service_for(settings_for(server)) as service:
            answer = await service.search("firestore")
    finally:
        server.stop()
    assert "structuredContent" not in raw["result"], "premise: the server sends text only"
    assert ["Cloud Firestore pricing"] == [hit.title for hit in answer.hits]


async def test_uses_the_older_tool_names_the_server_lists() -> None:
    """A server with only get_document and search_document_chunks still searches and fetches."""
    server = _dk(tool_names=("get_document", "search_document_chunks"))
    server.start()
    try:
        async with service_for(settings_for(server)) as service:
            found = await service.search("firestore")
            documents = await service.docs([PRICING, BUCKETS])
            asked = await service.ask("How is Firestore billed?")
    finally:
        server.stop()
    assert "Cloud Firestore pricing" == found.hits[0].title
    assert [PRICING, BUCKETS] == [doc.name for doc in documents]
    assert "search" == asked.kind, "no answer_query: search results with a note"
    assert asked.fallback
    assert 2 == len({c.arguments["name"] for c in server.tool_calls("get_document")})
    assert [] == server.tool_calls("get_documents")
    assert 1 == len(server.requests_for("tools/list"))


async def test_batch_get_documents_is_used_like_get_documents() -> None:
    """The batch_get_documents variant takes the same names list."""
    server = _dk(tool_names=("search_documents", "batch_get_documents", "answer_query"))
    server.start()
    try:
        async with service_for(settings_for(server)) as service:
            documents = await service.docs([BUCKETS, PRICING])
    finally:
        server.stop()
    assert ["Create buckets", "Cloud Firestore pricing"] == [d.title for d in documents]
    assert [[BUCKETS, PRICING]] == [
        c.arguments["names"] for c in server.tool_calls("batch_get_documents")
    ]


class VersionRefusingServer:
    """A loopback MCP server refusing requests in the 2026 revision with -32022 and
    `error.data.supported`: only the first one (`first_only`) or every one; it speaks the
    2025 lifecycle too. It records each request's headers and body."""

    def __init__(self, supported: list[str], *, first_only: bool) -> None:
        self.supported = supported
        self.first_only = first_only
        self.received: list[tuple[dict[str, str], dict[str, Any]]] = []

    def methods(self) -> list[str]:
        return [body.get("method", "") for _, body in self.received]

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.received.append((headers, body))
        method, rid = body.get("method"), body.get("id")
        modern = headers.get("mcp-protocol-version") == "2026-07-28"
        if modern and (len(self.received) == 1 or not self.first_only):
            error = {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": self.supported, "requested": "2026-07-28"},
            }
            return web.json_response({"jsonrpc": "2.0", "id": rid, "error": error}, status=400)
        if rid is None:  # notifications/initialized
            return web.Response(status=202)
        result: dict[str, Any]
        if method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}}
        elif method == "tools/list":
            result = {"tools": [{"name": "search_documents"}]}
        else:
            chunk = {"parent": BUCKETS, "content": "found"}
            result = {"structuredContent": {"results": [chunk]}}
        return web.json_response({"jsonrpc": "2.0", "id": rid, "result": result})


async def _serving(server: VersionRefusingServer) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/mcp", server.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/mcp"
    finally:
        await runner.cleanup()


async def _search_on(server: VersionRefusingServer) -> list[str]:
    async for url in _serving(server):
        async with service_for(settings_for(developer_knowledge_mcp_url=url)) as service:
            answer = await service.search("buckets")
    return [hit.snippet for hit in answer.hits]


async def test_a_refusal_that_lists_our_revision_is_retried_in_it() -> None:
    """-32022 with `supported` naming 2026-07-28: the request is sent again in that revision
    (header and `_meta`), with no 2025 initialize."""
    server = VersionRefusingServer(["2026-07-28", "2025-11-25"], first_only=True)
    assert ["found"] == await _search_on(server)
    assert "initialize" not in server.methods()
    assert ["tools/list", "tools/list", "tools/call"] == server.methods()
    for headers, body in server.received[1:]:
        assert ("2026-07-28", body["method"]) == (
            headers["mcp-protocol-version"],
            headers["mcp-method"],
        )
        assert "2026-07-28" == body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]


async def test_a_refusal_that_lists_none_of_ours_falls_back_to_initialize() -> None:
    """-32022 with only 2025 revisions in `supported`: the 2025 handshake, then that version."""
    server = VersionRefusingServer(["2025-11-25", "2025-06-18"], first_only=False)
    assert ["found"] == await _search_on(server)
    methods = server.methods()
    assert ["tools/list", "initialize", "notifications/initialized"] == methods[:3]
    assert 1 == methods.count("initialize")
    call_headers = server.received[-1][0]
    assert ("tools/call", "2025-11-25") == (
        server.received[-1][1]["method"],
        call_headers["mcp-protocol-version"],
    )


async def test_2026_requests_name_the_client_in_meta(dk_server: FakeDeveloperKnowledge) -> None:
    """Every 2026-07-28 request carries `io.modelcontextprotocol/clientInfo` in `_meta`."""
    async with service_for(settings_for(dk_server)) as service:
        await service.search("buckets")
    info = dk_server.tool_calls("search_documents")[0].meta["io.modelcontextprotocol/clientInfo"]
    assert ("gdocs-bot", bot.__version__) == (info["name"], info["version"])
