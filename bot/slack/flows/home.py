"""The App Home: the Home tab (answers left, the servers' state from the last calls any
replica made, the viewer's questions and channels, the week's usage for admins, 👎
suggestions and team answers due for review for those who manage them), published
again within a minute only when what it shows changed; the Messages tab's
prompts once per person per Pacific day; `/gdocs report` (the week's usage, for admins) and
`/gdocs quota`."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Literal, cast

from slack_sdk.web.async_client import AsyncWebClient

from bot import keys, render, tenant
from bot.channels import Followups
from bot.quota import AnswerQuota, QuotaState, next_pacific_midnight, pacific_day
from bot.report import Report, Window, aggregate, collect
from bot.slack import SLACK_CALL_FAILURES
from bot.slack.boundary import DEVELOPER_KNOWLEDGE, Outcome
from bot.slack.delivery.posting import why
from bot.slack.flows.team import is_public, is_team_admin
from bot.slack.memory import ChannelSettingsStore, RecentQuestions, UserProfiles
from bot.slack.work.worklog import Reply
from bot.store import TEXT, ResilientStore, Store, StoreError
from bot.team import TeamAnswer, TeamAnswers
from bot.upstream import Call, UpstreamCalls

logger = logging.getLogger(__name__)

#: a Home tab opened again within this long, with nothing it shows changed, is not
#: published again (views.publish is rate limited per workspace)
HOME_REPUBLISH_SECONDS = 60.0
PROMPTS_CLAIM_SECONDS = 86_400.0
VIEWER_CHANNELS_PAGE = 200
WEEK_DAYS = 7
SUMMARY_READ_LIMIT = 20_000
SUMMARY_TIMEOUT_SECONDS = 2.0
QuotaKind = Literal["counted", "unlimited", "unknown"]
#: a Home asks Slack about the places of drafts from at most this many conversations
DRAFT_PLACES = 10


@dataclass(frozen=True)
class _Changing:
    """What the Home tab shows that changes as people ask: read at every opening."""

    quota: QuotaState | None
    upstream: render.Upstream
    recent: list[render.RecentQuestion]
    #: (drafts, answers due) this viewer sees, None: not read (a team admin is told); out
    #: of repr so a Home without them hashes as it did before team answers existed
    team: tuple[list[TeamAnswer], list[TeamAnswer]] | None = field(default=([], []), repr=False)

    def fingerprint(self) -> str:
        seen = repr(self) + (repr(self.team) if self.team is None or any(self.team) else "")
        return hashlib.sha256(seen.encode()).hexdigest()[:32]


def _upstream(calls: list[Call]) -> render.Upstream:
    if not calls:
        return render.Upstream()
    failed = next((i for i, call in enumerate(calls) if call.error is None), len(calls))
    return render.Upstream(calls[0].at, failed, timed_out=calls[0].error == "timeout")


@dataclass(frozen=True)
class Home:
    store: Store
    quota: AnswerQuota
    profiles: UserProfiles
    recent: RecentQuestions
    channels: ChannelSettingsStore
    upstream: UpstreamCalls
    default_followups: Followups
    clock: Callable[[], datetime]
    team: TeamAnswers
    #: TEAM_ANSWERS_ADMINS (workspace admins manage team answers too)
    team_admins: frozenset[str] = frozenset()

    async def publish(self, client: AsyncWebClient, user: str) -> Outcome:
        """Publish the tab, unless it was published in the last minute with the same
        questions, quota and servers' state."""
        changing = await self._changing(client, user)
        # per installation too: one Grid user id has a tab in each installed workspace
        claim, seen = keys.HOME.key(user), tenant.current() + changing.fingerprint()
        if await self.store.get(claim, TEXT) == seen:
            return Outcome(route="home", outcome="recently_published")
        await self.store.set(claim, seen, TEXT, HOME_REPUBLISH_SECONDS)
        view = render.render_home(await self._input(client, user, changing))
        try:
            await client.views_publish(user_id=user, view=view)
        except SLACK_CALL_FAILURES as exc:
            logger.warning("Home tab not published: %s", why(exc))
            await self.store.delete(claim)  # the next opening tries again
            return Outcome(route="home", outcome="publish_failed")
        return Outcome(route="home", outcome="ok")

    async def _changing(self, client: AsyncWebClient, user: str) -> _Changing:
        try:
            state: QuotaState | None = await self.quota.state(user)
        except StoreError:
            state = None
        asked = [
            render.RecentQuestion(a.text, a.at, a.kind, a.private, a.failed, a.scope)
            for a in await self.recent.of(user)
        ]
        calls = await self.upstream.last(DEVELOPER_KNOWLEDGE)
        team = await self._team(client, user)
        return _Changing(state, _upstream(calls), asked, team)

    async def _team(
        self, client: AsyncWebClient, user: str
    ) -> tuple[list[TeamAnswer], list[TeamAnswer]] | None:
        """Drafts (team admins only) and answers past their review date (the viewer's own,
        or all for team admins); the admin check only when there is something to show.
        None: not read, and the viewer manages them (their Home must not look empty)."""
        try:
            kept = await self.team.all()
        except StoreError as exc:
            logger.info("team answers not read for Home: %s", exc.message)
            admin = await is_team_admin(self.profiles, self.team_admins, client, user)
            return None if admin else ([], [])
        now = self.clock()
        drafts = [a for a in kept if a.status == "draft"]
        due = [a for a in kept if a.status == "approved" and a.review_due(now)]
        if not drafts and not due:
            return [], []
        if await is_team_admin(self.profiles, self.team_admins, client, user):
            return await drafts_seen(client, user, drafts), due
        return [], [a for a in due if a.author == user]

    async def _input(
        self, client: AsyncWebClient, user: str, changing: _Changing
    ) -> render.HomeInput:
        now = self.clock()
        state, quota = changing.quota, "unknown"
        left, per_day, resets_at = 0, 0, next_pacific_midnight(now)
        if state is not None:
            left, per_day, resets_at = state.left_today or 0, state.per_day, state.next_reset
            quota = "counted" if state.per_day else "unlimited"
        # OAuth mode: the week is every workspace's (its topics too), so no admin's to see
        admin = not tenant.current() and await self.profiles.is_admin(client, user) is True
        return render.HomeInput(
            answers_left=left,
            per_day=per_day,
            resets_at=resets_at,
            now=now,
            quota=cast(QuotaKind, quota),
            pause=state.pause if state is not None else None,
            viewer_tz=await self.profiles.tz(client, user),
            upstream=changing.upstream,
            recent=changing.recent,
            channels=await self._viewer_channels(client, user),
            default_followups=self.default_followups,
            week=await this_week(self.store, now, self.quota.config.per_day) if admin else None,
            team_drafts=changing.team[0] if changing.team else (),
            team_due=changing.team[1] if changing.team else (),
            team_unread=changing.team is None,
        )

    async def _viewer_channels(self, client: AsyncWebClient, user: str) -> list[render.ChannelLine]:
        """The channels `user` is in (one page) that have settings."""
        try:
            response = await client.users_conversations(
                user=user,
                types="public_channel,private_channel",
                exclude_archived=True,
                limit=VIEWER_CHANNELS_PAGE,
            )
        except SLACK_CALL_FAILURES as exc:
            logger.info("users.conversations failed: %s", why(exc))
            return []
        found = response.get("channels")
        ids = [c.get("id") for c in found if isinstance(c, dict)] if isinstance(found, list) else []
        settings = await self.channels.of_many(c for c in ids if isinstance(c, str))
        return [
            render.ChannelLine(channel, kept, fixed_auto=self.channels.is_fixed_auto(channel))
            for channel, kept in list(settings.items())[: render.MAX_HOME_CHANNELS]
        ]

    async def set_prompts(self, client: AsyncWebClient, user: str, channel: str) -> Outcome:
        # `channel_id` only: a `thread_ts` makes the agent view show nothing
        key = keys.PROMPTS.key(user, pacific_day(self.clock()))
        if not await self.store.add(key, channel, TEXT, PROMPTS_CLAIM_SECONDS):
            return Outcome(route="prompts", outcome="already_today")
        prompts = [
            {"title": p["title"], "message": p["message"]} for p in render.suggested_prompts()
        ]
        try:
            await client.assistant_threads_setSuggestedPrompts(
                channel_id=channel, prompts=prompts, title=render.PROMPTS_TITLE
            )
        except SLACK_CALL_FAILURES as exc:
            logger.warning("suggested prompts not set: %s", why(exc))
            await self.store.delete_if(key, channel, TEXT)
            return Outcome(route="prompts", outcome="failed")
        return Outcome(route="prompts", outcome="ok")


