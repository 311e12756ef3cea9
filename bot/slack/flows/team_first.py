"""The team's answer before Google's docs (issue 42): found where the question was asked, given
as an `Answer` (tool "team_answer"), counted as used and, once per question while a generated
answer would have stayed cached, as an answer_query call saved."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from bot import keys, render
from bot.models import Answer, Scope
from bot.report import tally
from bot.service import DocsService
from bot.slack.flows.routing import Route
from bot.store import TEXT, Store, StoreError
from bot.team import TeamAnswers
from bot.upstream import question_key

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TeamFirst:
    team: TeamAnswers
    service: DocsService
    store: Store
    #: how long a generated answer stays cached (CACHE_ANSWER_TTL_SECONDS)
    answer_ttl: float
    clock: Callable[[], datetime]

    async def find(self, route: Route, channel: str | None) -> Answer | None:
        """The team's answer visible in `channel`, not yet checked; None: Google's docs are
        asked."""
        if route.kind != "answer":
            return None
        # What is asked is looked up: a follow-up's query with its thread's question
        # ("<earlier> — follow-up: <text>"), as its own words ("and in Go?") mean something
        # else in every thread; a full question in a thread is routed, and found, as typed.
        try:
            found = await self.team.find(route.query, channel)
        except StoreError as exc:  # the team's answers out of reach: Google's docs answer
            logger.info("team answers not read: %s", exc.message)
            return None
        if found is None:
            return None
        return render.answer_from_team(found, route.query, self.clock())

    async def counts(self, query: str, scope: Scope) -> list[str]:
        """The report's counts of a team answer given: used, and saved when answer_query would
        have been asked: no generated answer cached, and none stood in for within the time it
        would have stayed cached (later askings would have been cache hits)."""
        if await self.service.has_answer(query, scope=scope):
            return [tally.TEAM_USED]
        asked = "+".join(scope) + ":" + question_key(query)
        key = keys.TEAM_SAVED.key(hashlib.sha256(asked.encode()).hexdigest())
        try:
            first = self.answer_ttl <= 0 or await self.store.add(key, "1", TEXT, self.answer_ttl)
        except StoreError:  # not told: no saving claimed
            first = False
        return [tally.TEAM_USED, tally.TEAM_SAVED] if first else [tally.TEAM_USED]

    async def count_use(self, answer: Answer | None) -> None:
        """One more use of the team answer given, if one was (Home's "times used")."""
        if answer is None or answer.team is None:
            return
        try:
            await self.team.count_use(answer.team.id)
        except StoreError as exc:  # a count, not the answer: it went out
            logger.info("team answer use not counted: %s", exc.message)
