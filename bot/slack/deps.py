"""What the listeners share (built by bot/serving/assembly.py); the flows, built here once,
get only the parts they use."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from slack_bolt.async_app import AsyncAck

from bot import tenant
from bot.feedback import FeedbackLog
from bot.observability.metrics import Metrics
from bot.quota import AnswerQuota
from bot.report.tally import DailyTally
from bot.service import DocsService
from bot.settings import Settings
from bot.slack.boundary import Boundary, InFlight, Job, Notify, duplicate
from bot.slack.flows.answer import Answers
from bot.slack.flows.home import Home
from bot.slack.flows.pages import Pages
from bot.slack.flows.routing import Router
from bot.slack.flows.settings import ChannelCommand
from bot.slack.flows.sharing import PrivateAnswers
from bot.slack.flows.team import TeamFlow
from bot.slack.flows.team_first import TeamFirst
from bot.slack.memory import (
    ChannelSettingsStore,
    RateLimiter,
    RecentQuestions,
    ThreadMemory,
    UserProfiles,
    delivery_key,
)
from bot.slack.work.stops import ActiveStreams
from bot.slack.work.worklog import WorkLog, WorkRecord
from bot.store import Store
from bot.team import TeamAnswers
from bot.upstream import UpstreamCalls

if TYPE_CHECKING:
    from bot.slack.oauth import Installs

__all__ = ["SlackDeps"]


@dataclass(frozen=True)
class SlackDeps:
    settings: Settings
    service: DocsService
    metrics: Metrics
    inflight: InFlight
    store: Store
    router: Router
    limiter: RateLimiter
    profiles: UserProfiles
    threads: ThreadMemory
    quota: AnswerQuota
    clock: Callable[[], datetime]
    work: WorkLog
    feedback: FeedbackLog
    recent: RecentQuestions
    boundary: Boundary
    channels: ChannelSettingsStore
    tally: DailyTally
    team: TeamAnswers
    streams: ActiveStreams = field(default_factory=ActiveStreams)
    #: OAuth mode's installations and install states (None with one token)
    installs: Installs | None = None

    async def take(
        self,
        ack: AsyncAck,
        body: dict[str, Any],
        kind: str,
        payload: dict[str, Any],
        handle: Callable[..., Coroutine[Any, Any, None]],
    ) -> None:
        """Record the work before the ack (a restart finishes it), then `handle(record=…)`."""
        if self.settings.oauth_mode:  # a restart resumes it with its installation's token
            payload = {**payload, "tenant": tenant.current()}
        record = await self.work.accept(kind, payload, key=delivery_key(body))
        await ack()
        if record is None:  # its work is recorded already (and being answered)
            duplicate(self.metrics)
        else:
            self.inflight.spawn(handle(record=record))

    async def run(self, kind: str, job: Job, notify: Notify, record: WorkRecord | None) -> None:
        """`job` at the boundary, then its work record is done."""
        await self.boundary(kind, job, notify)
        if record is not None:
            await self.work.finish(record)

    @cached_property
    def answers(self) -> Answers:
        ttl = self.settings.cache_answer_ttl_seconds  # what a team answer's savings last
        return Answers(
            service=self.service,
            store=self.store,
            limiter=self.limiter,
            profiles=self.profiles,
            threads=self.threads,
            recent=self.recent,
            tally=self.tally,
            feedback=self.feedback,
            quota=self.quota,
            pages=Pages(self.service, self.store, self.settings),
            private=PrivateAnswers(self.store),
            team=TeamFirst(self.team, self.service, self.store, ttl, self.clock),
            clock=self.clock,
        )

    @cached_property
    def home(self) -> Home:
        return Home(
            store=self.store,
            quota=self.quota,
            profiles=self.profiles,
            recent=self.recent,
            channels=self.channels,
            upstream=UpstreamCalls(self.store, self.clock),
            default_followups=self.settings.thread_followups,
            clock=self.clock,
            team=self.team,
            team_admins=self.settings.team_admin_ids,
        )

    @cached_property
    def channel_command(self) -> ChannelCommand:
        return ChannelCommand(self.channels, self.profiles, self.settings)

    @cached_property
    def team_flow(self) -> TeamFlow:
        return TeamFlow(self.team, self.profiles, self.settings.team_admin_ids, self.clock)
