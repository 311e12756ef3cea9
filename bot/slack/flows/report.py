"""The week's usage for workspace admins: `/gdocs report` (a private reply) and the App
Home's "This week" section. Who is an admin is what `users.info` says (`is_admin` or
`is_owner`; bot/slack/flows/people.py, kept with the profile for 6 hours). The figures are
`gdocs-bot report`'s, for the last 7 Pacific days, read from the state store (no upstream
call, nothing that names a person)."""

from __future__ import annotations

import asyncio
import logging
from datetime import date, timedelta

from bot.quota import pacific_day
from bot.render import render_report_refused, render_report_unknown, render_week_report
from bot.report.aggregate import Window, aggregate
from bot.report.collect import collect
from bot.report.summary import WeekSummary, week_summary
from bot.slack.boundary import Outcome
from bot.slack.delivery.replies import Reply
from bot.slack.deps import SlackDeps
from bot.slack.flows.people import workspace_admin
from bot.store import ResilientStore, StoreError

logger = logging.getLogger(__name__)

WEEK_DAYS = 7
#: answer records, votes and counters read for the summary at most (each)
SUMMARY_READ_LIMIT = 20_000
#: the longest the summary's reads may take (off the acknowledgement's path)
SUMMARY_TIMEOUT_SECONDS = 2.0


async def this_week(deps: SlackDeps) -> WeekSummary | None:
    """The last 7 Pacific days (today included); None when the store cannot be read."""
    until = date.fromisoformat(pacific_day(deps.clock()))
    window = Window(until - timedelta(days=WEEK_DAYS - 1), until)
    store = deps.store
    if isinstance(store, ResilientStore):
        if not store.up:  # per-process state is not the team's week
            return None
        # three scans: read from the shared store itself, so that a slow one neither
        # counts as an outage nor is answered from per-process state
        store = store.primary
    try:
        async with asyncio.timeout(SUMMARY_TIMEOUT_SECONDS):
            collected = await collect(store, limit=SUMMARY_READ_LIMIT)
    except (StoreError, TimeoutError) as exc:
        logger.info("weekly summary not read: %s", getattr(exc, "message", "timed out"))
        return None
    report = aggregate(collected, window, quota_per_day=deps.quota.config.per_day)
    return week_summary(report)


async def report_summary(deps: SlackDeps, reply: Reply) -> Outcome:
    """`/gdocs report`: the week's summary, privately, to admins; a refusal to others."""
    if not reply.user or not await workspace_admin(deps, reply.client, reply.user):
        await reply.notify_asker(render_report_refused())
        return Outcome(route="report", outcome="refused")
    week = await this_week(deps)
    if week is None:
        await reply.notify_asker(render_report_unknown())
        return Outcome(route="report", outcome="unavailable")
    await reply.notify_asker(render_week_report(week))
    return Outcome(route="report", outcome="ok")
