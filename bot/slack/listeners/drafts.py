"""👎 suggestions: the "what was wrong?" form's better answer kept as a draft team answer
(before the form is acknowledged, so a store that does not take it is said in the form),
and the Home tab's Approve / Discard, for team admins only, and its Edit (the team answer
form: a draft's Save approves it as edited). A draft is shown to nobody
else: the store's `find` gives approved answers only, and Home lists drafts to admins."""

from __future__ import annotations

import logging
from datetime import datetime
from functools import partial
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot import render, tenant
from bot.errors import InvalidInput
from bot.feedback import AnswerRecord
from bot.slack.boundary import Outcome, as_dict, as_str, first_action, ignored, say_nothing
from bot.slack.delivery.replies import SlackReply
from bot.slack.deps import SlackDeps
from bot.slack.flows.home import drafts_seen
from bot.slack.flows.team import is_team_admin, open_team_form
from bot.store import StoreUnavailable
from bot.team import MAX_QUESTION_CHARS, TeamAnswer, new_team_id, review_date
from bot.text import truncate

logger = logging.getLogger(__name__)


def draft_of(
    answer: AnswerRecord, voter: str, text: str, now: datetime, review_days: int
) -> TeamAnswer:
    """The draft a 👎's suggestion becomes: for the answer's question, in its channel."""
    return TeamAnswer(
        id=new_team_id(),
        question=truncate(answer.question, MAX_QUESTION_CHARS),
        answer=text,
        author=voter,
        saved_at=now,
        review_at=review_date(now, review_days),
        visibility="channel",
        channel=answer.channel,
        status="draft",
        from_answer=answer.answer_id,
        workspace=tenant.current(),  # the installation whose 👎 it was
    )


async def keep_suggestion(
    deps: SlackDeps, answer: AnswerRecord, voter: str, view: object
) -> tuple[dict[str, str], bool]:
    """(the form's errors, {} when none; whether a suggestion was kept). Runs before the ack:
    a suggestion the store did not take is said in the form, where the text still is."""
    text = render.suggestion_from_view(view)
    if not text:
        return {}, False
    why = render.suggestion_too_long(text)
    if why is None:
        draft = draft_of(answer, voter, text, deps.clock(), deps.team.review_days)
        try:  # a store slower than the form's 3 s allow is StoreUnavailable (bot/team.py)
            await deps.team.save(draft)
            return {}, True
        except StoreUnavailable as exc:
            logger.warning("a 👎 suggestion was not saved: %s", exc.message)
            why = render.SUGGESTION_UNSAVED
        except InvalidInput as exc:
            why = render.error_sentence(exc)
    return {render.SUGGESTION_BLOCK_ID: why}, False


async def refuse_in_form(deps: SlackDeps, ack: AsyncAck, errors: dict[str, str], why: str) -> None:
    """The 👎 form stays open with `errors` under their fields; counted as `why`."""
    await ack(response_action="errors", errors=errors)
    await deps.boundary("feedback_comment", partial(_refused, why), say_nothing)


async def _refused(why: str) -> Outcome:
    return Outcome(route="feedback", outcome=why)


def home_reply(deps: SlackDeps, client: AsyncWebClient, body: dict[str, Any]) -> SlackReply | None:
    """A Home button's notices go to the clicker's DM (Home has no channel); None (counted as
    ignored) when the click names nobody."""
    user = as_str(as_dict(body.get("user")).get("id"))
    if user is None:
        ignored(deps.metrics, "home_action", "no user")
        return None
    return SlackReply(client, "direct", user, user)


def register(app: AsyncApp, deps: SlackDeps) -> None:
    async def on_click(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        reply = home_reply(deps, client, body)
        if reply is None:
            return
        action_id, value = first_action(body).get("action_id"), first_action(body).get("value")
        if action_id == render.ACTION_TEAM_EDIT:
            job = partial(edit, deps, reply, body.get("trigger_id"), value)
        else:
            job = partial(review, deps, reply, action_id == render.ACTION_TEAM_APPROVE, value)
        deps.inflight.spawn(deps.boundary("home_action", job, reply.notify_asker))

    for action_id in (
        render.ACTION_TEAM_APPROVE,
        render.ACTION_TEAM_DISCARD,
        render.ACTION_TEAM_EDIT,
    ):
        app.action(action_id)(on_click)


async def edit(deps: SlackDeps, reply: SlackReply, trigger_id: object, value: object) -> Outcome:
    """Home's Edit: the form reviewing a draft (team admins) or editing an answer due (its
    author or an admin: the `/gdocs team` list's rule), opened at once."""
    user, client = reply.user or "", reply.client
    try:
        found = await deps.team.get(render.decode_team_value(value))
    except InvalidInput as exc:
        await reply.notify_asker(render.render_error(exc))
        return Outcome(route="team", outcome="invalid_input")
    except StoreUnavailable as exc:
        logger.info("team answer not read for Edit: %s", exc.message)
        await reply.notify_asker(render.render_team_notice("unavailable"))
        return Outcome(route="team", outcome="store_unavailable")
    form: render.TeamForm | str
    if found is None or found.status != "draft":
        form = await deps.team_flow.edit_form(client, user, found)
    elif await is_team_admin(
        deps.profiles, deps.settings.team_admin_ids, client, user
    ) and await drafts_seen(client, user, [found]):
        form = render.form_for(found, "draft")
    else:  # a suggestion is reviewed by an admin, its author included
        await reply.notify_asker(render.render_team_notice("draft_refused"))
        return Outcome(route="team", outcome="refused")
    if isinstance(form, str):
        await reply.notify_asker(render.render_team_notice(form))
        return Outcome(route="team", outcome=form)
    if not isinstance(trigger_id, str) or not await open_team_form(client, trigger_id, form):
        await reply.notify_asker(render.notice("internal_error"))
        return Outcome(route="team", outcome="form_failed")
    return Outcome(route="team", outcome="form_opened")


async def review(deps: SlackDeps, reply: SlackReply, approve: bool, value: object) -> Outcome:
    """Approve or Discard a draft from Home (a team admin's click), then Home again."""
    user = reply.user or ""
    try:
        draft_id = render.decode_team_value(value)
    except InvalidInput as exc:
        await reply.notify_asker(render.render_error(exc))
        return Outcome(route="team", outcome="invalid_input")
    if not await is_team_admin(deps.profiles, deps.settings.team_admin_ids, reply.client, user):
        await reply.notify_asker(render.render_team_notice("draft_refused"))
        return Outcome(route="team", outcome="refused")
    try:
        draft = await deps.team.get(draft_id)
        if draft is None or draft.status != "draft":
            done = False
        elif not await drafts_seen(reply.client, user, [draft]):  # not on their Home: forged
            await reply.notify_asker(render.render_team_notice("draft_refused"))
            return Outcome(route="team", outcome="refused")
        elif approve:
            done = await deps.team.approve(draft_id) is not None
        else:
            done = await deps.team.remove(draft_id)
    except StoreUnavailable as exc:
        logger.warning("a team draft was not reviewed: %s", exc.message)
        await reply.notify_asker(render.render_team_notice("unavailable"))
        return Outcome(route="team", outcome="store_unavailable")
    except InvalidInput as exc:  # e.g. an approved answer already answers its question
        await reply.notify_asker(render.render_error(exc))
        return Outcome(route="team", outcome="invalid_input")
    if not done:
        await reply.notify_asker(render.render_team_notice("draft_gone"))
    await deps.home.publish(reply.client, user)
    outcome = "gone" if not done else "approved" if approve else "discarded"
    return Outcome(route="team", outcome=outcome)
