"""Readiness and start-up checks in-process: what /readyz says as Slack and the Developer
Knowledge server come and go, and how start-up treats a refused token or an outage."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from functools import partial

import pytest
from aiohttp.test_utils import TestClient, TestServer
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import Unavailable
from bot.models import Answer, Document, ServerStatus
from bot.observability.metrics import Metrics
from bot.serving.health import (
    PROMETHEUS_CONTENT_TYPE,
    UNHEALTHY_PROBE_SECONDS,
    Readiness,
    build_web_app,
)
from bot.serving.runtime import StartupError, check_bot_token, open_socket_url
from tests.fakes.slack_api import FakeSlack
from tests.fakes.upstream import CLOSED_URL, service_for, settings_for


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class RecordingService:
    """A DocsService whose `status()` answers as scripted and records each probe."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.answered_at: float | None = None
        #: "ok": the server answers; "down": transport failure; "raise": a GdocsError; "hang"
        self.mode = "ok"
        self.probe_count = 0
        self.probed = asyncio.Event()

    @property
    def pay_configured(self) -> bool:
        return False

    async def status(self) -> list[ServerStatus]:
        self.probe_count += 1
        self.probed.set()
        if self.mode == "raise":
            raise Unavailable("the documentation service is unavailable")
        if self.mode == "hang":
            await asyncio.Event().wait()
        ok = self.mode == "ok"
        if ok:
            self.answered_at = self.clock()
        return [
            ServerStatus(
                server="developer_knowledge",
                url="http://127.0.0.1/mcp",
                ok=ok,
                tools=("answer_query", "search_documents") if ok else (),
                detail="MCP 2026-07-28" if ok else "cannot connect",
            )
        ]

    def recently_healthy(self, within_seconds: float = 300.0) -> bool:
        return self.answered_at is not None and self.clock() - self.answered_at <= within_seconds

    async def ask(self, question: str) -> Answer:
        raise NotImplementedError

    async def search(self, query: str) -> Answer:
        raise NotImplementedError

    async def pay(self, query: str, language: str | None = None) -> Answer:
        raise NotImplementedError

    async def docs(self, names: list[str]) -> list[Document]:
        raise NotImplementedError

    async def aclose(self) -> None:
        return None


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def service(clock: FakeClock) -> RecordingService:
    return RecordingService(clock)


@pytest.fixture
def readiness(service: RecordingService, clock: FakeClock) -> Readiness:
    ready = Readiness(service, mode="http", probe_interval=60, probe_timeout=0.2, clock=clock)
    ready.slack_authenticated = True
    return ready


# --- readiness -----------------------------------------------------------------------------
async def test_not_ready_before_the_first_probe(readiness: Readiness) -> None:
    """Until Developer Knowledge has been checked, /readyz says so."""
    report = await readiness.report()
    assert report["ready"] is False
    assert "not checked yet" == report["developer_knowledge"]["detail"]


async def test_ready_after_an_answered_probe_with_the_tools_listed(readiness: Readiness) -> None:
    """A probe that reaches the server makes the bot ready and shows its tools."""
    await readiness.probe()
    report = await readiness.report()
    assert report["ready"] is True
    assert {"ready": True, "detail": "ok", "tools": ["answer_query", "search_documents"]} == report[
        "developer_knowledge"
    ]


async def test_a_failed_probe_makes_the_bot_unready_at_once(
    readiness: Readiness, service: RecordingService, clock: FakeClock
) -> None:
    """A transport failure flips readiness on that probe, with the failure as detail."""
    await readiness.probe()
    clock.now += 60
    service.mode = "down"
    await readiness.probe()
    report = await readiness.report()
    assert report["ready"] is False
    assert "cannot connect" == report["developer_knowledge"]["detail"]


@pytest.mark.parametrize(
    ("mode", "detail"),
    [("raise", "the documentation service is unavailable"), ("hang", "no answer within 0.2s")],
)
async def test_a_probe_that_raises_or_hangs_is_a_failure_not_a_crash(
    readiness: Readiness, service: RecordingService, mode: str, detail: str
) -> None:
    """Errors and timeouts of the probe are reported, and probing can go on."""
    service.mode = mode
    await readiness.probe()
    report = await readiness.report()
    assert report["developer_knowledge"] == {"ready": False, "detail": detail, "tools": []}


