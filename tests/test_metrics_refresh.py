"""/metrics refreshes the gauges that live in the shared store before it renders them, and a
store that does not answer never holds a scrape for longer than REFRESH_SECONDS."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.observability.metrics import Metrics
from bot.serving import health
from bot.serving.health import Readiness, build_web_app
from tests.test_runtime_readiness import FakeClock, RecordingService


def _readiness() -> Readiness:
    return Readiness(RecordingService(FakeClock()), mode="http")


async def test_each_scrape_shows_the_gauges_as_the_refresh_just_set_them() -> None:
    """The refresh hook runs before every render: two scrapes, two fresh values."""
    metrics = Metrics()
    left = iter([49, 48])

    async def refresh() -> None:
        metrics.set_gauge("gdocs_answers_left_today", "left", next(left))

    app = build_web_app(_readiness(), metrics, refresh=refresh)
    async with TestClient(TestServer(app)) as client:
        first = await (await client.get("/metrics")).text()
        second = await (await client.get("/metrics")).text()
    assert "gdocs_answers_left_today 49" in first
    assert "gdocs_answers_left_today 48" in second


async def test_a_refresh_that_hangs_still_gets_the_last_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A refresh that never returns: the scrape answers 200 with what was there before."""
    monkeypatch.setattr(health, "REFRESH_SECONDS", 0.05)
    metrics = Metrics()
    metrics.set_gauge("gdocs_answers_left_today", "left", 7)

    async def refresh() -> None:
        await asyncio.Event().wait()

    app = build_web_app(_readiness(), metrics, refresh=refresh)
    async with TestClient(TestServer(app)) as client:
        async with asyncio.timeout(5):
            response = await client.get("/metrics")
        assert 200 == response.status
        assert "gdocs_answers_left_today 7" in await response.text()
