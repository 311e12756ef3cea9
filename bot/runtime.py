"""`gdocs-bot serve`: run the bot until SIGTERM/SIGINT, then shut down gracefully.

Start-up order: settings problems (exit 2) → the operational HTTP server on HOST:PORT
(/healthz, /readyz, /metrics; plus POST /slack/events in HTTP mode) → a background readiness
probe of the Developer Knowledge server → Slack auth.test (bad token: exit 2; Slack
unreachable: a few retries, then exit 1) → in Socket Mode, the WebSocket connection.

Shutdown on the first SIGTERM/SIGINT: /readyz turns 503, Socket Mode stops receiving, new
requests are still acknowledged in HTTP mode (the Slack listeners tell the user to retry in a
moment: answering 503 would only make Slack retry into a stopping process), answers in flight
get up to SHUTDOWN_GRACE_SECONDS to finish, then everything is closed and the exit status is 0.
A second signal skips the wait.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
import sys
from collections.abc import Callable
from typing import Any

import aiohttp
from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_sdk.web.async_client import AsyncWebClient

from bot.docs import DocsService
from bot.health import Readiness, build_web_app
from bot.inflight import InFlight
from bot.observability.logging import configure_logging
from bot.observability.metrics import Metrics
from bot.settings import Settings
from bot.startup import StartupError, check_bot_token, open_socket_url

logger = logging.getLogger(__name__)

#: how long the first Socket Mode connection may take before start-up gives up
SOCKET_CONNECT_TIMEOUT_SECONDS = 30.0
SETTINGS_HINT = "settings come from the environment and ./.env (see .env.example)"


def serve(settings: Settings) -> int:
    """Run the bot; the process exit status (0 after a graceful stop, 1 outage, 2 config)."""
    configure_logging(settings)
    problems = settings.slack_problems() + settings.google_problems()
    if problems:
        for problem in problems:
            print(f"gdocs-bot: {problem}", file=sys.stderr)
        print(f"gdocs-bot: {SETTINGS_HINT}", file=sys.stderr)
        return 2
    try:
        with asyncio.Runner(loop_factory=_loop_factory(settings)) as runner:
            return runner.run(_Runtime(settings).run())
    except KeyboardInterrupt:  # a signal before the handlers were installed
        return 130


def _loop_factory(settings: Settings) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop when asked for and installed; None (asyncio's own) otherwise."""
    if settings.event_loop == "uvloop":
        try:
            import uvloop
        except ImportError:
            logger.info("uvloop is not installed: using asyncio's event loop")
        else:
            return uvloop.new_event_loop
    return None