async def drafts_seen(
    client: AsyncWebClient, user: str, drafts: list[TeamAnswer]
) -> list[TeamAnswer]:
    """Of the drafts, those team admin `user` may see: a public channel's, and a private
    place's only when `user` is in it (a private channel's words stay there). A draft from
    a place Slack does not describe, or past the first DRAFT_PLACES, is not shown."""
    places = list(dict.fromkeys(d.channel or "" for d in drafts if not _in_dm(d)))
    inside = await asyncio.gather(*(_member(client, user, p) for p in places[:DRAFT_PLACES]))
    seen = {place for place, member in zip(places, inside, strict=False) if member}
    return [d for d in drafts if (d.author == user if _in_dm(d) else d.channel in seen)]


def _in_dm(draft: TeamAnswer) -> bool:
    """A DM with the bot: its one person is whoever gave the 👎 there (no im:read needed)."""
    return (draft.channel or "").startswith("D")


async def _member(client: AsyncWebClient, user: str, channel: str) -> bool:
    if not channel or await is_public(client, channel):
        return bool(channel)
    try:  # one page: a private channel with more people than that is read as not joined
        found = await client.conversations_members(channel=channel, limit=1000)
    except SLACK_CALL_FAILURES as exc:
        logger.info("conversations.members failed: %s", why(exc))
        return False
    members = found.get("members")
    return isinstance(members, list) and user in members


