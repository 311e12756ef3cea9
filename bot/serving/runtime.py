"""`gdocs-bot serve`: HTTP on HOST:PORT, Slack's auth.test, Socket Mode. The first SIGTERM/SIGINT
turns /readyz 503 and gives answers in flight SHUTDOWN_GRACE_SECONDS; a second skips the wait."""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
import sys
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack, suppress
from functools import partial
from typing import TYPE_CHECKING, Any

from aiohttp import web
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.observability.logging import configure_logging
from bot.serving.assembly import Bot, open_bot
from bot.serving.health import build_web_app
from bot.settings import Settings, reveal
from bot.slack import SLACK_UNREACHABLE
from bot.store import StoreConfigError

if TYPE_CHECKING:  # Socket Mode's client is imported only when SOCKET_MODE is on
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

logger = logging.getLogger(__name__)

#: Python's 700 allocations a pass rescan questions in flight for nothing: 50,000 saved 10-20 % CPU
SERVE_GC_THRESHOLDS = (50_000, 20, 100)

#: how long the first Socket Mode connection may take before start-up gives up
SOCKET_CONNECT_TIMEOUT_SECONDS = 30.0
#: Slack's answers that mean "this token will never work": fix the setting, don't retry
TOKEN_ERRORS = frozenset(
    {"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired"}
    | {"not_allowed_token_type", "invalid_token"}
)
#: attempts (each already retried by the client's handlers); then the platform restarts us
ATTEMPTS = 2
PAUSE_SECONDS = 1.0


class StartupError(Exception):
    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.message, self.exit_code = message, exit_code


def serve(settings: Settings) -> int:
    """Run the bot; the process exit status (0 after a graceful stop, 1 outage, 2 config)."""
    configure_logging(settings)
    problems = settings.slack_problems() + settings.google_problems()
    if problems:
        hint = "settings come from the environment and ./.env (see .env.example)"
        print("\n".join(f"gdocs-bot: {line}" for line in [*problems, hint]), file=sys.stderr)
        return 2
    _cap_malloc_arenas()
    try:
        with asyncio.Runner(loop_factory=_loop_factory(settings)) as runner:
            return runner.run(_Runtime(settings).run())
    except KeyboardInterrupt:  # a signal before the handlers were installed
        return 130


