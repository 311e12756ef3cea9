"""Closing the upstream service ends everything it started: work whose callers left is
cancelled, so nothing calls upstream after the close."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable

import pytest

from tests.fakes.mcp_servers import FakeDeveloperKnowledge, Fault
from tests.fakes.upstream import service_for, settings_for, until

BUCKETS = "documents/docs.cloud.google.com/storage/docs/creating-buckets"


def _running_besides(before: set[asyncio.Task[object]]) -> set[asyncio.Task[object]]:
    return {t for t in asyncio.all_tasks() if t not in before and not t.done()}


async def _abandoned(start: Callable[[], Awaitable[object]], arrived: Callable[[], bool]) -> None:
    """Starts a call, waits for it to reach the server, then cancels its only caller."""
    caller = asyncio.ensure_future(start())
    await until(arrived, "the call to reach the server")
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller


async def test_closing_ends_a_document_fetch_whose_caller_left(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A page fetch outlives its cancelled caller (others may share it), but not the close:
    a retry after the close would open a connection pool nobody closes."""
    before = set(asyncio.all_tasks())
    dk_server.faults.append(Fault(status=503, delay=0.3, tool="get_documents"))

    def fetches() -> int:
        return len(dk_server.tool_calls("get_documents"))

    async with service_for(settings_for(dk_server, mcp_max_retries=2)) as service:
        await _abandoned(lambda: service.docs([BUCKETS]), lambda: fetches() == 1)
        assert _running_besides(before), "the shared fetch goes on for other callers"
    assert set() == _running_besides(before)
    assert 1 == fetches(), "the held 503 was the only request: no retry after the close"


async def test_closing_ends_an_answer_whose_askers_left(dk_server: FakeDeveloperKnowledge) -> None:
    """An answer held upstream, every asker gone: closing cancels it instead of leaving it."""
    before = set(asyncio.all_tasks())
    dk_server.answer_gate = threading.Event()
    try:
        async with service_for(settings_for(dk_server, answer_quota_per_minute=0)) as service:
            await _abandoned(
                lambda: service.ask("how do I create a bucket?"),
                lambda: dk_server.answers_held == 1,
            )
            assert _running_besides(before), "the shared answer goes on for other askers"
        assert set() == _running_besides(before)
    finally:
        dk_server.answer_gate.set()
