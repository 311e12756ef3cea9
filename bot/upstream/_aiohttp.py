"""httpx's client API over aiohttp's connection pool: the MCP client's HTTP transport.

httpx's own transport (httpcore on anyio) cost about 1 ms of CPU per request and its pool
did work proportional to connections × requests (encode/httpcore#1035); at 200 concurrent
questions that was most of the bot's CPU (bench/RESULTS.md). aiohttp, already in the process
for Slack, does the same exchange for a fraction of that. The MCP client keeps speaking
httpx (requests, streamed responses, typed errors); only the wire underneath changes.

Proxies: `HTTP(S)_PROXY`/`ALL_PROXY` and `NO_PROXY` from the environment are honoured, read
once at start (aiohttp's `trust_env` would also read ~/.netrc in a thread on every request).
"""

from __future__ import annotations

import functools
import ssl
import urllib.request
from collections.abc import AsyncIterator

import aiohttp
import httpx

#: hop-by-hop or computed headers aiohttp writes itself
_SKIP_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})


class AiohttpTransport(httpx.AsyncBaseTransport):
    """At most `max_connections` connections in one aiohttp pool, opened on first use."""

    def __init__(self, *, max_connections: int, ssl_context: ssl.SSLContext | None = None) -> None:
        self._max_connections = max_connections
        # one TLS context for every connection, made at the first https request: loading the
        # CA bundle costs about 50 ms, a twelfth of the bot's start-up, and a server on
        # http:// (a test's, a local proxy's) never needs it
        self._ssl = ssl_context
        self._session: aiohttp.ClientSession | None = None
        self._closed = False
        self._proxies = urllib.request.getproxies_environment()

    def _get_session(self) -> aiohttp.ClientSession:
        # created lazily: an aiohttp session belongs to the running event loop
        if self._session is None:
            # `ssl` is given per request (`_tls`); a request without one would still be verified
            connector = aiohttp.TCPConnector(limit=self._max_connections)
            self._session = aiohttp.ClientSession(
                connector=connector,
                auto_decompress=False,  # httpx decodes Content-Encoding itself
                skip_auto_headers=("User-Agent",),  # httpx sends its own
            )
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeouts = request.extensions.get("timeout") or {}
        timeout = aiohttp.ClientTimeout(
            total=None,
            connect=timeouts.get("pool"),  # waiting for a free connection, and connecting
            sock_connect=timeouts.get("connect"),
            sock_read=timeouts.get("read"),
        )
        headers = [
            (name, value)
            for name, value in request.headers.multi_items()
            if name.lower() not in _SKIP_HEADERS
        ]
        body = await request.aread()
        if self._closed:
            # a session made now would belong to nobody, and be left unclosed
            raise httpx.ConnectError("the transport is closed", request=request)
        try:
            response = await self._get_session().request(
                request.method,
                str(request.url),
                headers=headers,
                data=body or None,
                allow_redirects=False,
                timeout=timeout,
                proxy=self._proxy_for(request.url.scheme, request.url.host),
                ssl=self._tls() if request.url.scheme == "https" else True,
            )
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise _as_httpx(exc, request) from exc
        return httpx.Response(
            response.status,
            headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.raw_headers],
            stream=_Body(response, request),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": _reason(response)},
        )

    def _tls(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context()
        return self._ssl

    @functools.lru_cache(maxsize=64)  # noqa: B019 - a few hosts, for the transport's life
    def _proxy_for(self, scheme: str, host: str) -> str | None:
        if not self._proxies or urllib.request.proxy_bypass(host):  # NO_PROXY
            return None
        return self._proxies.get(scheme) or self._proxies.get("all")

    async def aclose(self) -> None:
        self._closed = True
        if self._session is not None:
            await self._session.close()
            self._session = None


class _Body(httpx.AsyncByteStream):
    """The response body as it arrives; closing it returns the connection to the pool."""

    def __init__(self, response: aiohttp.ClientResponse, request: httpx.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_any():
                yield chunk
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _as_httpx(exc, self._request) from exc

    async def aclose(self) -> None:
        self._response.release()


def _reason(response: aiohttp.ClientResponse) -> bytes:
    return (response.reason or "").encode("latin-1", errors="replace")


def _as_httpx(exc: BaseException, request: httpx.Request) -> httpx.HTTPError:
    """The httpx error a caller of httpx expects for what aiohttp raised."""
    message = type(exc).__name__
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return httpx.ConnectTimeout(message, request=request)
    if isinstance(exc, TimeoutError):  # aiohttp's socket-read timeouts among them
        return httpx.ReadTimeout(message, request=request)
    if isinstance(exc, aiohttp.InvalidURL | aiohttp.NonHttpUrlClientError):
        return httpx.UnsupportedProtocol(message, request=request)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return httpx.ConnectError(message, request=request)
    if isinstance(exc, ValueError):  # e.g. a newline in a header value
        return httpx.LocalProtocolError(message, request=request)
    if isinstance(exc, aiohttp.ClientOSError):
        return httpx.ReadError(message, request=request)
    return httpx.RemoteProtocolError(message, request=request)
