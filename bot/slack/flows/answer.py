"""Answering one routed question from any surface: rate limit → progress → upstream (steps
on a streamed reply) → rendered answer or a short reason; its writes in the work record's
"done" batch."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from bot import render
from bot.errors import ErrorCode, GdocsError
from bot.feedback import AnswerRecord, FeedbackLog, answer_record, fallback_label, new_answer_id
from bot.models import Answer, Scope
from bot.names import normalize_doc_ref
from bot.quota import AnswerQuota
from bot.report import DailyTally, answered_counts, tally
from bot.service import DocsService
from bot.slack.boundary import DEVELOPER_KNOWLEDGE, Outcome
from bot.slack.delivery.replies import Progress, Step
from bot.slack.flows.home import quota_status, report_summary
from bot.slack.flows.pages import FIRST_PAGE, Pages, render_off_loop
from bot.slack.flows.routing import SCOPED_KINDS, Route, asked_words
from bot.slack.flows.sharing import PrivateAnswers, answer_privately
from bot.slack.flows.team_first import TeamFirst
from bot.slack.memory import RateLimiter, RecentQuestions, ThreadMemory, ThreadTopic, UserProfiles
from bot.slack.work.worklog import Reply, Staged, TrackedReply
from bot.store import Op, Store
from bot.verify import count_commands

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Answers:
    service: DocsService
    store: Store
    limiter: RateLimiter
    profiles: UserProfiles
    threads: ThreadMemory
    recent: RecentQuestions
    tally: DailyTally
    feedback: FeedbackLog
    quota: AnswerQuota
    pages: Pages
    private: PrivateAnswers
    team: TeamFirst
    clock: Callable[[], datetime]

    async def __call__(
        self,
        reply: Reply,
        route: Route,
        *,
        question: str,
        name_asker: bool,
        command: str = "/gdocs",
        about: str | None = None,
        skip_team: bool = False,
    ) -> Outcome:
        """`about`: the author of the message asked about (the message shortcut); `skip_team`:
        Google's docs asked even when the team answered ("Ask Google's docs too")."""
        logger.debug("question routed", extra={"question": question})
        told = await self._without_asking(reply, route, command)
        if told is not None:
            return told
        question_kind = route.kind != "doc"  # a whole page is not a question to the report
        scope = sent_scope(route, self.service.backend)
        by_scope = tally.scope_counts(scope)  # the report's "By product"
        if reply.user is not None:
            retry_after = await self.limiter.try_acquire(reply.user)
            if retry_after is not None:
                per_minute = self.limiter.per_minute
                await reply.notify_asker(render.render_rate_limited(per_minute, retry_after))
                if question_kind:
                    await self.tally.count(tally.QUESTIONS, tally.RATE_LIMITED, *by_scope)
                return Outcome(route=route.kind, outcome="rate_limited")
        if route.kind == "doc" or route.private:
            reply.progress.decline()  # a whole page, or an answer for the asker alone
        # looked up before the progress, which names Google's docs when they are asked
        team = None if skip_team else await self.team.find(route, reply.channel)
        asked = asked_words(question)  # quoted as asked: without `private`, `search`, …
        await reply.start_progress(render.render_progress(asked), kind="team" if team else None)
        pay = route.kind == "pay" and self.service.pay_configured
        server = "pay" if pay else DEVELOPER_KNOWLEDGE
        failed = False  # marked in the asker's recent questions (Home)
        try:
            if route.kind == "doc":
                doc = await self.pages.fetch(normalize_doc_ref(route.query))
                outcome = await self.pages.show(reply, doc, page=FIRST_PAGE)
                return Outcome(route="doc", outcome=outcome, server=server, tool="get_documents")
            result = await (self._given(reply.progress, team) if team else self._ask(reply, route))
            label = fallback_label(result)
            counts = (
                tally.QUESTIONS,
                *answered_counts(result.kind, label, route.kind, result.reuse, result.tool),
                *(await self.team.counts(route.query, scope) if team else ()),
                *by_scope,
            )
            await self._deliver(
                reply, route, result, question, name_asker=name_asker, about=about, counts=counts
            )
            await self.team.count_use(team)
            return Outcome(
                route=route.kind,
                outcome="ok_with_note" if result.fallback else "ok",
                server="pay" if result.kind == "pay" else DEVELOPER_KNOWLEDGE,
                tool=result.tool or "-",
            )
        except GdocsError as error:
            failed = True
            shown = asked if name_asker else None  # where the error replaces a command's note
            await tell_failure(reply, error, shown=shown, retry=question)
            if question_kind:
                await self.tally.count(tally.QUESTIONS, tally.FAILED, *by_scope)
            return Outcome(route=route.kind, outcome=error.code.value, server=server)
        finally:
            await reply.finish()
            if reply.user is not None:
                await self.recent.remember(
                    reply.user,
                    route.query,
                    kind=route.kind,
                    private=route.private,
                    failed=failed,
                    scope=scope,
                )

    async def _deliver(
        self,
        reply: Reply,
        route: Route,
        result: Answer,
        question: str,
        *,
        name_asker: bool,
        about: str | None,
        counts: Sequence[str],
    ) -> None:
        says_when = result.fallback is not None and result.fallback.until is not None
        tz = await self.profiles.tz(reply.client, reply.user) if says_when else None
        answer_id = new_answer_id()  # the feedback buttons name the answer by it

        def record(ts: str | None) -> AnswerRecord:
            return answer_record(
                result,
                answer_id=answer_id,
                channel=reply.channel,
                ts=ts,
                thread_ts=reply.thread_ts,
                asker=reply.user,
                now=self.clock(),
                route=route.kind,
            )

        named = name_asker and not route.private  # a private answer's DM adds its own buttons
        parts = await render_off_loop(
            render.answer_size(result),
            render.answer_parts,
            result,
            asker=reply.user if named else None,
            question=question if named else None,
            tz=tz,
            now=self.clock(),
            feedback_id=None if route.private else answer_id,
            about=None if route.private else about,
            channel_scope=route.scope if route.scope_from == "channel" else (),
            file_chars=self.pages.settings.doc_file_threshold_chars,
            ask_google=question,  # under a team answer
        )
        msg: render.Message = {"text": parts.text, "blocks": parts.head + parts.body + parts.tail}
        if route.private:  # what was asked, without the `private` that asked for privacy
            await self.feedback.keep_answer(record(None))  # its 👍 / 👎, its shared copy's
            await answer_privately(self.private, reply, msg, route.query, answer_id)
            await self.tally.count(*counts)
            return
        reply.progress.stage(render.streamed_answer(result, parts))
        # what the thread is about, with the products its question named (`in:…`)
        own_scope = route.scope if route.scope_from == "question" else None
        topic = ThreadTopic(route.topic or route.query, reply.user, own_scope)

        def writes(ts: str | None) -> list[Op]:
            ops = [self.feedback.answer_op(record(ts))]
            if reply.channel and ts and not reply.thread_ts:  # a new thread: its root is ts
                ops.append(self.threads.op(reply.channel, ts, topic))
            return ops + list(self.tally.ops(*counts))

        if reply.channel and reply.thread_ts:
            # remembered before the post: a follow-up sent the moment the answer shows finds it
            await self.threads.remember(reply.channel, reply.thread_ts, topic)
        staged = Staged(writes)
        if isinstance(reply, TrackedReply):  # in the work's "done" batch
            reply.staged = staged
        await staged.write(self.store, await reply.deliver(msg))  # unless the batch took them

    async def _without_asking(self, reply: Reply, route: Route, command: str) -> Outcome | None:
        """What is told without asking the docs (help, quota, the report, a refusal), or None."""
        if route.kind == "help":
            await reply.notify_thread(render.render_help(command))
            return Outcome(route="help", outcome="help")
        if route.kind == "quota":
            return await quota_status(reply, self.profiles, self.quota, self.clock())
        if route.kind == "report":
            per_day = self.quota.config.per_day
            return await report_summary(reply, self.profiles, self.store, self.clock(), per_day)
        if route.kind == "team":  # its list and buttons are `/gdocs team`'s (flows/team.py)
            await reply.notify_asker(render.render_team_notice("by_command"))
            return Outcome(route="team", outcome="help")
        if route.scope_error is not None or (route.scope and route.kind not in SCOPED_KINDS):
            # `in:` naming no products, or on a page or Pay
            refused = render.render_scope_refused(route.scope_error or "not_scoped")
            await reply.notify_asker(refused)
            return Outcome(route=route.kind, outcome="invalid_input")
        if route.kind == "doc" and route.private:  # a whole page is posted where it was asked
            await reply.notify_asker(render.notice("private_doc_refused", command))
            return Outcome(route="doc", outcome="invalid_input")
        return None

    async def _given(self, progress: Progress, team: Answer) -> Answer:
        """The team's answer as a step, its commands checked against the pages it links to."""
        async with progress.step(render.TEAM_STEP_TITLE):
            pass  # said, not searched: the step ends at once
        return await self._checked(progress, team) if team.references else team

    async def _ask(self, reply: Reply, route: Route) -> Answer:
        """The upstream call as a step (a quota wait its own), then the commands' check."""
        progress = reply.progress
        async with progress.step(render.step_title(route.kind)) as step:
            result = await self._call(reply, route, progress, step)
            step.output = render.task_found(result)
            instead = render.fallback_title(result.fallback) if result.fallback else None
            if instead:
                step.title = instead
        if route.kind in ("search", "pay"):
            return result
        return await self._checked(progress, result)

    async def _checked(self, progress: Progress, result: Answer) -> Answer:
        """`result` verified; its commands' check a step of its own."""
        commands = count_commands(result.text) if result.kind == "answer" else 0
        if not commands or result.fallback or result.verification is not None:
            return await self.service.verify(result)
        async with progress.step(render.verify_title(commands)) as step:
            checked = await self.service.verify(result)
            step.output = render.verify_summary(checked.verification, checked.references)
            step.status = render.verify_status(checked.verification, checked.references)
        return checked

    async def _call(self, reply: Reply, route: Route, progress: Progress, step: Step) -> Answer:
        service, scope = self.service, sent_scope(route, self.service.backend)
        if route.kind == "search":
            return await service.search(route.query, scope=scope)
        if route.kind == "pay":
            language = None
            if service.pay_configured and reply.user:
                profile = await self.profiles.of(reply.client, reply.user)
                language = profile.locale if profile is not None else None
            return await service.pay(route.query, language)
        waits: list[Step] = []

        async def on_wait(seconds: float) -> None:
            for earlier in waits:
                await progress.close_step(earlier, "complete")
            waits.append(await progress.open_step(render.wait_title(seconds)))
            per_minute = self.quota.config.per_minute
            await reply.update_progress(render.render_quota_waiting(seconds, per_minute=per_minute))

        try:
            return await service.ask(
                route.query,
                asker=reply.user,
                on_wait=on_wait,
                scope=scope,
                # early pages cost a search unit: only a timeline can show them
                on_sources=partial(progress.show_sources, step) if progress.streaming else None,
            )
        finally:
            for wait in waits:  # the wait is over once the answer (or the failure) is here
                await progress.close_step(wait, "complete")


async def tell_failure(reply: Reply, error: GdocsError, *, shown: str | None, retry: str) -> None:
    """Why a question got no answer: a problem with what was asked is the asker's business,
    an outage the thread's (quoting `shown`, with a retry of `retry`)."""
    # the technical words (an HTTP status) for the log: people read `render_error`'s
    logger.info("question failed: %s", error)
    if error.code is ErrorCode.INVALID_INPUT:
        await reply.notify_asker(render.render_error(error))
    else:
        await reply.notify_thread(render.render_error(error, question=shown, retry=retry))


def sent_scope(route: Route, backend: str) -> Scope:
    """The products asked of the docs service: a channel's are not applied on the MCP
    backend, which has no filter (the answer says so); a question's own `in:` is, and
    gets the backend's refusal there."""
    return () if route.scope_from == "channel" and backend == "mcp" else route.scope
