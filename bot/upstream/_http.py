"""What both faces of a server share over HTTP: the service's one httpx client (`SharedHttp`),
and `HttpFace`: credentials, the concurrency limit, retries, response size limits, the
upstream metrics and `answered_at` kept the same way for MCP and REST."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

import httpx
from httpx_aiohttp import AiohttpTransport

import bot
from bot.errors import GdocsError
from bot.observability.metrics import Metrics
from bot.settings import Settings
from bot.upstream._auth import Auth
from bot.upstream._calls import retrying
from bot.upstream._errors import ServerContext

_T = TypeVar("_T")
USER_AGENT = f"gdocs-bot/{bot.__version__}"
#: enough of a refusal's body to read Google's error JSON
ERROR_BODY_LIMIT = 64 * 1024
#: the longest wait between two tries, whatever the base
_BACKOFF_CAP = 8.0


async def read_limited(response: httpx.Response, limit: int) -> bytes:
    """The body's first `limit` bytes (and one more, if there is more)."""
    buffer = bytearray()
    async for chunk in response.aiter_bytes():
        buffer += chunk
        if len(buffer) > limit:
            break
    return bytes(buffer[: limit + 1])


class SharedHttp:
    """The service's httpx client, made at the first call: its TLS context costs ~35 ms."""

    def __init__(self, url: str, timeout: float) -> None:
        #: Developer Knowledge's URL for the backend in use (the proxy is chosen for it)
        self._url = url
        self._timeout = timeout
        self._client: httpx.AsyncClient | None = None
        self._closed = False

    def __call__(self) -> httpx.AsyncClient:
        if self._closed:
            raise RuntimeError("the docs service is closed")
        if self._client is None:
            # httpx's API on aiohttp's connections: httpcore's pool cost ~3 ms of CPU a question
            # in the guard's burst (bench/FINDINGS.md); the semaphores bound the calls. httpx
            # reads HTTPS_PROXY, HTTP_PROXY and NO_PROXY itself only for its own transport
            url = urlsplit(self._url)
            found = getproxies().get(url.scheme)
            proxy = httpx.Proxy(found) if found and not proxy_bypass(url.hostname or "") else None
            limits = httpx.Limits(max_connections=None, max_keepalive_connections=20)
            transport = AiohttpTransport(limits=limits, proxy=proxy)
            self._client = httpx.AsyncClient(timeout=self._timeout, transport=transport)
        return self._client

    def refuse(self) -> None:
        """No client from now on: work being cancelled must not open a pool nobody closes."""
        self._closed = True

    async def aclose(self) -> None:
        self.refuse()
        if self._client is not None:
            await self._client.aclose()


class HttpFace:
    """One server reached over the shared client (MCP's tools or REST's RPCs)."""

    def __init__(
        self,
        server: ServerContext,
        url: str,
        http: Callable[[], httpx.AsyncClient],
        auth: Auth,
        settings: Settings,
        *,
        backoff_base: float,
        metrics: Metrics | None = None,
    ) -> None:
        self.server = server
        self.url = url
        self._http = http
        self._auth = auth
        self._limit = settings.mcp_max_response_bytes
        self._retries = settings.mcp_max_retries
        self._backoff = (backoff_base, _BACKOFF_CAP)
        self._metrics = metrics or Metrics()
        self._semaphore = asyncio.Semaphore(settings.mcp_max_concurrency)
        #: when the server last answered (time.monotonic()), even if to refuse
        self.answered_at: float | None = None

    async def _retrying(self, attempt: Callable[[], Awaitable[_T]]) -> _T:
        return await retrying(self.server, self._retries, self._backoff, attempt)

    async def _measured(self, name: str, work: Awaitable[_T]) -> _T:
        """`work`, its time and outcome in the upstream metrics under `name`."""
        started, outcome = time.perf_counter(), "cancelled"
        try:
            result = await work
            outcome = "ok"
            return result
        except GdocsError as exc:
            outcome = exc.code.value
            raise
        finally:
            self._metrics.upstream(self.server.key, name, outcome, time.perf_counter() - started)

    async def _headers(self, accept: str) -> dict[str, str]:
        return {"Accept": accept, "User-Agent": USER_AGENT} | await self._auth.headers()

    @contextlib.asynccontextmanager
    async def _stream(self, method: str, url: str, **kwargs: Any) -> AsyncIterator[httpx.Response]:
        """The streamed response, with transport failures (also mid-body) as typed errors."""
        try:
            async with self._http().stream(method, url, **kwargs) as reply:
                if reply.status_code < 500:  # it answered, even if to refuse: it is up
                    self.answered_at = time.monotonic()
                yield reply
        except httpx.HTTPError as exc:
            raise self.server.from_transport(exc) from None

    def _too_large(self) -> Exception:
        return self.server.protocol(f"the answer is larger than {self._limit:,} bytes")
