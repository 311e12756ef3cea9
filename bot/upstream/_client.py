"""A client for one MCP server over Streamable HTTP. Requests go out in the 2026-07-28 form
(no handshake; revision headers, the `_meta` envelope); a -32022 refusal listing a revision of
ours is retried in it, any other refusal switches to the 2025 lifecycle (initialize, session)."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import httpx

import bot
from bot.errors import GdocsError
from bot.models import ServerStatus
from bot.text import one_line
from bot.upstream._calls import UpstreamCalls
from bot.upstream._errors import (
    ListToolsOutput,
    SessionExpired,
    ToolInfo,
    VersionRefused,
)
from bot.upstream._http import ERROR_BODY_LIMIT, HttpFace, read_limited

logger = logging.getLogger(__name__)

MODERN_VERSIONS = ("2026-07-28",)
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
_META = "io.modelcontextprotocol/"
_CLIENT_INFO = {"name": "gdocs-bot", "version": bot.__version__}
_Obj = dict[str, Any]


class McpClient(HttpFace):
    """A server's MCP tools at `url`, over the face's HTTP (credentials, limits, retries)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # HttpFace's
        super().__init__(*args, **kwargs)
        self._ids = itertools.count(1)
        #: the revision spoken (None until known); in the 2025 lifecycle, with `_session`
        self.protocol_version: str | None = None
        self._legacy = False
        self._session: str | None = None
        self._init_lock = asyncio.Lock()
        self._tools: list[ToolInfo] | None = None
        self._tools_lock = asyncio.Lock()

    async def call_tool(self, name: str, arguments: _Obj) -> Any:
        """A tool's structured output, or the typed error its result reports (measured)."""
        params = {"name": name, "arguments": arguments}

        async def call() -> Any:
            return self._payload(await self._request("tools/call", params, name), name)

        return await self._measured(name, call())

    async def list_tools(self, *, refresh: bool = False) -> list[ToolInfo]:
        """tools/list's first page (Google's servers list a handful), kept unless `refresh`."""
        async with self._tools_lock:
            if self._tools is None or refresh:
                data = await self._request("tools/list", {}, "")
                self._tools = self.server.parse(ListToolsOutput, data, "tools/list").tools
            return list(self._tools)

    async def _request(self, method: str, params: _Obj, tool: str) -> _Obj:
        """The result of one request, tried again (with backoff) while it fails transiently."""
        return await self._retrying(partial(self._attempt, method, params, tool))

    async def _attempt(self, method: str, params: _Obj, tool: str) -> _Obj:
        async with self._semaphore:
            if not self._legacy:
                try:
                    return await self._modern(method, params, tool)
                except VersionRefused:
                    logger.info(
                        "%s refuses %s; using the 2025 lifecycle", self.url, MODERN_VERSIONS
                    )
                    self._legacy, self.protocol_version = True, None
            session = await self._ensure_session()
            try:
                result, _ = await self._exchange(method, params, tool, retry=True)
            except SessionExpired:
                logger.info("%s: session expired; initializing again", self.server.key)
                await self._ensure_session(expired=session)
                result, _ = await self._exchange(method, params, tool)
            return result

    async def _modern(self, method: str, params: _Obj, tool: str) -> _Obj:
        version = self.protocol_version or MODERN_VERSIONS[0]
        try:
            result, _ = await self._exchange(method, params, tool, modern=version)
        except VersionRefused as refused:
            # the server names what it speaks: one of ours is tried once before 2025's handshake
            version = next((v for v in MODERN_VERSIONS if v in refused.supported), "")
            if not version:
                raise
            result, _ = await self._exchange(method, params, tool, modern=version)
        if not self._legacy:  # a concurrent request may have switched to 2025's lifecycle
            self.protocol_version = version
        return result

    async def _ensure_session(self, expired: str | None = None) -> str | None:
        async with self._init_lock:
            if self.protocol_version is not None and (expired is None or self._session != expired):
                return self._session  # someone else (re)initialized while we waited
            self._session = self.protocol_version = None
            params = {"protocolVersion": LEGACY_VERSIONS[0], "capabilities": {}}
            params["clientInfo"] = _CLIENT_INFO
            result, headers = await self._exchange("initialize", params, "initialize")
            version = result.get("protocolVersion")
            if version not in LEGACY_VERSIONS:
                raise self.server.protocol(f"it offers protocol version {str(version)[:20]!r}")
            session = headers.get("mcp-session-id") or None
            notice = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            async with self._post(notice, await self._mcp_headers(session, version)) as response:
                raw = await read_limited(response, ERROR_BODY_LIMIT)
                if not response.is_success:
                    raise self.server.from_http(response.status_code, raw, tool="initialize")
            self.protocol_version, self._session = version, session
            return session

    async def _exchange(
        self, method: str, params: _Obj, tool: str, *, modern: str = "", retry: bool = False
    ) -> tuple[_Obj, httpx.Headers]:
        """POST one request (in the 2025 lifecycle, in the current session; `retry`: a 404 is
        the session expired); its result and the response headers, or a typed error."""
        request_id, tool = next(self._ids), tool or method
        session = None if modern else self._session
        headers = await self._mcp_headers(session, modern or self.protocol_version)
        if modern:
            headers["Mcp-Method"] = method
            if method == "tools/call":
                headers["Mcp-Name"] = tool
            meta = {"protocolVersion": modern, "clientCapabilities": {}, "clientInfo": _CLIENT_INFO}
            params = {**params, "_meta": {_META + k: v for k, v in meta.items()}}
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        async with self._post(body, headers) as response:
            if not response.is_success:
                raw, status = await read_limited(response, ERROR_BODY_LIMIT), response.status_code
                if status == 404 and retry and session:
                    raise SessionExpired()
                wait = response.headers.get("retry-after")
                raise self.server.from_http(status, raw, tool=tool, modern=modern, retry_after=wait)
            message = await self._message(response, request_id)
        if "error" in message:
            raise self.server.from_rpc_error(message["error"], tool=tool, modern=modern)
        result = message.get("result")
        if not isinstance(result, dict):
            raise self.server.protocol("a response without a result")
        return result, response.headers

    async def _mcp_headers(self, session: str | None, version: str | None) -> dict[str, str]:
        headers = await self._headers("application/json, text/event-stream")
        if version:
            headers["MCP-Protocol-Version"] = version
        if session:
            headers["Mcp-Session-Id"] = session
        return headers

    def _post(self, body: _Obj, headers: dict[str, str]) -> Any:
        return self._stream("POST", self.url, json=body, headers=headers)

    async def _message(self, response: httpx.Response, request_id: int) -> _Obj:
        """The JSON-RPC response to `request_id`, from a JSON body or an event stream."""
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self._limit:
            raise self._too_large()
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind == "text/event-stream":
            async for data in self._events(response):
                if (message := self._pick(data, request_id, " in the event stream")) is not None:
                    return message
            raise self.server.protocol("the event stream ended before the answer")
        if kind != "application/json" and not kind.endswith("+json"):
            raise self.server.protocol(f"content type {one_line(kind, 60) or 'missing'}")
        body = await read_limited(response, self._limit)
        if len(body) > self._limit:
            raise self._too_large()
        if (message := self._pick(body, request_id)) is None:
            raise self.server.protocol("no response to the request")
        return message

    async def _events(self, response: httpx.Response) -> AsyncIterator[str]:
        """Each server-sent event's data; other fields and an unfinished last event are dropped."""
        data: list[str] = []
        async for line in response.aiter_lines():
            if response.num_bytes_downloaded > self._limit:
                raise self._too_large()
            if line:
                name, _, value = line.partition(":")
                if name == "data":
                    data.append(value.removeprefix(" "))
            elif data:
                yield "\n".join(data)
                data = []

    def _pick(self, raw: str | bytes, request_id: int, where: str = "") -> _Obj | None:
        """The response to our request in a JSON message or batch; None for anything else."""
        try:
            data = json.loads(raw)
        except ValueError:
            raise self.server.protocol(f"malformed JSON{where}") from None
        for item in data if isinstance(data, list) else [data]:
            if not isinstance(item, dict) or "method" in item:
                continue  # notifications and server-to-client requests (pings)
            if "result" not in item and "error" not in item:
                continue
            rid = item.get("id")
            # an error with a null id is the server saying it could not read our request
            if rid in (request_id, str(request_id)) or (rid is None and "error" in item):
                return item
        return None

    def _payload(self, result: _Obj, tool: str) -> Any:
        """The structured output of a tools/call result, or the typed error it reports."""
        blocks = result.get("content")
        texts = [
            b["text"]
            for b in (blocks if isinstance(blocks, list) else [])
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        if result.get("isError") is True:
            raise self.server.from_tool_error(" ".join(texts), tool=tool)
        if isinstance(result.get("structuredContent"), dict):
            return result["structuredContent"]
        if not texts:
            raise self.server.protocol(f"{tool} returned no content")
        try:
            return json.loads("".join(texts))
        except ValueError:
            raise self.server.protocol(f"{tool} returned text that is not JSON") from None

    async def status(self, calls: UpstreamCalls) -> ServerStatus:
        """Whether the server lists its tools now (a fresh tools/list), and which."""
        server, url = self.server.key, self.url
        try:
            listed = await calls.run(self.server, partial(self.list_tools, refresh=True))
        except GdocsError as exc:
            return ServerStatus(server=server, url=url, ok=False, detail=str(exc), error=exc)
        tools, detail = tuple(sorted(t.name for t in listed)), f"MCP {self.protocol_version}"
        return ServerStatus(server=server, url=url, ok=True, tools=tools, detail=detail)
