"""Finishing what a process that died had acknowledged: on start-up and every
WORK_RECOVERY_SECONDS each replica renews its own leases and takes over unfinished work
whose lease expired (one taker among replicas), answering it as its listener would have,
with a short note (`bot.slack.work`)."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.delivery.posting import OnceAck
from bot.slack.deps import SlackDeps
from bot.slack.listeners.actions import handle_doc_click
from bot.slack.listeners.commands import handle_command
from bot.slack.listeners.events import handle_question
from bot.slack.listeners.shortcuts import handle_shortcut
from bot.slack.work.durable import without_stale_response_url
from bot.slack.work.worklog import WorkRecord
from bot.store import StoreError

logger = logging.getLogger(__name__)


async def resume(deps: SlackDeps, client: AsyncWebClient, record: WorkRecord) -> None:
    """Finish one taken-over piece of work as its listener would have, with the note."""
    payload = without_stale_response_url(record, time.time())
    logger.info(
        "finishing work a stopped process had accepted",
        extra={"work_id": record.id, "kind": record.kind, "takeovers": record.takeovers},
    )
    if record.kind == "command":
        already_acked = OnceAck(None)
        await handle_command(deps, client, payload, already_acked, record=record, resumed=True)
    elif record.kind in ("mention", "dm", "thread", "auto"):
        event: dict[str, Any] = payload.get("event") or {}
        if not isinstance(event.get("channel"), str) or not isinstance(event.get("ts"), str):
            await deps.work.drop(record, "unreadable")
            return
        bot_user_id = payload.get("bot_user_id")
        await handle_question(
            deps, client, event, bot_user_id, kind=record.kind, record=record, resumed=True
        )
    elif record.kind == "shortcut":
        await handle_shortcut(deps, client, payload, record=record, resumed=True)
    elif record.kind == "action":
        await handle_doc_click(deps, client, payload, record=record, resumed=True)
    else:  # written by a newer version: leave nothing behind
        await deps.work.drop(record, "unknown_kind")


async def recover_once(deps: SlackDeps, client: AsyncWebClient) -> int:
    """Renew this process's leases and take over orphaned work; how much was taken."""
    await deps.work.renew_all()
    orphans = await deps.work.claim_orphans()
    for record in orphans:
        deps.inflight.spawn(resume(deps, client, record))
    return len(orphans)


async def run_recovery(deps: SlackDeps, client: AsyncWebClient) -> None:
    """Forever (cancelled at shutdown): leases renewed every third of their length, orphans
    looked for every WORK_RECOVERY_SECONDS, the first time at once."""
    renew_every = deps.work.lease_seconds / 3
    scan_every = deps.config.work_recovery_seconds
    next_scan = 0.0
    loop = asyncio.get_running_loop()
    while True:
        try:
            if loop.time() >= next_scan and deps.inflight.accepting:
                await recover_once(deps, client)
                next_scan = loop.time() + scan_every
            else:
                await deps.work.renew_all()
        except StoreError as exc:  # a raw store failing: try again next round
            logger.info("work recovery skipped a round: %s", exc.message)
        await asyncio.sleep(min(renew_every, scan_every))