async def this_week(store: Store, now: datetime, per_day: int) -> Report | None:
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
    return aggregate(collected, window, quota_per_day=per_day)


async def report_summary(
    reply: Reply, profiles: UserProfiles, store: Store, now: datetime, per_day: int
) -> Outcome:
    if tenant.current():  # OAuth mode: the figures and topics are every workspace's
        await reply.notify_asker(render.notice("report_everywhere"))
        return Outcome(route="report", outcome="elsewhere")
    if not reply.user or not await profiles.is_admin(reply.client, reply.user):
        await reply.notify_asker(render.notice("report_refused"))
        return Outcome(route="report", outcome="refused")
    week = await this_week(store, now, per_day)
    if week is None:
        await reply.notify_asker(render.notice("report_unknown"))
        return Outcome(route="report", outcome="unavailable")
    await reply.notify_asker(render.render_week_report(week))
    return Outcome(route="report", outcome="ok")


async def quota_status(
    reply: Reply, profiles: UserProfiles, quota: AnswerQuota, now: datetime
) -> Outcome:
    """`/gdocs quota`: the team's and the asker's answers left."""
    try:
        state = await quota.state(reply.user)
    except StoreError:
        await reply.notify_asker(render.notice("quota_unknown"))
        return Outcome(route="quota", outcome="unavailable")
    tz = await profiles.tz(reply.client, reply.user)
    await reply.notify_asker(render.render_quota_status(state, tz=tz, now=now))
    return Outcome(route="quota", outcome="ok")