class _Runtime:
    """One run of the bot: owns every resource it opens and closes them in reverse."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.metrics = Metrics()
        self.stop = asyncio.Event()
        self.force = asyncio.Event()
        self._signals = 0
        self.service: DocsService | None = None
        self.client: AsyncWebClient | None = None
        self.socket: AsyncSocketModeHandler | None = None
        self.runner: web.AppRunner | None = None
        self.probes: asyncio.Task[None] | None = None
        self.readiness: Readiness | None = None
        self.inflight: InFlight | None = None

    def _on_signal(self, signum: int) -> None:
        self._signals += 1
        if self._signals == 1:
            logger.info("%s received: shutting down", signal.Signals(signum).name)
            self.stop.set()
        else:
            logger.warning("second signal: stopping without waiting for answers in flight")
            self.force.set()

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._on_signal, signum)
        try:
            await self._start()
        except StartupError as exc:
            if exc.exit_code:
                logger.error("%s", exc.message)
            await self._close()
            return exc.exit_code
        except Exception:  # the top-level boundary: one redacted log entry, then exit 1
            logger.exception("start-up failed")
            await self._close()
            return 1
        await self.stop.wait()
        await self._shutdown()
        return 0

    async def _start(self) -> None:
        # imported here so `serve` can report settings problems even if a part fails to import
        from bot.slack.app import build_bolt_app, build_web_client
        from bot.slack.context import build_context
        from bot.slack.http import slack_events_route
        from bot.upstream import build_service

        settings = self.settings
        self.service = build_service(settings, metrics=self.metrics)
        ctx = build_context(settings, self.service, self.metrics)
        self.inflight = ctx.inflight
        self.client = build_web_client(settings)
        app = build_bolt_app(ctx, client=self.client)

        readiness = Readiness(
            self.service,
            mode="socket" if settings.socket_mode else "http",
            probe_interval=settings.readiness_probe_seconds,
            # the service bounds each server's check by MCP_TIMEOUT_SECONDS; this is a backstop
            probe_timeout=settings.mcp_timeout_seconds + 5,
        )
        self.readiness = readiness
        web_app = build_web_app(readiness, self.metrics)
        if not settings.socket_mode:
            web_app.add_routes([slack_events_route(app)])
        await self._listen(web_app)
        # Google is probed in the background: a slow upstream never holds start-up
        self.probes = asyncio.create_task(readiness.run_probes(), name="readiness-probes")

        api_url = str(settings.slack_api_url)
        identity = await check_bot_token(self.client, api_url=api_url, stop=self.stop)
        logger.info(
            "authenticated to Slack",
            extra={"bot_user_id": identity.get("user_id"), "team": identity.get("team")},
        )
        ctx.identity.prime(identity)  # listeners need the bot's ids; no second auth.test
        readiness.slack_authenticated = True
        if settings.socket_mode:
            await self._connect_socket(app, readiness, api_url)
        # everything built so far lives as long as the process: keep it out of the garbage
        # collector's full passes, which otherwise rescan it while answers are being built
        gc.freeze()
        logger.info("ready", extra={"mode": readiness.mode})

    async def _listen(self, web_app: web.Application) -> None:
        settings = self.settings
        self.runner = web.AppRunner(web_app, access_log=None, shutdown_timeout=2.0)
        await self.runner.setup()
        # a burst of Slack requests must not overflow the default backlog (128), whose
        # overflow costs a connection a second or more to retry
        site = web.TCPSite(self.runner, settings.host, settings.port, backlog=1024)
        try:
            await site.start()
        except OSError as exc:
            raise StartupError(
                f"cannot listen on {settings.host}:{settings.port} ({exc.strerror}); "
                "set PORT (and HOST) to a free address",
                1,
            ) from None
        port = self.runner.addresses[0][1]
        loop = type(asyncio.get_running_loop()).__module__.split(".")[0]
        logger.info(
            "listening on http://%s:%d (%s event loop)",
            settings.host,
            port,
            loop,
            extra={"port": port, "event_loop": loop},
        )

    async def _connect_socket(self, app: Any, readiness: Readiness, api_url: str) -> None:
        assert self.client is not None
        assert self.settings.slack_app_token is not None
        app_token = self.settings.slack_app_token.get_secret_value()
        # opening the URL ourselves turns a bad app token into one clear line (the SDK would
        # log a stack trace and retry forever); the handler then connects to that URL, and
        # reconnects (through the same web client, so SLACK_API_URL) on its own
        url = await open_socket_url(self.client, app_token, api_url=api_url, stop=self.stop)
        self.socket = AsyncSocketModeHandler(app, app_token, web_client=self.client)
        self.socket.client.wss_uri = url
        try:
            await asyncio.wait_for(
                self.socket.connect_async(),  # type: ignore[no-untyped-call]
                SOCKET_CONNECT_TIMEOUT_SECONDS,
            )
        except TimeoutError:
            raise StartupError(
                "cannot open the Socket Mode WebSocket to Slack; check the network", 1
            ) from None
        readiness.socket_connected = self.socket.client.is_connected
        logger.info("connected to Slack over Socket Mode")

    async def _shutdown(self) -> None:
        if self.readiness is not None:
            self.readiness.shutting_down = True
        if self.inflight is not None:
            self.inflight.accepting = False
        if self.socket is not None:
            # stop receiving first: Slack then delivers to the app's other connections
            await self.socket.close_async()  # type: ignore[no-untyped-call]
            self.socket = None
        if self.inflight is not None:
            count = self.inflight.count
            if count:
                logger.info("finishing %d answer(s) in flight", count, extra={"inflight": count})
            drained = await self._drain()
            if not drained:
                logger.warning(
                    "answers still in flight after the grace period",
                    extra={"inflight": self.inflight.count},
                )
        await self._close()
        logger.info("stopped")

    async def _drain(self) -> bool:
        assert self.inflight is not None
        drain = asyncio.ensure_future(self.inflight.drain(self.settings.shutdown_grace_seconds))
        forced = asyncio.ensure_future(self.force.wait())
        done, _ = await asyncio.wait({drain, forced}, return_when=asyncio.FIRST_COMPLETED)
        forced.cancel()
        if drain in done:
            return bool(drain.result())
        drain.cancel()
        return False

    async def _close(self) -> None:
        """Close whatever was opened, the background probe first, the clients last."""
        if self.probes is not None:
            self.probes.cancel()
            # bounded: a probe stuck in a library must not hold the exit
            await asyncio.wait({self.probes}, timeout=5)
        if self.socket is not None:
            await self.socket.close_async()  # type: ignore[no-untyped-call]
        if self.runner is not None:
            await self.runner.cleanup()
        if self.service is not None:
            await self.service.aclose()
        session = getattr(self.client, "session", None)
        if isinstance(session, aiohttp.ClientSession) and not session.closed:
            await session.close()
