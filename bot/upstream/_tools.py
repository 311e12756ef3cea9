"""Which Developer Knowledge tool does which job (names have changed over time), and
recording every tool call as one upstream call with its outcome."""

from __future__ import annotations

import contextvars
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.errors import GdocsError
from bot.observability.metrics import Metrics
from bot.upstream._transport import McpClient

#: loop time by which the current operation must finish (set by the service per operation);
#: optional work such as fetching titles stops early so the answer itself is not lost
deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("deadline", default=None)


@dataclass(frozen=True)
class DkTools:
    """Which tool name this server uses for each job (None: it has none)."""

    search: str | None = "search_documents"
    get_many: str | None = "get_documents"
    get_one: str | None = None
    answer: str | None = "answer_query"

    @classmethod
    def from_names(cls, names: list[str]) -> DkTools:
        have = set(names)

        def first(*candidates: str) -> str | None:
            return next((c for c in candidates if c in have), None)

        return cls(
            search=first("search_documents", "search_document_chunks"),
            get_many=first("get_documents", "batch_get_documents"),
            get_one=first("get_document"),
            answer=first("answer_query"),
        )


def missing_tools(names: Sequence[str]) -> tuple[str, ...]:
    """The jobs a Developer Knowledge server listing `names` cannot do, by their tool's name:
    answer_query, search_documents, get_documents (older names count)."""
    tools = DkTools.from_names(list(names))
    missing = [
        ("answer_query", tools.answer is None),
        ("search_documents", tools.search is None),
        ("get_documents", tools.get_many is None and tools.get_one is None),
    ]
    return tuple(name for name, absent in missing if absent)


async def timed_call(
    client: McpClient, metrics: Metrics, tool: str, arguments: dict[str, Any]
) -> Any:
    """client.call_tool, recorded as one upstream call (retries included) with its outcome."""
    started = time.perf_counter()
    outcome = "cancelled"
    try:
        result = await client.call_tool(tool, arguments)
        outcome = "ok"
        return result
    except GdocsError as exc:
        outcome = exc.code.value
        raise
    finally:
        metrics.upstream(client.server.key, tool, outcome, time.perf_counter() - started)


class Heartbeat:
    """When the Developer Knowledge server last answered anything (a refusal counts: it is
    up); the DK client beats it, readiness reads it."""

    def __init__(self) -> None:
        self._at: float | None = None

    def beat(self) -> None:
        self._at = time.monotonic()

    def within(self, seconds: float) -> bool:
        return self._at is not None and time.monotonic() - self._at <= seconds
