"""Answering one question, whichever surface it came from (command, mention, DM): route →
rate limit → progress → upstream → rendered answer (or a short reason). Each flow returns
the request's `Outcome`; the boundary logs it."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from bot.errors import ErrorCode, GdocsError
from bot.feedback import fallback_label, new_answer_id
from bot.models import Answer
from bot.names import normalize_doc_ref
from bot.render import (
    Message,
    answer_parts,
    fallback_title,
    render_answer,
    render_error,
    render_help,
    render_private_doc_refused,
    render_progress,
    render_quota_status,
    render_quota_unknown,
    render_quota_waiting,
    render_rate_limited,
    step_title,
    streamed_answer,
    task_sources,
    verify_summary,
    verify_title,
    wait_title,
)
from bot.report import tally
from bot.report.outcome import answered_counts
from bot.slack.boundary import DEVELOPER_KNOWLEDGE, Outcome
from bot.slack.delivery.off_loop import answer_size, render_off_loop
from bot.slack.delivery.progress import Progress, Step, progress_of
from bot.slack.delivery.replies import Reply
from bot.slack.delivery.sharing import answer_privately
from bot.slack.deps import SlackDeps
from bot.slack.flows.people import user_profile
from bot.slack.flows.report import report_summary
from bot.slack.flows.routing import Route
from bot.slack.flows.show_doc import FIRST_PAGE, fetch_document, show_document
from bot.slack.listeners.feedback import answer_write
from bot.slack.work.after_answer import delivering
from bot.store import Op, StoreError
from bot.verify import count_commands

logger = logging.getLogger(__name__)


async def answer_question(
    deps: SlackDeps,
    reply: Reply,
    route: Route,
    *,
    question: str,
    name_asker: bool,
    command: str = "/gdocs",
    about: str | None = None,
) -> Outcome:
    """Answer `question` (already routed) through `reply`; `about`: the author of the
    message asked about (the message shortcut), named with the asker."""
    logger.debug("question routed", extra={"question": question})
    if route.kind == "help":
        await reply.notify_thread(render_help(command))
        return Outcome(route="help", outcome="help")
    if route.kind == "quota":
        return await _quota_status(deps, reply)
    if route.kind == "report":
        return await report_summary(deps, reply)
    if route.kind == "doc" and route.private:  # a whole page is posted where it was asked
        await reply.notify_asker(render_private_doc_refused(command))
        return Outcome(route="doc", outcome="invalid_input")
    question_kind = route.kind != "doc"  # a whole page is not a question to the report
    # the report's counts are written with the question's outcome, in one batch (an
    # answer's go in its "done" batch)
    if reply.user is not None:
        retry_after = await deps.limiter.try_acquire(reply.user)
        if retry_after is not None:
            await reply.notify_asker(render_rate_limited(deps.limiter.per_minute, retry_after))
            if question_kind:
                await deps.tally.count(tally.QUESTIONS, tally.RATE_LIMITED)
            return Outcome(route=route.kind, outcome="rate_limited")
    remembered = False  # the Home tab's Ask again: with the answer's writes when it is out
    if route.kind == "doc" or route.private:
        progress_of(reply).decline()  # a whole page, or an answer for the asker alone
    await reply.start_progress(render_progress(question))
    server = "pay" if route.kind == "pay" and deps.service.pay_configured else DEVELOPER_KNOWLEDGE
    try:
        if route.kind == "doc":
            doc = await fetch_document(deps, normalize_doc_ref(route.query))
            outcome = await show_document(deps, reply, doc, page=FIRST_PAGE)
            return Outcome(route="doc", outcome=outcome, server=server, tool="get_documents")
        result = await _ask(deps, reply, route)
        fallback = fallback_label(result)
        counts = (
            tally.QUESTIONS,
            *answered_counts(result.kind, fallback, route.kind, result.reuse),
        )
        remembered = await _deliver_answer(
            deps, reply, route, result, question, name_asker=name_asker, about=about, counts=counts
        )
        return Outcome(
            route=route.kind,
            outcome="ok_with_note" if result.fallback else "ok",
            server="pay" if result.kind == "pay" else DEVELOPER_KNOWLEDGE,
            tool=result.tool or "-",
        )
    except GdocsError as error:
        # a problem with what was asked is the asker's business; an outage, the thread's
        if error.code is ErrorCode.INVALID_INPUT:
            await reply.notify_asker(render_error(error))
        else:
            await reply.notify_thread(render_error(error))
        if question_kind:
            await deps.tally.count(tally.QUESTIONS, tally.FAILED)
        return Outcome(route=route.kind, outcome=error.code.value, server=server)
    finally:
        await reply.finish()
        if not remembered and reply.user is not None:
            await deps.recent.remember(reply.user, question)


async def _deliver_answer(
    deps: SlackDeps,
    reply: Reply,
    route: Route,
    result: Answer,
    question: str,
    *,
    name_asker: bool,
    about: str | None = None,
    counts: Sequence[str] = (),
) -> bool:
    """Post the answer; True when the asker's recent questions were written with it.
    `counts`: the report's counters for it, in the same batch."""
    if route.private:
        # what was asked, without the `private` that asked for privacy
        await _deliver_privately(deps, reply, result, route.query)
        await deps.tally.count(*counts)
        return False
    shown_question = question if name_asker else None
    asker = reply.user if name_asker else None
    # a quota note says when answers come back: in the asker's own time
    tz = await _asker_tz(deps, reply) if _says_when(result) else None
    answer_id = new_answer_id()  # the feedback buttons name the answer by it
    parts = await render_off_loop(
        answer_size(result),
        answer_parts,
        result,
        asker=asker,
        question=shown_question,
        tz=tz,
        now=deps.clock(),
        feedback_id=answer_id,
        about=about,
    )
    msg: Message = {"text": parts.text, "blocks": parts.head + parts.body + parts.tail}
    progress_of(reply).stage(streamed_answer(result, parts))
    topic = route.topic or route.query
    recent = deps.recent.op(reply.user, question) if reply.user else None

    def writes(ts: str | None) -> list[Op]:
        """What the answer leaves behind, in the work record's "done" batch."""
        ops = [answer_write(deps, reply, answer_id, result, ts, route=route.kind)]
        root = reply.thread_ts or ts
        if reply.channel and root and not reply.thread_ts:  # a new thread: its root is ts
            ops.append(deps.threads.op(reply.channel, root, topic, reply.user))
        ops += deps.tally.ops(*counts)
        if recent is not None:
            ops.append(recent)  # last: its result is looked at below
        return ops

    if reply.channel and reply.thread_ts:
        # the thread is known before the post: remembered first, so a follow-up sent the
        # moment the answer shows finds it
        await deps.store.batch([deps.threads.op(reply.channel, reply.thread_ts, topic, reply.user)])
    with delivering(writes) as staged:
        posted_ts = await reply.deliver(msg)
    results = await staged.write(deps.store, posted_ts)  # unless the done batch took them
    if recent is not None and reply.user:
        await deps.recent.settle(reply.user, question, results[-1])
    return True


