"""A client for one MCP server over Streamable HTTP, on the process's pooled HTTP transport.

Version negotiation: every request first goes out in the 2026-07-28 form (no handshake,
`MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name` headers, the `_meta` envelope). A server that
refuses it (400 with -32022, or "Missing session ID") gets the 2025 lifecycle instead:
initialize, notifications/initialized, then `Mcp-Session-Id` and the negotiated version on
every request, and initialize again once when the session expires (404). The choice is
remembered for the life of the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import functools
import itertools
import json
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import httpx

import bot
from bot.upstream._auth import Auth
from bot.upstream._errors import ServerContext, SessionExpired, Transient, VersionRefused
from bot.upstream._models import ListToolsOutput, ToolInfo, parse_output
from bot.upstream._wire import read_limited, read_message, tool_payload

logger = logging.getLogger(__name__)

MODERN_VERSION = "2026-07-28"
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
_META = "io.modelcontextprotocol/"
_CLIENT_INFO = {"name": "gdocs-bot", "version": bot.__version__}
_USER_AGENT = f"gdocs-bot/{bot.__version__}"
_ERROR_BODY_LIMIT = 64 * 1024
_MAX_TOOL_PAGES = 10

_T = TypeVar("_T")


class Mode(enum.Enum):
    UNKNOWN = "unknown"
    MODERN = "modern"
    LEGACY = "legacy"


class McpClient:
    def __init__(
        self,
        server: ServerContext,
        url: str,
        transport: httpx.AsyncBaseTransport,
        auth: Auth,
        *,
        timeout: float,
        max_response_bytes: int,
        max_concurrency: int,
        max_retries: int,
        backoff_base: float,
        backoff_cap: float = 8.0,
        on_answer: Callable[[], None] | None = None,
    ) -> None:
        self.server = server
        self.url = url
        # parsed once: httpx parses a URL given as text on every request (~20 µs, in Python)
        self._target = httpx.URL(url)
        # httpx requests straight to the transport: AsyncClient's per-request work (merging
        # defaults, cookie jar, auth and redirect flows) cost ~0.17 ms a call, for nothing we use
        self._transport = transport
        self._timeouts = {"timeout": dict.fromkeys(("connect", "read", "write", "pool"), timeout)}
        self._auth = auth
        self._limit = max_response_bytes
        self._retries = max_retries
        self._backoff_base = backoff_base
        self._backoff_cap = backoff_cap
        self.on_answer: Callable[[], None] = on_answer or (lambda: None)
        self._semaphore = asyncio.Semaphore(max_concurrency)
        self._ids = itertools.count(1)
        self.mode = Mode.UNKNOWN
        #: negotiated 2025 revision and session, once the lifecycle has run
        self.version: str | None = None
        self._session: str | None = None
        self._init_lock = asyncio.Lock()
        self._tools: list[ToolInfo] | None = None
        self._tools_lock = asyncio.Lock()

    # --- operations -----------------------------------------------------------------------
    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """A tool's structured output (dict), or the typed error its result reports."""
        params = {"name": name, "arguments": arguments}
        result = await self._retrying(functools.partial(self._request, "tools/call", params, name))
        return tool_payload(result, self.server, name)

    async def list_tools(self, *, refresh: bool = False) -> list[ToolInfo]:
        """tools/list, all pages, fetched once and kept (unless `refresh`)."""
        async with self._tools_lock:
            if self._tools is None or refresh:
                tools: list[ToolInfo] = []
                cursor: str | None = None
                for _ in range(_MAX_TOOL_PAGES):
                    params = {"cursor": cursor} if cursor else {}
                    call = functools.partial(self._request, "tools/list", params, "tools/list")
                    page = parse_output(
                        ListToolsOutput,
                        await self._retrying(call),
                        server=self.server.key,
                        tool="tools/list",
                    )
                    tools.extend(page.tools)
                    cursor = page.nextCursor
                    if not cursor:
                        break
                self._tools = tools
            return list(self._tools)

    @property
    def protocol_version(self) -> str | None:
        if self.mode is Mode.MODERN:
            return MODERN_VERSION
        return self.version if self.mode is Mode.LEGACY else None

    # --- retries ------------------------------------------------------------------------
    async def _retrying(self, operation: Callable[[], Awaitable[_T]]) -> _T:
        attempt = 0
        while True:
            try:
                return await operation()
            except Transient as exc:
                if attempt >= self._retries:
                    raise
                # full jitter: spread retries of many callers over the whole backoff window
                window = min(self._backoff_cap, self._backoff_base * 2**attempt)
                delay = random.uniform(0, window)  # noqa: S311 - jitter, not cryptography
                attempt += 1
                logger.info("%s: %s; retry %d in %.2fs", self.server.key, exc, attempt, delay)
                await asyncio.sleep(delay)

    # --- one request, negotiated ----------------------------------------------------------
    async def _request(self, method: str, params: dict[str, Any], tool: str) -> dict[str, Any]:
        async with self._semaphore:
            if self.mode is not Mode.LEGACY:
                try:
                    result, _ = await self._exchange(method, params, tool, modern=True)
                except VersionRefused:
                    logger.info("%s refuses %s; using the 2025 lifecycle", self.url, MODERN_VERSION)
                    self.mode = Mode.LEGACY
                else:
                    self.mode = Mode.MODERN
                    return result
            session = await self._ensure_session()
            try:
                result, _ = await self._exchange(method, params, tool, session=session, retry=True)
            except SessionExpired:
                logger.info("%s: session expired; initializing again", self.server.key)
                session = await self._ensure_session(expired=session)
                result, _ = await self._exchange(method, params, tool, session=session)
            return result

    async def _ensure_session(self, expired: str | None = None) -> str | None:
        async with self._init_lock:
            fresh = expired is None or self._session != expired
            if self.version is not None and fresh:
                return self._session  # someone else (re)initialized while we waited
            self._session = None
            self.version = None
            params = {
                "protocolVersion": LEGACY_VERSIONS[0],
                "capabilities": {},
                "clientInfo": _CLIENT_INFO,
            }
            result, headers = await self._exchange("initialize", params, "initialize")
            version = result.get("protocolVersion")
            if version not in LEGACY_VERSIONS:
                raise self.server.protocol(f"it offers protocol version {str(version)[:20]!r}")
            session = headers.get("mcp-session-id") or None
            await self._notify("notifications/initialized", version, session)
            self.version, self._session = version, session
            return session

    async def _exchange(
        self,
        method: str,
        params: dict[str, Any],
        tool: str,
        *,
        modern: bool = False,
        session: str | None = None,
        retry: bool = False,
    ) -> tuple[dict[str, Any], httpx.Headers]:
        """POST one request; its result and the response headers, or a typed error."""
        request_id = next(self._ids)
        headers = await self._headers(method, tool, modern=modern, session=session)
        if modern:
            meta = {
                _META + "protocolVersion": MODERN_VERSION,
                _META + "clientCapabilities": {},
                _META + "clientInfo": _CLIENT_INFO,
            }
            params = {**params, "_meta": meta}
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        async with self._post(body, headers) as response:
            if not response.is_success:
                raw = await read_limited(response, _ERROR_BODY_LIMIT, self.server, truncate=True)
                if response.status_code == 404 and retry and session:
                    raise SessionExpired()
                raise self.server.from_http(
                    response.status_code,
                    raw,
                    tool=tool,
                    modern=modern,
                    retry_after=response.headers.get("retry-after"),
                )
            message = await read_message(response, request_id, self._limit, self.server)
        if "error" in message:
            raise self.server.from_rpc_error(message["error"], tool=tool, modern=modern)
        result = message.get("result")
        if not isinstance(result, dict):
            raise self.server.protocol("a response without a result")
        return result, response.headers

    async def _notify(self, method: str, version: str, session: str | None) -> None:
        headers = await self._headers(method, method, modern=False, session=session)
        headers["MCP-Protocol-Version"] = version
        async with self._post({"jsonrpc": "2.0", "method": method}, headers) as response:
            raw = await read_limited(response, _ERROR_BODY_LIMIT, self.server, truncate=True)
            if not response.is_success:
                raise self.server.from_http(response.status_code, raw, tool=method, modern=False)

    async def _headers(
        self, method: str, tool: str, *, modern: bool, session: str | None
    ) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Accept-Encoding": "gzip, deflate",
            "User-Agent": _USER_AGENT,
        }
        headers.update(await self._auth.headers())
        if modern:
            headers["MCP-Protocol-Version"] = MODERN_VERSION
            headers["Mcp-Method"] = method
            if method == "tools/call":
                headers["Mcp-Name"] = tool
        else:
            if self.version is not None:
                headers["MCP-Protocol-Version"] = self.version
            if session:
                headers["Mcp-Session-Id"] = session
        return headers

    @contextlib.asynccontextmanager
    async def _post(
        self, body: dict[str, Any], headers: dict[str, str]
    ) -> AsyncIterator[httpx.Response]:
        """The streamed response, with transport failures (also mid-body) as typed errors."""
        request = httpx.Request(
            "POST",
            self._target,
            content=json.dumps(body).encode(),
            headers=headers,
            extensions=self._timeouts,
        )
        try:
            response = await self._transport.handle_async_request(request)
            response.request = request
            try:
                if response.status_code < 500:  # it answered, even if to refuse: it is up
                    self.on_answer()
                yield response
            finally:
                await response.aclose()
        except httpx.HTTPError as exc:
            raise _transport_error(self.server, exc) from None


def _transport_error(server: ServerContext, exc: httpx.HTTPError) -> Exception:
    if isinstance(exc, httpx.TimeoutException):
        return server.timeout_error()
    if isinstance(exc, httpx.ConnectError):
        return server.unavailable("cannot connect", transient=True)
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.LocalProtocolError):
        return server.protocol(f"bad request URL or headers: {type(exc).__name__}")
    if isinstance(exc, httpx.TransportError):
        return server.unavailable("connection lost", transient=True)
    return server.protocol(type(exc).__name__)  # DecodingError, TooManyRedirects…
