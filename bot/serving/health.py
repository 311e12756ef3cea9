"""`GET /healthz` (200 while the loop answers), `GET /readyz` (200 when Slack is usable and
Developer Knowledge answered recently, else 503 naming what is not; the store is reported but
never makes the bot unready: an outage degrades to per-process state), `GET /metrics`."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from bot.errors import GdocsError, Reason
from bot.observability.metrics import Metrics
from bot.redact import redact_url
from bot.render import error_sentence, status_detail
from bot.service import DocsService
from bot.store import ResilientStore

logger = logging.getLogger(__name__)

PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4"
#: while the Developer Knowledge server is not answering, re-probe at least this often
UNHEALTHY_PROBE_SECONDS = 5.0
#: how often the state store is pinged, so /readyz shows an outage (and its end) while idle
STORE_PROBE_SECONDS = 5.0
#: a probe answered within `window_factor × interval` keeps the bot ready
WINDOW_FACTOR = 3.0
#: the longest a scrape waits for the gauges read from the store (then: the last values)
REFRESH_SECONDS = 1.0


def operator_detail(error: GdocsError, url: str = "") -> str:
    """An error as `check`, /readyz and the log say it: a server that cannot be reached names
    the setting holding its URL (people in Slack get `error_sentence`, which names none)."""
    facts = error.facts
    where = redact_url(url) if url else "the server"
    if facts is None or not facts.url_setting:
        return error_sentence(error)
    if facts.reason == Reason.TIMED_OUT:
        said = f"no answer from {where} in {facts.seconds or 0:g} s"
    elif facts.reason == Reason.UNAVAILABLE and facts.detail == "cannot connect":
        said = f"cannot connect to {where}"
    else:
        return error_sentence(error)
    return f"{said} — check {facts.url_setting} and the network"


class Readiness:
    """What /readyz reports; set by the runtime and by `probe()`."""

    def __init__(
        self,
        service: DocsService,
        *,
        mode: str,
        store: ResilientStore | None = None,
        probe_interval: float = 60.0,
        probe_timeout: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.service = service
        self.store = store
        self.mode = mode
        self.probe_interval = probe_interval
        self.probe_timeout = probe_timeout
        self._clock = clock
        self.slack_authenticated = False
        #: why start-up's auth.test could not reach Slack (set while it retries)
        self.slack_unreachable = ""
        #: Socket Mode: whether the WebSocket is connected right now
        self.socket_connected: Callable[[], Awaitable[bool]] | None = None
        self.shutting_down = False
        self._probe_failed = False
        self._dk_detail = ""  # for people (the Home tab)
        self._dk_operator = ""  # for /readyz and the log: names the setting to check
        self._dk_tools: tuple[str, ...] = ()
        self.probe_count = 0

    @property
    def window_seconds(self) -> float:
        return self.probe_interval * WINDOW_FACTOR

    async def probe(self) -> None:
        started = self._clock()
        try:
            # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow the cancellation
            # that stops this loop at shutdown when the probe finishes at the same moment
            async with asyncio.timeout(self.probe_timeout):
                statuses = await self.service.status()
        except TimeoutError:
            # a backstop: the client's own timeout (which names the setting) comes first
            said = f"no answer within {self.probe_timeout:g}s"
            self._record(False, said, said)
            return
        except GdocsError as exc:
            self._record(False, error_sentence(exc), operator_detail(exc))
            return
        dk = next((s for s in statuses if s.server == "developer_knowledge"), None)
        # any answer counts, even an error (a bad key is no reason to leave rotation: users
        # get a clear message instead of silence), if it came during this probe
        answered = self.service.recently_healthy(self._clock() - started + 0.01)
        shown = status_detail(dk) if dk is not None else ""
        detail = shown or ("ok" if answered else "no answer")
        self._dk_tools = dk.tools if dk is not None else ()
        failed = dk.error if dk is not None else None
        self._record(answered, detail, operator_detail(failed, dk.url) if dk and failed else detail)

    def _record(self, answered: bool, detail: str, operator: str) -> None:
        self.probe_count += 1
        if answered == self._probe_failed or self.probe_count == 1:  # a change: say so once
            logger.log(
                logging.INFO if answered else logging.WARNING,
                "Developer Knowledge server %s",
                "is answering" if answered else "is not answering",
                extra={"detail": operator},
            )
        self._probe_failed = not answered
        self._dk_detail, self._dk_operator = detail, operator

    def next_probe_in(self) -> float:
        if self.dk_ready():
            return self.probe_interval
        return min(self.probe_interval, UNHEALTHY_PROBE_SECONDS)

    async def run_probes(self) -> None:
        """Probe Developer Knowledge (more often while it is down) and the store until cancelled."""
        await asyncio.gather(self._probe_upstream(), self._probe_store())

    async def _probe_upstream(self) -> None:
        while True:
            try:
                await self.probe()
            except Exception:  # the boundary: a probe bug must not stop the probing
                logger.exception("readiness probe failed")
            await asyncio.sleep(self.next_probe_in())

    async def _probe_store(self) -> None:
        while self.store is not None:
            await self.store.ping()  # never raises: state() says how it went
            await asyncio.sleep(STORE_PROBE_SECONDS)

    def dk_ready(self) -> bool:
        return not self._probe_failed and self.service.recently_healthy(self.window_seconds)

    def dk_status(self, *, operator: bool = False) -> tuple[bool, str]:
        """(ready, why not) of Developer Knowledge: for the Home tab, or for /readyz
        (`operator`: a server that cannot be reached names its setting)."""
        if self.dk_ready():
            return True, ""
        if self._probe_failed:
            return False, self._dk_operator if operator else self._dk_detail
        if self.probe_count == 0:
            return False, "not checked yet"
        return False, f"no answer in the last {self.window_seconds:g}s"

    async def slack_ready(self) -> tuple[bool, str]:
        if not self.slack_authenticated:
            return False, self.slack_unreachable or "checking the bot token with Slack (auth.test)"
        if self.socket_connected is not None and not await self.socket_connected():
            return False, "Socket Mode WebSocket is not connected"
        return True, "ok"

    async def report(self) -> dict[str, Any]:
        slack_ok, slack_detail = await self.slack_ready()
        dk_ok, dk_detail = self.dk_status(operator=True)
        return {
            "ready": slack_ok and dk_ok and not self.shutting_down,
            "mode": self.mode,
            "shutting_down": self.shutting_down,
            "slack": {"ready": slack_ok, "detail": slack_detail},
            "store": {"backend": "none", "ok": True} if self.store is None else self.store.state(),
            "developer_knowledge": {
                "ready": dk_ok,
                "detail": dk_detail or "ok",
                "tools": list(self._dk_tools),
            },
        }


def build_web_app(
    readiness: Readiness, metrics: Metrics, *, refresh: Callable[[], Awaitable[None]] | None = None
) -> web.Application:
    """The operational routes; the caller adds Slack's. `refresh` sets the gauges read from
    the store before a scrape (bounded: past REFRESH_SECONDS the last values show)."""

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def readyz(request: web.Request) -> web.Response:
        report = await readiness.report()
        return web.json_response(report, status=200 if report["ready"] else 503)

    async def prometheus(request: web.Request) -> web.Response:
        if refresh is not None:
            try:
                async with asyncio.timeout(REFRESH_SECONDS):
                    await refresh()
            except TimeoutError:
                logger.info("metrics: the store-backed gauges took too long; showing the last ones")
        # aiohttp refuses a charset inside content_type; Prometheus wants exactly this header
        body = metrics.render().encode()
        return web.Response(body=body, headers={"Content-Type": PROMETHEUS_CONTENT_TYPE})

    app = web.Application(client_max_size=1024 * 1024)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", prometheus)
    return app