async def test_readiness_expires_when_nothing_answered_within_the_window(
    readiness: Readiness, clock: FakeClock
) -> None:
    """No answer for 3 probe intervals (a stuck probe loop, say) means not ready."""
    await readiness.probe()
    clock.now += readiness.window_seconds + 1
    report = await readiness.report()
    assert report["ready"] is False
    assert "no answer in the last 180s" == report["developer_knowledge"]["detail"]


async def test_probes_come_faster_while_the_server_is_down(
    readiness: Readiness, service: RecordingService, clock: FakeClock
) -> None:
    """Healthy: every interval; down: every few seconds, so recovery shows quickly."""
    await readiness.probe()
    assert 60 == readiness.next_probe_in()
    clock.now += 60
    service.mode = "down"
    await readiness.probe()
    assert UNHEALTHY_PROBE_SECONDS == readiness.next_probe_in()


async def test_slack_must_be_authenticated_and_the_socket_connected(readiness: Readiness) -> None:
    """Slack's half: auth.test passed and, in Socket Mode, the WebSocket is up."""
    await readiness.probe()
    connected = False

    async def socket_connected() -> bool:
        return connected

    readiness.socket_connected = socket_connected
    report = await readiness.report()
    assert {"ready": False, "detail": "Socket Mode WebSocket is not connected"} == report["slack"]
    connected = True
    assert (await readiness.report())["ready"] is True
    readiness.slack_authenticated = False
    assert (await readiness.report())["slack"]["ready"] is False


async def test_shutting_down_is_never_ready(readiness: Readiness) -> None:
    """Once shutdown starts /readyz is 503, so load balancers drain the instance."""
    await readiness.probe()
    readiness.shutting_down = True
    report = await readiness.report()
    assert report["ready"] is False
    assert report["shutting_down"] is True


async def test_the_probe_loop_probes_until_cancelled(
    service: RecordingService, clock: FakeClock
) -> None:
    """run_probes keeps probing on its interval and stops cleanly when cancelled."""
    readiness = Readiness(service, mode="http", probe_interval=0.5, clock=clock)
    task = asyncio.create_task(readiness.run_probes())
    for _ in range(2):
        async with asyncio.timeout(5):
            await service.probed.wait()
        service.probed.clear()
    assert 2 <= service.probe_count
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


# --- the routes ------------------------------------------------------------------------------
@pytest.fixture
async def client(readiness: Readiness) -> AsyncIterator[TestClient]:  # type: ignore[type-arg]
    metrics = Metrics()
    metrics.request("command", "ok")
    async with TestClient(TestServer(build_web_app(readiness, metrics))) as test_client:
        yield test_client


async def test_routes_answer_health_readiness_and_metrics(
    client: TestClient,  # type: ignore[type-arg]
    readiness: Readiness,
) -> None:
    """/healthz 200 always; /readyz 503 → 200 with the probe; /metrics in Prometheus text."""
    assert 200 == (await client.get("/healthz")).status
    not_ready = await client.get("/readyz")
    assert 503 == not_ready.status
    assert (await not_ready.json())["ready"] is False
    await readiness.probe()
    assert 200 == (await client.get("/readyz")).status
    metrics = await client.get("/metrics")
    assert PROMETHEUS_CONTENT_TYPE == metrics.headers["Content-Type"]
    assert 'gdocs_requests_total{kind="command",outcome="ok"} 1' in await metrics.text()


# --- start-up checks against the fake Slack ---------------------------------------------------
def _client(slack: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token="xoxb-1-2-3", base_url=slack.url, timeout=5)


@pytest.mark.parametrize("error", ["invalid_auth", "token_revoked", "account_inactive"])
async def test_a_refused_bot_token_is_a_config_error_naming_the_setting(
    slack: FakeSlack, error: str
) -> None:
    """auth.test refusing the token: exit 2, naming SLACK_BOT_TOKEN and Slack's reason."""
    slack.fail("auth.test", error)
    with pytest.raises(StartupError) as caught:
        await check_bot_token(_client(slack), stop=asyncio.Event())
    assert 2 == caught.value.exit_code
    assert "SLACK_BOT_TOKEN" in caught.value.message
    assert error in caught.value.message
    assert 1 == len(slack.calls_to("auth.test"))  # not retried


async def test_a_slack_outage_is_retried_then_given_up_with_exit_1(slack: FakeSlack) -> None:
    """5xx from Slack: retried, then exit 1 naming SLACK_API_URL."""
    slack.server_error("auth.test", status=503, times=5)
    with pytest.raises(StartupError) as caught:
        await check_bot_token(_client(slack), stop=asyncio.Event())
    assert 1 == caught.value.exit_code
    assert "SLACK_API_URL" in caught.value.message
    assert 2 == len(slack.calls_to("auth.test"))


