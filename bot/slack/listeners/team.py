"""Team answers: the "Save as team answer" message shortcut (the form, opened first: its
trigger_id lives 3 s), the form's Save (acknowledged after the store took it, or with the
reason in the form), and the `/gdocs team` list's Edit and Remove."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot import render
from bot.slack import SLACK_CALL_FAILURES
from bot.slack.boundary import Outcome, as_dict, as_str, first_action, say_nothing
from bot.slack.delivery import posting
from bot.slack.delivery.replies import SlackReply
from bot.slack.deps import SlackDeps
from bot.slack.flows.routing import strip_mention
from bot.slack.flows.team import TeamFlow, open_team_form, shortcut_form
from bot.slack.listeners.actions import reply_for_click
from bot.slack.listeners.commands import thread_root
from bot.store import StoreError
from bot.team import MAX_QUESTION_CHARS
from bot.text import one_line

logger = logging.getLogger(__name__)
_NOT_SAID: tuple[type[Exception], ...] = (*SLACK_CALL_FAILURES, StoreError)


def register(app: AsyncApp, deps: SlackDeps) -> None:
    flow = deps.team_flow

    async def on_save(
        ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> None:
        await ack()
        form = shortcut_form(body)
        user = as_str(as_dict(body.get("user")).get("id"))
        url = as_str(body.get("response_url"))
        reply = SlackReply(client, "thread", form.channel, user, url)
        question = partial(thread_question, deps, client, body, context.bot_user_id)
        job = partial(_open, client, body.get("trigger_id"), form, reply, question)
        deps.inflight.spawn(deps.boundary("team_form", job, reply.notify_asker))

    async def on_submit(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        user = as_str(as_dict(body.get("user")).get("id")) or ""
        acked = False

        async def job() -> Outcome:
            nonlocal acked
            errors, form = await flow.submit(client, body.get("view"), user)
            acked = True
            if form is None:
                await ack(response_action="errors", errors=errors)
                return Outcome(route="team", outcome="not_saved")
            await ack()
            deps.inflight.spawn(_tell_saved(client, form, user, flow))
            return Outcome(route="team", outcome="saved")

        await deps.boundary("team_save", job, say_nothing)
        if not acked:  # a bug: the form stays open with its text, and says so
            failed = render.notice("internal_error")["text"]
            await ack(response_action="errors", errors={render.ANSWER_BLOCK: failed})

    async def on_edit(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        reply = reply_for_click(client, body, in_place=True)

        async def job() -> Outcome:
            found = await flow.editable(client, reply.user or "", first_action(body).get("value"))
            if isinstance(found, str):
                await reply.notify_asker(render.render_team_notice(found))
                return Outcome(route="team", outcome=found)
            if reply.channel and reply.response_url:  # Save shows this list anew
                found = replace(found, listed=(reply.channel, reply.response_url))
            return await _open(client, body.get("trigger_id"), found, reply)

        deps.inflight.spawn(deps.boundary("team_action", job, reply.notify_asker))

    async def on_remove(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        reply = reply_for_click(client, body, in_place=True)

        async def job() -> Outcome:
            value = first_action(body).get("value")
            shown, done = await flow.remove(client, reply.user or "", reply.channel, value)
            if not done:
                await reply.notify_asker(shown)
                return Outcome(route="team", outcome="refused")
            # the list replaced where it was shown (an ephemeral message: its response_url)
            if not await posting.respond(reply.response_url, shown, replace_original=True):
                await reply.notify_asker(shown)
            return Outcome(route="team", outcome="removed")

        deps.inflight.spawn(deps.boundary("team_action", job, reply.notify_asker))

    app.message_shortcut("save_team_answer")(on_save)
    app.view(render.TEAM_FORM_CALLBACK)(on_submit)
    app.action(render.ACTION_TEAM_LIST_EDIT)(on_edit)
    app.action(render.ACTION_TEAM_LIST_REMOVE)(on_remove)


async def _open(
    client: AsyncWebClient,
    trigger_id: object,
    form: render.TeamForm,
    reply: SlackReply,
    question: Callable[[], Awaitable[str | None]] | None = None,
) -> Outcome:
    opened = isinstance(trigger_id, str) and await open_team_form(
        client, trigger_id, form, question=question
    )
    if not opened:  # the trigger expired (a slow moment): using it again works
        await reply.notify_asker(render.notice("internal_error"))
        return Outcome(route="team", outcome="form_failed")
    return Outcome(route="team", outcome="form_opened")


async def thread_question(
    deps: SlackDeps, client: AsyncWebClient, body: dict[str, Any], bot_user_id: str | None
) -> str | None:
    """The question of the thread the message is in: what the bot remembers of it, else
    (for a reply) its first message. A thread's first message is the one saved: its text
    is the answer, not the question."""
    message, channel = as_dict(body.get("message")), as_str(as_dict(body.get("channel")).get("id"))
    ts = as_str(message.get("ts"))
    thread = as_str(message.get("thread_ts")) or ts
    if channel is None or thread is None:
        return None
    if thread == ts:
        topic = await deps.threads.topic(channel, thread)
        root = topic.question if topic is not None else None
    else:
        root = await thread_root(deps, client, channel, thread)
    asked = one_line(render.markdown_from_mrkdwn(strip_mention(root or "", bot_user_id)))
    return asked[:MAX_QUESTION_CHARS] or None


async def _tell_saved(
    client: AsyncWebClient, form: render.TeamForm, user: str, flow: TeamFlow
) -> None:
    """ "Saved as a team answer for …", to the saver alone: atop the `/gdocs team` list it
    was edited from, else where it was saved."""
    said = render.team_saved_text(form)
    try:
        if form.listed is not None:
            channel, url = form.listed
            shown = await flow.listing(client, channel, user, note=said)
            if await posting.respond(url, shown, replace_original=True):
                return
        notice = render.render_team_notice(said)
        await posting.post_ephemeral(client, channel=form.channel, user=user, msg=notice)
    except _NOT_SAID as exc:  # the answer is saved all the same
        logger.info("team answer saved, not said: %s", posting.why(exc))
