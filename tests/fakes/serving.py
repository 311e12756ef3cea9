"""Serve an app on 127.0.0.1 in a background thread, for the lifetime of a test.

ASGI apps (the `mcp` SDK's Starlette app) run under uvicorn; aiohttp applications (the fake
Slack Web API) under aiohttp's own runner. Each gets its own thread and event loop, which keeps
the peer independent of what the code under test does to its loop and lets subprocesses (the
CLI, the bot) reach it too.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import uvicorn
from aiohttp import web


class ThreadedServer:
    """A server on an ephemeral loopback port; `start()` returns once it accepts connections."""

    def __init__(self, app: Any) -> None:
        self._app = app
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._started = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self.port = 0

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        if isinstance(self._app, web.Application):
            await self._serve_aiohttp()
        else:
            await self._serve_asgi()

    async def _serve_aiohttp(self) -> None:
        assert self._stop is not None
        runner = web.AppRunner(self._app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._started.set()
        await self._stop.wait()
        await runner.cleanup()

    async def _serve_asgi(self) -> None:
        assert self._stop is not None
        config = uvicorn.Config(
            self._app, host="127.0.0.1", port=0, log_level="error", lifespan="on", access_log=False
        )
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve())
        started = asyncio.Event()

        async def watch_start() -> None:
            # uvicorn has no start event to wait on; poll its flag
            while not server.started and not task.done():  # noqa: ASYNC110
                await asyncio.sleep(0.01)
            started.set()

        await asyncio.wait_for(watch_start(), 10)
        if server.servers:
            self.port = server.servers[0].sockets[0].getsockname()[1]
        self._started.set()
        await self._stop.wait()
        server.should_exit = True
        await task

    def start(self) -> ThreadedServer:
        self._thread.start()
        if not self._started.wait(10) or not self.port:
            raise RuntimeError("test server did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"
