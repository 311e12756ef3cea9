"""👍 / 👎 under answers and the "what was wrong?" form: a vote is kept with the answer
record its button names (a stale or forged value records nothing), the voter thanked
ephemerally; a 👎's thanks opens the form, whose line is kept with the vote."""

from __future__ import annotations

import logging

from slack_sdk.web.async_client import AsyncWebClient

from bot import render
from bot.errors import InvalidInput
from bot.feedback import AnswerRecord, FeedbackLog
from bot.observability.metrics import Metrics
from bot.slack.boundary import Outcome
from bot.slack.delivery import posting
from bot.slack.delivery.replies import Reply
from bot.slack.failures import SLACK_CALL_FAILURES

logger = logging.getLogger(__name__)

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
) -> Outcome:
    """The form's line kept with the vote; the voter thanked beside the answer (a nicety)."""
    if not comment:
        return Outcome(route=answer.kind, outcome="no_comment")
    await feedback.record_vote(answer, decoded.vote, voter, comment=comment)
    if answer.channel:
        try:
            await posting.post_ephemeral(
                client,
                channel=answer.channel,
                user=voter,
                msg=render.notice("feedback_recorded"),
                thread_ts=answer.thread_ts,
            )
        except SLACK_CALL_FAILURES as exc:
            logger.info("feedback thanks not sent: %s", posting.why(exc))
    return Outcome(route=answer.kind, outcome="commented", tool=answer.tool or "-")