async def _deliver_privately(deps: SlackDeps, reply: Reply, result: Answer, question: str) -> None:
    tz = await _asker_tz(deps, reply) if _says_when(result) else None
    body = await render_off_loop(
        answer_size(result), render_answer, result, tz=tz, now=deps.clock()
    )
    await answer_privately(deps, reply, body, question)


def _says_when(result: Answer) -> bool:
    return result.fallback is not None and result.fallback.until is not None


async def _asker_tz(deps: SlackDeps, reply: Reply) -> str | None:
    if not reply.user:
        return None
    client = reply.client
    profile = await deps.profiles.get(reply.user, lambda u: user_profile(client, u))
    return profile.tz if profile is not None else None


async def _quota_status(deps: SlackDeps, reply: Reply) -> Outcome:
    """`/gdocs quota`: where the team stands, from the ledger alone (no upstream call)."""
    try:
        state = await deps.quota.state(reply.user)
    except StoreError:
        await reply.notify_asker(render_quota_unknown())
        return Outcome(route="quota", outcome="unavailable")
    tz = await _asker_tz(deps, reply)
    await reply.notify_asker(render_quota_status(state, tz=tz, now=deps.clock()))
    return Outcome(route="quota", outcome="ok")


async def _ask(deps: SlackDeps, reply: Reply, route: Route) -> Answer:
    """The upstream call, shown as one step (its sources the pages it used), with a quota
    wait before it as a step of its own."""
    progress = progress_of(reply)
    async with progress.step(step_title(route.kind)) as step:
        result = await _call(deps, reply, route, progress)
        step.sources = task_sources(result)
        instead = fallback_title(result.fallback) if result.fallback else None
        if instead:
            step.title = instead
    if route.kind in ("search", "pay"):
        return result
    return await _verify(deps, progress, result)


async def _verify(deps: SlackDeps, progress: Progress, result: Answer) -> Answer:
    """The commands checked against the cited pages (within its own budget, never failing),
    shown as a step when there is something to check."""
    commands = count_commands(result.text) if result.kind == "answer" else 0
    if not commands or result.fallback or result.verification is not None:
        return await deps.service.verify(result)
    async with progress.step(verify_title(commands)) as step:
        checked = await deps.service.verify(result)
        step.output = verify_summary(checked.verification)
    return checked


async def _call(deps: SlackDeps, reply: Reply, route: Route, progress: Progress) -> Answer:
    service = deps.service
    if route.kind == "search":
        return await service.search(route.query)
    if route.kind == "pay":
        language = None
        if service.pay_configured and reply.user:
            client = reply.client
            language = await deps.profiles.locale(reply.user, lambda u: user_profile(client, u))
        return await service.pay(route.query, language)
    waits: list[Step] = []

    async def on_wait(seconds: float) -> None:
        for earlier in waits:
            await progress.close_step(earlier, "complete")
        waits.append(await progress.open_step(wait_title(seconds)))
        per_minute = deps.quota.config.per_minute
        await reply.update_progress(render_quota_waiting(seconds, per_minute=per_minute))

    try:
        return await service.ask(route.query, asker=reply.user, on_wait=on_wait)
    finally:
        for wait in waits:  # the wait is over once the answer (or the failure) is here
            await progress.close_step(wait, "complete")
