"""Building the real MCP client service against the loopback fakes, for tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from bot.settings import Settings
from bot.upstream import GoogleDocsService
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, FakePay

if TYPE_CHECKING:
    from tests.fakes.dk_rest import FakeDeveloperKnowledgeRest

#: nothing listens on the discard port on loopback: connections are refused at once
CLOSED_URL = "http://127.0.0.1:9/mcp"


def settings_for(
    dk: FakeDeveloperKnowledge | None = None,
    pay: FakePay | None = None,
    *,
    rest: FakeDeveloperKnowledgeRest | None = None,
    **overrides: Any,
) -> Settings:
    """Settings aimed at the fakes, with a short timeout; `overrides` win. `rest`: the REST
    backend (DEVELOPER_KNOWLEDGE_API=rest) against that fake."""
    values: dict[str, Any] = {
        "google_api_key": "test-key",
        "developer_knowledge_mcp_url": dk.url if dk else CLOSED_URL,
        "pay_mcp_url": pay.url if pay else CLOSED_URL,
        "mcp_timeout_seconds": 3.0,
        "mcp_max_retries": 2,
        "state_url": "memory://",
    }
    if rest is not None:
        values |= {"developer_knowledge_api": "rest", "developer_knowledge_rest_url": rest.url}
    values.update(overrides)
    return Settings(**values)


@asynccontextmanager
async def service_for(settings: Settings, **kwargs: Any) -> AsyncIterator[GoogleDocsService]:
    """A service with millisecond retry backoff, closed afterwards."""
    kwargs.setdefault("backoff_base", 0.001)
    service = GoogleDocsService(settings, **kwargs)
    try:
        yield service
    finally:
        await service.aclose()


async def until(condition: Callable[[], bool], what: str, within: float = 5.0) -> None:
    """Wait (bounded) for a condition a fake server's thread makes true; it has no event."""
    try:
        async with asyncio.timeout(within):
            while not condition():  # noqa: ASYNC110 - state changes in the server's thread
                await asyncio.sleep(0.005)
    except TimeoutError:
        raise AssertionError(f"timed out after {within}s waiting for {what}") from None
