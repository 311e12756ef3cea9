"""Buttons and forms: Show full doc / Next page (durable work), Share, Ask again, 👍 / 👎 and
the "what was wrong?" form (kept with the answer record the button names); other actions
are acknowledged and ignored. A forged or stale button value gets a short explanation."""

from __future__ import annotations

import logging
import re
from functools import partial
from typing import Any, cast

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot import render
from bot.errors import GdocsError, InvalidInput, NotFound
from bot.feedback import AnswerRecord, FeedbackLog
from bot.names import is_valid_name
from bot.observability.metrics import Metrics
from bot.slack import SLACK_CALL_FAILURES
from bot.slack.boundary import (
    DEVELOPER_KNOWLEDGE,
    Job,
    Notify,
    Outcome,
    as_dict,
    as_str,
    first_action,
    ignored,
    say_nothing,
)
from bot.slack.delivery import posting
from bot.slack.delivery.replies import SlackReply
from bot.slack.deps import SlackDeps
from bot.slack.flows.pages import FIRST_PAGE
from bot.slack.flows.routing import Route, RouteKind
from bot.slack.flows.sharing import share
from bot.slack.listeners.drafts import home_reply, keep_suggestion, refuse_in_form
from bot.slack.work.worklog import Reply, WorkRecord, track

logger = logging.getLogger(__name__)

SHOW_DOC_RE = re.compile(rf"^{re.escape(render.ACTION_SHOW_DOC_PREFIX)}\d+$")
_DOC_ACTIONS = (SHOW_DOC_RE, render.ACTION_SHOW_DOC_MORE, render.ACTION_NEXT_PAGE)


def is_doc_click(body: dict[str, Any]) -> bool:
    """Show full doc / Next page: durable work, claimed with its record."""
    action_id = first_action(body).get("action_id")
    return isinstance(action_id, str) and any(
        a == action_id if isinstance(a, str) else a.fullmatch(action_id) for a in _DOC_ACTIONS
    )


def action_payload(body: dict[str, Any]) -> dict[str, Any]:
    """What the work record keeps of a doc click."""
    message = as_dict(body.get("message"))
    return {
        "actions": body.get("actions") if isinstance(body.get("actions"), list) else [],
        "container": as_dict(body.get("container")),
        "channel": as_dict(body.get("channel")),
        "user": as_dict(body.get("user")),
        "message": {k: message[k] for k in ("ts", "thread_ts") if isinstance(message.get(k), str)},
        "response_url": body.get("response_url"),
    }


