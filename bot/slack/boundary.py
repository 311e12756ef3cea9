"""The listener boundary: one log line and one metric per request (a flow's `Outcome`),
shutdown refusals, and a bug turned into a polite message."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from bot.observability.logging import start_request
from bot.observability.metrics import Metrics
from bot.render import Message, notice

logger = logging.getLogger(__name__)

DEVELOPER_KNOWLEDGE = "developer_knowledge"


@dataclass(frozen=True)
class Outcome:
    #: answer, search, pay, doc, help, or "-" before routing
    route: str = "-"
    #: ok, ok_with_note, help, rate_limited, upload_failed, an error code, …
    outcome: str = "ok"
    #: the server the request was for: developer_knowledge, pay, or "-"
    server: str = "-"
    #: the MCP tool whose result was shown
    tool: str = "-"


class InFlight(Protocol):
    """`bot.serving.inflight.InFlight`: the work a graceful shutdown finishes."""

    accepting: bool

    @property
    def count(self) -> int: ...

    def spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]: ...

    async def start(
        self, work: Coroutine[Any, Any, None], *, until: asyncio.Event, within: float
    ) -> None: ...

    async def drain(self, timeout: float) -> bool: ...


#: one request's job (a closure over what it was asked), run once by the boundary
Job = Callable[[], Awaitable[Outcome]]
Notify = Callable[[Message], Awaitable[object]]


class Boundary:
    def __init__(self, *, inflight: InFlight, metrics: Metrics) -> None:
        self._inflight = inflight
        self._metrics = metrics

    async def __call__(self, kind: str, job: Job, notify: Notify) -> None:
        """Run `job`; `notify` tells the asker of a restart or an internal error."""
        request_id = start_request()
        started = time.perf_counter()
        outcome = Outcome(outcome="internal_error")
        try:
            # run by inflight.spawn: shutdown waits for the "restarting" notice as for an answer
            if not self._inflight.accepting:
                outcome = Outcome(outcome="restarting")
                await notify(notice("restarting"))
            else:
                outcome = await job()
        except Exception:  # the boundary: a bug becomes a polite message and one log entry
            logger.exception("slack %s failed", kind)
            try:
                await notify(notice("internal_error"))
            except Exception:  # the boundary: nothing more we can tell the user
                logger.exception("could not tell the user about a failure")
        finally:
            latency_ms = round((time.perf_counter() - started) * 1000)
            logger.info(
                "slack %s handled",
                kind,
                extra={"request_id": request_id, "kind": kind, "latency_ms": latency_ms}
                | asdict(outcome),
            )
            self._metrics.request(kind, outcome.outcome)


def ignored(metrics: Metrics, kind: str, why: str) -> None:
    """A delivery that needs no answer: a DEBUG line and the metric."""
    logger.debug("slack %s ignored: %s", kind, why, extra={"kind": kind, "outcome": "ignored"})
    metrics.request(kind, "ignored")


def duplicate(metrics: Metrics) -> None:
    logger.info("duplicate delivery ignored", extra={"kind": "dedupe", "outcome": "duplicate"})
    metrics.request("dedupe", "duplicate")


async def say_nothing(msg: Message) -> None:
    """The `notify` for requests with nowhere to say a failure (the Home tab, a preview)."""


# --- reading a Slack payload, whose parts may be missing or of another type
def as_dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def first_action(body: dict[str, Any]) -> dict[str, Any]:
    actions = body.get("actions")
    return as_dict(actions[0]) if isinstance(actions, list) and actions else {}