async def test_a_passing_outage_does_not_stop_start_up(slack: FakeSlack) -> None:
    """One 503, then success: start-up goes on with the bot's identity."""
    slack.server_error("auth.test", status=503, times=1)
    identity = await check_bot_token(_client(slack), stop=asyncio.Event())
    assert "UBOT" == identity["user_id"]


async def test_stopping_during_the_retry_pause_ends_start_up_quietly(
    slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    """SIGTERM before a retry: exit 0, no waiting out the pause, and no "retrying" warning
    for a retry that will not come."""
    slack.server_error("auth.test", status=503, times=5)
    stop = asyncio.Event()
    stop.set()
    with (
        caplog.at_level(logging.WARNING, logger="bot.serving.runtime"),
        pytest.raises(StartupError) as caught,
    ):
        await check_bot_token(_client(slack), stop=stop)
    assert 0 == caught.value.exit_code
    assert 1 == len(slack.calls_to("auth.test"))
    assert "retrying" not in caplog.text


async def test_socket_url_comes_from_apps_connections_open_with_the_app_token(
    slack: FakeSlack,
) -> None:
    """The WebSocket URL is asked of SLACK_API_URL with the xapp token."""
    slack.socket_url = "ws://127.0.0.1:1/link"
    url = await open_socket_url(_client(slack), "xapp-1-A1-2-abcdef", stop=asyncio.Event())
    assert "ws://127.0.0.1:1/link" == url
    (call,) = slack.calls_to("apps.connections.open")
    assert "Bearer xapp-1-A1-2-abcdef" == call.headers["authorization"]


async def test_a_refused_app_token_names_slack_app_token(slack: FakeSlack) -> None:
    """apps.connections.open refusing the token: exit 2 naming SLACK_APP_TOKEN."""
    slack.fail("apps.connections.open", "invalid_auth")
    with pytest.raises(StartupError) as caught:
        await open_socket_url(_client(slack), "xapp-1-x", stop=asyncio.Event())
    assert 2 == caught.value.exit_code
    assert "SLACK_APP_TOKEN" in caught.value.message


# --- what /readyz says when something cannot be reached ----------------------------------------
async def test_readyz_names_the_url_setting_when_developer_knowledge_cannot_be_reached(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The real client against a closed port: /readyz and the start-up log (for operators)
    say it cannot connect and name DEVELOPER_KNOWLEDGE_MCP_URL; the Home tab's words (for
    people) do not."""
    async with service_for(settings_for(mcp_max_retries=0)) as service:
        readiness = Readiness(service, mode="http", probe_timeout=10)
        readiness.slack_authenticated = True
        with caplog.at_level(logging.WARNING, logger="bot.serving.health"):
            await readiness.probe()
        report = await readiness.report()
    detail = report["developer_knowledge"]["detail"]
    assert f"cannot connect to {CLOSED_URL} — check DEVELOPER_KNOWLEDGE_MCP_URL" in detail
    [logged] = [r for r in caplog.records if "not answering" in r.getMessage()]
    assert detail == logged.__dict__["detail"]
    ready, for_people = readiness.dk_status()
    assert ready is False
    assert "cannot connect" in for_people
    assert "DEVELOPER_KNOWLEDGE_MCP_URL" not in for_people


async def test_readyz_says_slack_cannot_be_reached_while_start_up_retries(
    readiness: Readiness,
) -> None:
    """auth.test against a closed port: /readyz says Slack cannot be reached at that URL,
    naming SLACK_API_URL, rather than that auth.test "has not succeeded yet"."""
    readiness.slack_authenticated = False
    assert "auth.test" in (await readiness.report())["slack"]["detail"]
    stop = asyncio.Event()
    stop.set()  # one attempt, no pause
    closed = AsyncWebClient(token="xoxb-1-2-3", base_url="http://127.0.0.1:9/api/", timeout=5)
    with pytest.raises(StartupError):
        await check_bot_token(
            closed, stop=stop, unreachable=partial(setattr, readiness, "slack_unreachable")
        )
    slack = (await readiness.report())["slack"]
    assert slack["ready"] is False
    assert slack["detail"].startswith("cannot connect to Slack at http://127.0.0.1:9/api/")
    assert "SLACK_API_URL" in slack["detail"]