def register(app: AsyncApp, deps: SlackDeps) -> None:
    def run(kind: str, job: Job, notify: Notify) -> None:
        deps.inflight.spawn(deps.boundary(kind, job, notify))

    async def on_show_doc(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        handle = partial(handle_doc_click, deps, client, body)
        await deps.take(ack, body, "action", action_payload(body), handle)

    async def on_share(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        reply, value = reply_for_click(client, body), first_action(body).get("value")
        job = partial(share, deps.answers.private, deps.threads, reply, value)
        run("action", job, reply.notify_thread)

    async def on_ask_again(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        reply = home_reply(deps, client, body)
        if reply is None:
            return

        async def job() -> Outcome:
            try:
                asked = render.decode_ask_again(first_action(body).get("value"))
            except InvalidInput as exc:
                await reply.notify_asker(render.render_error(exc))
                return Outcome(route="-", outcome="invalid_input")
            # routed as the first time; the DM is private already, so no Share button there
            kind, question, scope = cast(RouteKind, asked.kind), asked.question, asked.scope
            route = deps.router.route(question)  # an older button: routed as typed
            if asked.kind:  # with the products it was limited to (a DM has none of its own)
                route = Route(kind, question, scope=scope, scope_from="question" if scope else None)
            return await deps.answers(reply, route, question=question, name_asker=True)

        run("home_action", job, reply.notify_asker)

    async def on_vote(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        reply = reply_for_click(client, body, in_place=True)
        job = partial(vote, deps.feedback, deps.metrics, reply, first_action(body).get("value"))
        run("feedback", job, reply.notify_asker)

    async def on_comment_button(
        ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        reply = reply_for_click(client, body, in_place=True)
        form = partial(
            open_comment_form, reply, body.get("trigger_id"), first_action(body).get("value")
        )
        run("feedback", form, reply.notify_asker)

    async def on_comment(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        """The form sent: what cannot be kept is said in it (the store is used before the ack)."""
        view, voter = body.get("view"), as_dict(body.get("user")).get("id")
        try:
            placed = render.vote_from_view(view)
        except InvalidInput:
            placed = None
        answer = await deps.feedback.answer(placed.answer_id) if placed is not None else None
        if placed is None or answer is None or not isinstance(voter, str) or not voter:
            stale = {render.COMMENT_BLOCK_ID: render.notice("feedback_stale")["text"]}
            return await refuse_in_form(deps, ack, stale, "stale")
        refused, kept = await keep_suggestion(deps, answer, voter, view)
        if refused:
            return await refuse_in_form(deps, ack, refused, "suggestion_refused")
        await ack()
        comment = render.comment_from_view(view)
        job = partial(store_comment, deps.feedback, client, answer, placed, voter, comment, kept)
        run("feedback_comment", job, say_nothing)

    async def on_unknown(ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        why = f"unknown action_id {str(first_action(body).get('action_id'))[:100]!r}"
        ignored(deps.metrics, "action", why)

    app.action(render.ASK_AGAIN_ACTION_RE)(on_ask_again)
    app.action(render.ACTION_FEEDBACK)(on_vote)
    app.action(render.ACTION_FEEDBACK_COMMENT)(on_comment_button)
    app.view(render.FEEDBACK_MODAL_CALLBACK)(on_comment)
    app.action(render.ACTION_SHARE)(on_share)
    for action_id in _DOC_ACTIONS:
        app.action(action_id)(on_show_doc)
    app.action(re.compile(r".*"))(on_unknown)  # last: Bolt runs the first that matches


def requested_page(action: dict[str, Any]) -> tuple[str, int] | None:
    """(document name, page) a button asks for; None when the value is not ours (forged,
    or out of date)."""
    action_id = action.get("action_id")
    name: object
    page = FIRST_PAGE
    if action_id == render.ACTION_NEXT_PAGE:
        value = action.get("value")
        if not isinstance(value, str):
            return None
        try:
            name, page = render.decode_page_value(value)
        except InvalidInput:
            return None
    elif action_id == render.ACTION_SHOW_DOC_MORE:
        option = action.get("selected_option")
        name = option.get("value") if isinstance(option, dict) else None
    else:
        name = action.get("value")
    if not isinstance(name, str) or not is_valid_name(name):
        return None
    return name, page


def reply_for_click(
    client: AsyncWebClient, body: dict[str, Any], *, in_place: bool = False
) -> SlackReply:
    """Reply into the answer message's thread, notices to the clicker alone; `in_place`:
    beside the clicked message (a top-level answer's thread may not be open)."""
    container = as_dict(body.get("container"))
    message = as_dict(body.get("message"))
    thread_ts = container.get("thread_ts") or message.get("thread_ts")
    message_ts = None if in_place else container.get("message_ts") or message.get("ts")
    if not in_place:
        thread_ts = thread_ts or message.get("ts")
    if container.get("is_ephemeral"):
        thread_ts = message_ts = None
    channel = as_dict(body.get("channel")).get("id") or container.get("channel_id")
    user = as_str(as_dict(body.get("user")).get("id"))
    url = body.get("response_url")
    return SlackReply(
        client, "click", channel, user, url, thread_ts=thread_ts, message_ts=message_ts
    )


async def handle_doc_click(
    deps: SlackDeps,
    client: AsyncWebClient,
    body: dict[str, Any],
    *,
    record: WorkRecord | None = None,
    resumed: bool = False,
) -> None:
    reply = track(deps.work, reply_for_click(client, body), record, resumed=resumed)
    pages = deps.answers.pages

    async def job() -> Outcome:
        requested = requested_page(first_action(body))
        if requested is None:
            await reply.notify_asker(render.notice("stale_button"))
            return Outcome(route="doc", outcome="invalid_input")
        name, page = requested
        await reply.start_progress(render.notice("fetching"))
        try:
            outcome = await pages.show(reply, await pages.fetch(name), page=page)
            return Outcome("doc", outcome, DEVELOPER_KNOWLEDGE, "get_documents")
        except NotFound:
            await reply.notify_asker(render.notice("document_gone"))
            return Outcome("doc", "not_found", DEVELOPER_KNOWLEDGE)
        except GdocsError as error:
            await reply.notify_asker(render.render_error(error))
            return Outcome("doc", error.code.value, DEVELOPER_KNOWLEDGE)
        finally:
            await reply.finish()

    await deps.run("action", job, reply.notify_thread, record)


# --- feedback ---
VOTES_METRIC = "gdocs_feedback_votes_total"
VOTES_HELP = "Feedback votes recorded, by answer kind (answer, search, pay) and vote (up, down)."


def _decoded(value: object) -> render.Vote | None:
    try:
        return render.decode_vote(value)
    except InvalidInput:
        return None


async def vote(feedback: FeedbackLog, metrics: Metrics, reply: Reply, value: object) -> Outcome:
    """A 👍 / 👎 click (`value`: its button's)."""
    decoded = _decoded(value)
    if decoded is None:
        await reply.notify_asker(render.notice("feedback_stale"))
        return Outcome(route="feedback", outcome="invalid_input")
    answer = await feedback.answer(decoded.answer_id)
    if answer is None or reply.user is None:
        await reply.notify_asker(render.notice("feedback_stale"))
        return Outcome(route="feedback", outcome="stale")
    await feedback.record_vote(answer, decoded.vote, reply.user)
    metrics.count(VOTES_METRIC, VOTES_HELP, kind=answer.kind, vote=decoded.vote)
    await reply.notify_asker(render.render_feedback_thanks(decoded))
    return Outcome(route=answer.kind, outcome=f"vote_{decoded.vote}", tool=answer.tool or "-")


async def open_comment_form(reply: Reply, trigger_id: object, value: object) -> Outcome:
    """The "Say what was wrong" button: the form, at once (a trigger_id lives 3 seconds)."""
    decoded = _decoded(value)
    if decoded is None or not isinstance(trigger_id, str):
        await reply.notify_asker(render.notice("feedback_stale"))
        return Outcome(route="feedback", outcome="invalid_input")
    try:
        await reply.client.views_open(
            trigger_id=trigger_id, view=render.feedback_comment_modal(decoded)
        )
    except SLACK_CALL_FAILURES as exc:  # e.g. the trigger expired: the click can be repeated
        logger.info("feedback form not opened: %s", posting.why(exc))
        await reply.notify_asker(render.notice("internal_error"))
        return Outcome(route="feedback", outcome="form_failed")
    return Outcome(route="feedback", outcome="form_opened")


async def store_comment(
    feedback: FeedbackLog,
    client: AsyncWebClient,
    answer: AnswerRecord,
    decoded: render.Vote,
    voter: str,
    comment: str,
    suggested: bool,
) -> Outcome:
    """The form's line kept with the vote; the voter thanked once beside the answer (a
    nicety), for the line and the suggestion (kept already: `drafts.keep_suggestion`)."""
    if not comment and not suggested:
        return Outcome(route=answer.kind, outcome="no_comment")
    if comment:
        await feedback.record_vote(answer, decoded.vote, voter, comment=comment)
    if answer.channel:
        thanks = render.render_comment_thanks(bool(comment), suggested)
        try:
            await posting.post_ephemeral(
                client, channel=answer.channel, user=voter, msg=thanks, thread_ts=answer.thread_ts
            )
        except SLACK_CALL_FAILURES as exc:
            logger.info("feedback thanks not sent: %s", posting.why(exc))
    outcome = "suggested" if suggested else "commented"
    return Outcome(route=answer.kind, outcome=outcome, tool=answer.tool or "-")
