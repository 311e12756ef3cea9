"""Slack's 👍 / 👎 feedback buttons under answers, and the optional "what was wrong?" form.

When an answer is posted its record is kept (`answer_write`, in the question's batch) under
the id its buttons carry.
A click (`block_actions`, an action of type `feedback_buttons`) is acknowledged at once;
then the vote is recorded with the answer it is about and the voter is thanked ephemerally.
A 👎's thanks carries a button that opens the form (`views.open` with the click's
trigger_id); submitting it stores the line with the vote. A value we did not make, or one
whose answer is past its voting window, gets a short notice and records nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import InvalidInput
from bot.feedback import AnswerRecord, answer_record
from bot.models import Answer
from bot.render import (
    ACTION_FEEDBACK,
    ACTION_FEEDBACK_COMMENT,
    COMMENT_BLOCK_ID,
    FEEDBACK_MODAL_CALLBACK,
    Message,
    Vote,
    comment_from_view,
    decode_vote,
    feedback_comment_modal,
    render_feedback_recorded,
    render_feedback_stale,
    render_feedback_thanks,
    render_internal_error,
    vote_from_view,
)
from bot.slack.boundary import Outcome, say_nothing
from bot.slack.delivery import posting
from bot.slack.delivery.replies import ActionReply, Reply
from bot.slack.deps import SlackDeps
from bot.slack.failures import SLACK_CALL_FAILURES
from bot.store import Op

logger = logging.getLogger(__name__)

VOTES_METRIC = "gdocs_feedback_votes_total"
VOTES_HELP = "Feedback votes recorded, by answer kind (answer, search, pay) and vote (up, down)."


def answer_write(
    deps: SlackDeps,
    reply: Reply,
    answer_id: str,
    answer: Answer,
    ts: str | None,
    *,
    route: str | None = None,
) -> Op:
    """The write keeping what a vote on this just-posted answer (and the report) will need."""
    record = answer_record(
        answer,
        answer_id=answer_id,
        channel=reply.channel,
        ts=ts,
        thread_ts=reply.thread_ts,
        asker=reply.user,
        now=deps.clock(),
        route=route,
    )
    return deps.feedback.answer_op(record)


def register(app: AsyncApp, deps: SlackDeps) -> None:
    async def on_vote(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        deps.inflight.spawn(handle_vote(deps, client, body))

    async def on_comment_button(
        ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        deps.inflight.spawn(open_comment_form(deps, client, body))

    async def on_comment(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await submit_comment(deps, client, body, ack)

    app.action(ACTION_FEEDBACK)(on_vote)
    app.action(ACTION_FEEDBACK_COMMENT)(on_comment_button)
    app.view(FEEDBACK_MODAL_CALLBACK)(on_comment)


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _action(body: dict[str, Any]) -> dict[str, Any]:
    actions = body.get("actions")
    return _dict(actions[0]) if isinstance(actions, list) and actions else {}


def _user(body: dict[str, Any]) -> str | None:
    user = _dict(body.get("user")).get("id")
    return user if isinstance(user, str) and user else None


def reply_in_place(client: AsyncWebClient, body: dict[str, Any]) -> ActionReply:
    """Notices to the clicker beside the clicked message: in its thread when it is in one,
    else in the channel (a top-level answer's thread may not be open)."""
    container = _dict(body.get("container"))
    message = _dict(body.get("message"))
    thread_ts = container.get("thread_ts") or message.get("thread_ts")
    return ActionReply(
        client=client,
        channel=_dict(body.get("channel")).get("id") or container.get("channel_id"),
        user=_user(body),
        response_url=body.get("response_url"),
        thread_ts=None if container.get("is_ephemeral") else thread_ts,
    )


async def handle_vote(deps: SlackDeps, client: AsyncWebClient, body: dict[str, Any]) -> None:
    reply = reply_in_place(client, body)
    voter = reply.user

    async def job() -> Outcome:
        try:
            vote = decode_vote(_action(body).get("value"))
        except InvalidInput:
            await reply.notify_asker(render_feedback_stale())
            return Outcome(route="feedback", outcome="invalid_input")
        answer = await deps.feedback.answer(vote.answer_id)
        if answer is None or voter is None:
            await reply.notify_asker(render_feedback_stale())
            return Outcome(route="feedback", outcome="stale")
        await deps.feedback.record_vote(answer, vote.vote, voter)
        deps.metrics.count(VOTES_METRIC, VOTES_HELP, kind=answer.kind, vote=vote.vote)
        await reply.notify_asker(render_feedback_thanks(vote))
        return Outcome(route=answer.kind, outcome=f"vote_{vote.vote}", tool=answer.tool or "-")

    await deps.boundary("feedback", job, reply.notify_asker)


async def open_comment_form(deps: SlackDeps, client: AsyncWebClient, body: dict[str, Any]) -> None:
    """The "Say what was wrong" button on a 👎's thanks: the form, at once (a trigger_id is
    good for 3 seconds)."""
    reply = reply_in_place(client, body)

    async def job() -> Outcome:
        trigger_id = body.get("trigger_id")
        try:
            vote = decode_vote(_action(body).get("value"))
        except InvalidInput:
            vote = None
        if vote is None or not isinstance(trigger_id, str):
            await reply.notify_asker(render_feedback_stale())
            return Outcome(route="feedback", outcome="invalid_input")
        try:
            await client.views_open(trigger_id=trigger_id, view=feedback_comment_modal(vote))
        except SLACK_CALL_FAILURES as exc:  # e.g. the trigger expired: the click can be repeated
            logger.info("feedback form not opened: %s", _why(exc))
            await reply.notify_asker(render_internal_error())
            return Outcome(route="feedback", outcome="form_failed")
        return Outcome(route="feedback", outcome="form_opened")

    await deps.boundary("feedback", job, reply.notify_asker)


async def submit_comment(
    deps: SlackDeps, client: AsyncWebClient, body: dict[str, Any], ack: AsyncAck
) -> None:
    """The form was sent. A vote we cannot place is said in the form itself (Slack keeps it
    open); otherwise the form closes and the line is stored with the vote."""
    view, voter = body.get("view"), _user(body)
    answer: AnswerRecord | None = None
    try:
        vote = vote_from_view(view)
    except InvalidInput:
        vote = None
    if vote is not None:
        # before the acknowledgement, so a refusal can show in the form: one store read,
        # bounded by STATE_TIMEOUT_SECONDS, well inside Slack's 3 s
        answer = await deps.feedback.answer(vote.answer_id)
    if vote is None or answer is None or voter is None:
        stale = render_feedback_stale()["text"]
        await ack(response_action="errors", errors={COMMENT_BLOCK_ID: stale})

        async def refused() -> Outcome:
            return Outcome(route="feedback", outcome="stale")

        await deps.boundary("feedback_comment", refused, say_nothing)
        return
    await ack()
    deps.inflight.spawn(_store_comment(deps, client, answer, vote, voter, comment_from_view(view)))


async def _store_comment(
    deps: SlackDeps,
    client: AsyncWebClient,
    answer: AnswerRecord,
    vote: Vote,
    voter: str,
    comment: str,
) -> None:
    async def job() -> Outcome:
        if not comment:
            return Outcome(route=answer.kind, outcome="no_comment")
        await deps.feedback.record_vote(answer, vote.vote, voter, comment=comment)
        await _thank(client, answer, voter, render_feedback_recorded())
        return Outcome(route=answer.kind, outcome="commented", tool=answer.tool or "-")

    await deps.boundary("feedback_comment", job, say_nothing)


async def _thank(client: AsyncWebClient, answer: AnswerRecord, voter: str, msg: Message) -> None:
    """Ephemerally, beside the answer the note is about (a nicety: failures are logged)."""
    if not answer.channel:
        return
    try:
        await posting.post_ephemeral(
            client, channel=answer.channel, user=voter, msg=msg, thread_ts=answer.thread_ts
        )
    except SLACK_CALL_FAILURES as exc:
        logger.info("feedback thanks not sent: %s", _why(exc))


def _why(exc: Exception) -> str:
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error"))
    return type(exc).__name__
