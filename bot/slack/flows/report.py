"""The week's usage for workspace admins (`is_admin` or `is_owner` in users.info):
`/gdocs report` (a private reply) and the Home tab's "This week". The figures are
`gdocs-bot report`'s for the last 7 Pacific days, read from the store (nothing names a
person, no upstream call)."""

from __future__ import annotations

import asyncio
import logging
from datetime import date, datetime, timedelta

from bot.quota import pacific_day
from bot.render import render_report_refused, render_report_unknown, render_week_report
from bot.report import WeekSummary, Window, aggregate, collect, week_summary
from bot.slack.boundary import Outcome
from bot.slack.delivery.replies import Reply
from bot.slack.memory.state import UserProfiles
from bot.store import ResilientStore, Store, StoreError

logger = logging.getLogger(__name__)

WEEK_DAYS = 7
#: answer records, votes and counters read for the summary at most (each)
SUMMARY_READ_LIMIT = 20_000
#: the longest the summary's reads may take (off the acknowledgement's path)
SUMMARY_TIMEOUT_SECONDS = 2.0


async def this_week(store: Store, now: datetime, per_day: int) -> WeekSummary | None:
    """The last 7 Pacific days (today included); None when the store cannot be read."""
    until = date.fromisoformat(pacific_day(now))
    window = Window(until - timedelta(days=WEEK_DAYS - 1), until)
    if isinstance(store, ResilientStore):
        if not store.up:  # per-process state is not the team's week
            return None
        # read the shared store itself: a slow scan is neither an outage nor per-process
        store = store.primary
    try:
        async with asyncio.timeout(SUMMARY_TIMEOUT_SECONDS):
            collected = await collect(store, limit=SUMMARY_READ_LIMIT)
    except (StoreError, TimeoutError) as exc:
        logger.info("weekly summary not read: %s", getattr(exc, "message", "timed out"))
        return None
    return week_summary(aggregate(collected, window, quota_per_day=per_day))


async def report_summary(
    reply: Reply, profiles: UserProfiles, store: Store, now: datetime, per_day: int
) -> Outcome:
    """`/gdocs report`: the week's summary, privately, to admins; a refusal to others."""
    if not reply.user or not await profiles.is_admin(reply.client, reply.user):
        await reply.notify_asker(render_report_refused())
        return Outcome(route="report", outcome="refused")
    week = await this_week(store, now, per_day)
    if week is None:
        await reply.notify_asker(render_report_unknown())
        return Outcome(route="report", outcome="unavailable")
    await reply.notify_asker(render_week_report(week))
    return Outcome(route="report", outcome="ok")
