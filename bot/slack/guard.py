"""The listener boundary: one log line and one metric per handled request, graceful-shutdown
tracking, and the last line of defence that turns a bug into a polite message.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from bot.render import Message
from bot.slack.context import BotContext
from bot.slack.posting import plain

logger = logging.getLogger(__name__)

RESTARTING = "I'm restarting — try again in a moment."
SOMETHING_WRONG = "Something went wrong on our side. Please try again in a moment."


@dataclass
class RequestRecord:
    """What the request log line says; listeners fill in `route`, `outcome` and, once an
    upstream answer is in, the `server` and `tool` it came from."""

    kind: str
    request_id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    route: str = "-"
    outcome: str = "ok"
    #: "developer_knowledge" or "pay"
    server: str = "-"
    #: the MCP tool whose result was shown (search_documents when answer_query's quota is spent)
    tool: str = "-"


Work = Callable[[RequestRecord], Awaitable[None]]
Tell = Callable[[Message], Awaitable[object]]


async def guarded(ctx: BotContext, kind: str, work: Work, tell: Tell) -> None:
    """Run `work`; log and count it; never let an exception escape.

    `tell` reaches the user (ephemerally where possible) for "restarting" and internal errors.
    """
    record = RequestRecord(kind)
    started = time.perf_counter()
    try:
        # run by ctx.inflight.spawn: shutdown waits for the "restarting" notice as for an answer
        if not ctx.inflight.accepting:
            record.outcome = "restarting"
            await tell(plain(RESTARTING))
            return
        await work(record)
    except Exception:
        record.outcome = "internal_error"
        logger.exception("slack %s failed", kind, extra={"request_id": record.request_id})
        await _tell_safely(tell, record)
    finally:
        latency_ms = round((time.perf_counter() - started) * 1000)
        logger.info(
            "slack %s handled",
            kind,
            extra={
                "request_id": record.request_id,
                "kind": kind,
                "route": record.route,
                "server": record.server,
                "tool": record.tool,
                "latency_ms": latency_ms,
                "outcome": record.outcome,
            },
        )
        ctx.metrics.request(kind, record.outcome)


def ignored(ctx: BotContext, kind: str, why: str) -> None:
    """A delivery that needs no answer (a bot's message, an edit, an unknown button): one
    DEBUG line and the metric, no INFO line."""
    logger.debug("slack %s ignored: %s", kind, why, extra={"kind": kind, "outcome": "ignored"})
    ctx.metrics.request(kind, "ignored")


async def _tell_safely(tell: Tell, record: RequestRecord) -> None:
    try:
        await tell(plain(SOMETHING_WRONG))
    except Exception:  # the boundary: nothing more we can tell the user
        logger.exception(
            "could not tell the user about a failure", extra={"request_id": record.request_id}
        )