def _cap_malloc_arenas() -> None:
    """glibc gives each thread an arena (up to 8 per core); two do: about 2 MB less peak RSS."""
    if sys.platform.startswith("linux"):
        import ctypes

        with suppress(OSError, AttributeError):  # libc's, among the process's own symbols
            ctypes.CDLL(None).mallopt(-8, 2)  # -8: glibc's M_ARENA_MAX


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
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.stop = asyncio.Event()
        self.force = asyncio.Event()
        self._socket: AsyncSocketModeHandler | None = None

    def _on_signal(self, signum: int) -> None:
        if not self.stop.is_set():
            logger.info("%s received: shutting down", signal.Signals(signum).name)
            self.stop.set()
        else:
            logger.warning("second signal: stopping without waiting for answers in flight")
            self.force.set()

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._on_signal, signum)
        async with AsyncExitStack() as stack:
            try:
                bot = await stack.enter_async_context(open_bot(self.settings))
                await self._start(bot, stack)
            except (StartupError, StoreConfigError) as exc:  # StoreConfigError: fix STATE_URL
                code = exc.exit_code if isinstance(exc, StartupError) else 2
                if code:
                    logger.error("%s", exc.message)
                return code
            except Exception:  # the top-level boundary: one redacted log entry, then exit 1
                logger.exception("start-up failed")
                return 1
            await self.stop.wait()
            await self._shutdown(bot)
        logger.info("stopped")
        return 0

    async def _start(self, bot: Bot, stack: AsyncExitStack) -> None:
        from bot.slack.app import run_recovery, slack_events_route
        from bot.slack.oauth import oauth_routes

        readiness = bot.readiness
        # answers left come from the shared ledger: fresh at every scrape, on every replica
        web_app = build_web_app(readiness, bot.core.metrics, refresh=bot.refresh_metrics)
        if not self.settings.socket_mode:
            web_app.add_routes([slack_events_route(bot.app)])
        web_app.add_routes(oauth_routes(bot.app))  # install pages are plain HTTP, in both modes
        await self._listen(web_app, stack)
        gc.freeze()  # start-up ran without the garbage collector (bot.cli)
        gc.set_threshold(*SERVE_GC_THRESHOLDS)
        gc.enable()
        # Google is probed in the background: a slow upstream never holds start-up
        probes = asyncio.create_task(readiness.run_probes(), name="readiness-probes")
        stack.push_async_callback(_cancel, probes)

        if self.settings.oauth_mode:  # no one token to test: each is tested as it is used
            logger.info("installs by OAuth: each workspace answered with its own token")
        else:
            if self.settings.oauth_ignored:
                logger.warning("%s", self.settings.oauth_ignored)
            said = partial(setattr, readiness, "slack_unreachable")  # /readyz says why it waits
            me = await check_bot_token(bot.client, stop=self.stop, unreachable=said)
            who = {"bot_user_id": me.get("user_id"), "team": me.get("team")}
            logger.info("one workspace (SLACK_BOT_TOKEN): authenticated to Slack", extra=who)
        readiness.slack_authenticated = True
        if self.settings.socket_mode:
            await self._connect_socket(bot, stack)
        # work a stopped process had acknowledged is finished now, and looked for from now on
        recovery = asyncio.create_task(run_recovery(bot.deps, bot.client), name="work-recovery")
        stack.push_async_callback(_cancel, recovery)
        gc.freeze()  # what lives as long as the process: out of the collector's full passes
        logger.info("ready", extra={"mode": readiness.mode})

    async def _listen(self, web_app: web.Application, stack: AsyncExitStack) -> None:
        settings = self.settings
        runner = web.AppRunner(web_app, access_log=None, shutdown_timeout=2.0)
        await runner.setup()
        stack.push_async_callback(runner.cleanup)
        # a burst of Slack requests must not overflow the default backlog (128), whose
        # overflow costs a connection a second or more to retry
        site = web.TCPSite(runner, settings.host, settings.port, backlog=1024)
        try:
            await site.start()
        except OSError as exc:
            raise StartupError(
                f"cannot listen on {settings.host}:{settings.port} ({exc.strerror}); "
                "set PORT (and HOST) to a free address",
                1,
            ) from None
        port = runner.addresses[0][1]
        loop = type(asyncio.get_running_loop()).__module__.split(".")[0]
        where = {"port": port, "event_loop": loop}
        logger.info(
            "listening on http://%s:%d (%s event loop)", settings.host, port, loop, extra=where
        )

    async def _connect_socket(self, bot: Bot, stack: AsyncExitStack) -> None:
        app_token = reveal(self.settings.slack_app_token) or ""
        # opening the URL ourselves turns a bad app token into one clear line (the SDK would
        # log a stack trace and retry forever); the handler reconnects on its own
        url = await open_socket_url(bot.client, app_token, stop=self.stop)
        from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

        socket = AsyncSocketModeHandler(bot.app, app_token, web_client=bot.client)
        socket.client.wss_uri = url
        self._socket = socket
        stack.push_async_callback(self._close_socket)
        connecting = socket.connect_async()  # type: ignore[no-untyped-call]
        try:
            await asyncio.wait_for(connecting, SOCKET_CONNECT_TIMEOUT_SECONDS)
        except TimeoutError:
            raise StartupError(
                "cannot open the Socket Mode WebSocket to Slack; check the network", 1
            ) from None
        bot.readiness.socket_connected = socket.client.is_connected
        logger.info("connected to Slack over Socket Mode")

    async def _close_socket(self) -> None:
        socket, self._socket = self._socket, None
        if socket is not None:
            await socket.close_async()  # type: ignore[no-untyped-call]

    async def _shutdown(self, bot: Bot) -> None:
        inflight = bot.deps.inflight
        bot.readiness.shutting_down = True
        inflight.accepting = False
        # stop receiving first: Slack then delivers to the app's other connections
        await self._close_socket()
        count = inflight.count
        if count:
            logger.info("finishing %d answer(s) in flight", count, extra={"inflight": count})
        drain = asyncio.ensure_future(inflight.drain(self.settings.shutdown_grace_seconds))
        forced = asyncio.ensure_future(self.force.wait())  # a second signal
        done, _ = await asyncio.wait({drain, forced}, return_when=asyncio.FIRST_COMPLETED)
        forced.cancel()
        drain.cancel()  # nothing when it is done
        if drain not in done or not drain.result():
            still = {"inflight": inflight.count}
            logger.warning("answers still in flight after the grace period", extra=still)
        # what did not finish stays in the store, released for the next process to take
        left = await bot.deps.work.release_all()
        if left:
            logger.info("left %d unfinished answer(s) for the next process", left)


