"""Several small httpx connection pools behind one transport.

httpcore's pool re-examines every connection, and may hand one idle connection to several
waiting requests, on each request start and end (encode/httpcore#1035): its bookkeeping grows
with connections × requests, and at ~200 concurrent upstream calls it saturated the bot's
event loop (bench/RESULTS.md). Spreading requests over pools of a few connections each keeps
every pass small; each request goes to the pool with the fewest requests in flight.
"""

from __future__ import annotations

import math

import httpx

#: connections per pool: small enough that a pass over a pool costs next to nothing
CONNECTIONS_PER_POOL = 8


class _Release(httpx.AsyncByteStream):
    """A response body that gives its pool's slot back when closed."""

    def __init__(self, inner: httpx.AsyncByteStream, release: _Slot) -> None:
        self._inner = inner
        self._release = release

    async def __aiter__(self):  # type: ignore[no-untyped-def]  # AsyncIterator[bytes]
        async for chunk in self._inner:
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            self._release()


class _Slot:
    def __init__(self, busy: list[int], index: int) -> None:
        self._busy = busy
        self._index = index
        self._done = False

    def __call__(self) -> None:
        if not self._done:
            self._done = True
            self._busy[self._index] -= 1


class ShardedTransport(httpx.AsyncBaseTransport):
    """`max_connections` spread over pools of `CONNECTIONS_PER_POOL`."""

    def __init__(self, *, max_connections: int) -> None:
        pools = max(1, math.ceil(max_connections / CONNECTIONS_PER_POOL))
        per_pool = math.ceil(max_connections / pools)
        limits = httpx.Limits(max_connections=per_pool, max_keepalive_connections=per_pool)
        # one TLS context for all: loading the CA bundle costs milliseconds each time
        tls = httpx.create_ssl_context()
        self._pools = [httpx.AsyncHTTPTransport(limits=limits, verify=tls) for _ in range(pools)]
        self._busy = [0] * pools

    @property
    def pools(self) -> int:
        return len(self._pools)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        index = min(range(len(self._busy)), key=self._busy.__getitem__)
        self._busy[index] += 1
        slot = _Slot(self._busy, index)
        try:
            response = await self._pools[index].handle_async_request(request)
        except BaseException:
            slot()
            raise
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _Release(response.stream, slot)
        return response

    async def aclose(self) -> None:
        for pool in self._pools:
            await pool.aclose()