async def _cancel(task: asyncio.Task[Any]) -> None:
    task.cancel()
    # bounded: a probe stuck in a library must not hold the exit
    await asyncio.wait({task}, timeout=5)


async def _call_slack(
    call: Callable[[], Awaitable[Any]],
    what: str,
    setting: str,
    hint: str,
    api_url: str,
    stop: asyncio.Event,
    unreachable: Callable[[str], None] | None = None,
) -> Any:
    """Run one Web API call; retry an outage after a pause, refuse a bad token at once."""
    last = ""
    for attempt in range(ATTEMPTS):
        if attempt:
            if not stop.is_set():  # after a signal, no retry to announce
                logger.warning("cannot reach Slack (%s); retrying in %gs", last, PAUSE_SECONDS)
            with suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), PAUSE_SECONDS)
            if stop.is_set():
                break
        try:
            return await call()
        except SlackApiError as exc:
            error = str(exc.response.get("error", "unknown_error"))
            if error in TOKEN_ERRORS:
                refused = f"Slack refused {setting} ({error}) on {what}: {hint}"
                raise StartupError(refused, 2) from None
            if exc.response.status_code < 500 and error != "ratelimited":
                raise StartupError(f"Slack {what} failed: {error}", 1) from None
            last = f"{error} (HTTP {exc.response.status_code})"
        except SLACK_UNREACHABLE as exc:
            last = type(exc).__name__
            if unreachable is not None:
                unreachable(f"cannot connect to Slack at {api_url} ({last}); check SLACK_API_URL")
    if stop.is_set():
        raise StartupError("stopped while waiting for Slack", 0)
    raise StartupError(
        f"cannot reach Slack at {api_url} ({last}) after {ATTEMPTS} attempts; "
        "check SLACK_API_URL and the network",
        1,
    )


async def check_bot_token(
    client: AsyncWebClient, *, stop: asyncio.Event, unreachable: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """auth.test with the bot token; the bot's identity on success."""
    hint = "set it to the app's Bot User OAuth Token (xoxb-…) and reinstall the app if needed"
    response = await _call_slack(
        client.auth_test, "auth.test", "SLACK_BOT_TOKEN", hint, client.base_url, stop, unreachable
    )
    return dict(response.data) if isinstance(response.data, dict) else {}


async def open_socket_url(client: AsyncWebClient, app_token: str, *, stop: asyncio.Event) -> str:
    """apps.connections.open with the app-level token: the WebSocket URL to connect to."""
    call = partial(client.apps_connections_open, app_token=app_token)
    hint = "set it to an app-level token (xapp-…) with the connections:write scope"
    response = await _call_slack(
        call, "apps.connections.open", "SLACK_APP_TOKEN", hint, client.base_url, stop
    )
    return str(response["url"])
