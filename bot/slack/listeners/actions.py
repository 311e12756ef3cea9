"""Buttons and forms: Show full doc / Next page (durable work), Share, Ask again, feedback
and its form; other actions are acknowledged and ignored. Button values are untrusted: a
forged or stale one gets a short ephemeral explanation."""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot import render
from bot.errors import GdocsError, InvalidInput, NotFound
from bot.names import is_valid_name
from bot.slack.boundary import DEVELOPER_KNOWLEDGE, Job, Notify, Outcome, ignored, say_nothing
from bot.slack.delivery.replies import SlackReply
from bot.slack.deps import SlackDeps
from bot.slack.flows.feedback import open_comment_form, store_comment, vote
from bot.slack.flows.pages import FIRST_PAGE
from bot.slack.flows.sharing import share
from bot.slack.memory.state import delivery_key
from bot.slack.work.durable import action_payload, track
from bot.slack.work.worklog import WorkRecord

SHOW_DOC_RE = re.compile(rf"^{re.escape(render.ACTION_SHOW_DOC_PREFIX)}\d+$")


def register(app: AsyncApp, deps: SlackDeps) -> None:
    def run(kind: str, job: Job, notify: Notify) -> None:
        deps.inflight.spawn(deps.boundary(kind, job, notify))

    async def on_show_doc(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        record = await deps.work.accept("action", action_payload(body), key=delivery_key(body))
        await ack()
        if record is not None:
            deps.inflight.spawn(handle_doc_click(deps, client, body, record=record))

    async def on_share(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        reply = reply_for_click(client, body)
        value = _action(body).get("value")
        run("action", partial(share, deps.private, deps.threads, reply, value), reply.notify_thread)

    async def on_ask_again(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        user = _dict(body.get("user")).get("id")
        if not isinstance(user, str) or not user:
            ignored(deps.metrics, "home_action", "no user")
            return
        reply = SlackReply(client, "direct", None, user)

        async def job() -> Outcome:
            try:
                question = render.decode_ask_again(_action(body).get("value"))
            except InvalidInput as exc:
                await reply.notify_asker(render.render_error(exc))
                return Outcome(route="-", outcome="invalid_input")
            route = deps.router.route(question)
            return await deps.answers(reply, route, question=question, name_asker=True)

        run("home_action", job, reply.notify_asker)

    async def on_vote(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        reply = reply_in_place(client, body)
        value = _action(body).get("value")
        run(
            "feedback", partial(vote, deps.feedback, deps.metrics, reply, value), reply.notify_asker
        )

    async def on_comment_button(
        ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        reply = reply_in_place(client, body)
        form = partial(open_comment_form, reply, body.get("trigger_id"), _action(body).get("value"))
        run("feedback", form, reply.notify_asker)

    async def on_comment(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        """The form was sent: a vote we cannot place is said in the form, which Slack keeps
        open (one store read before the ack, well inside Slack's 3 s)."""
        view, voter = body.get("view"), _dict(body.get("user")).get("id")
        try:
            placed = render.vote_from_view(view)
        except InvalidInput:
            placed = None
        answer = await deps.feedback.answer(placed.answer_id) if placed is not None else None
        if placed is None or answer is None or not isinstance(voter, str) or not voter:
            stale = render.notice("feedback_stale")["text"]
            await ack(response_action="errors", errors={render.COMMENT_BLOCK_ID: stale})
            await deps.boundary("feedback_comment", _stale, say_nothing)
            return
        await ack()
        comment = render.comment_from_view(view)
        job = partial(store_comment, deps.feedback, client, answer, placed, voter, comment)
        run("feedback_comment", job, say_nothing)

    async def on_unknown(ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        why = f"unknown action_id {str(_action(body).get('action_id'))[:100]!r}"
        ignored(deps.metrics, "action", why)

    app.action(render.ASK_AGAIN_ACTION_RE)(on_ask_again)
    app.action(render.ACTION_FEEDBACK)(on_vote)
    app.action(render.ACTION_FEEDBACK_COMMENT)(on_comment_button)
    app.view(render.FEEDBACK_MODAL_CALLBACK)(on_comment)
    app.action(render.ACTION_SHARE)(on_share)
    for action_id in (SHOW_DOC_RE, render.ACTION_SHOW_DOC_MORE, render.ACTION_NEXT_PAGE):
        app.action(action_id)(on_show_doc)
    app.action(re.compile(r".*"))(on_unknown)  # last: Bolt runs the first that matches


async def _stale() -> Outcome:
    return Outcome(route="feedback", outcome="stale")


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


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _action(body: dict[str, Any]) -> dict[str, Any]:
    actions = body.get("actions")
    return _dict(actions[0]) if isinstance(actions, list) and actions else {}


def reply_for_click(client: AsyncWebClient, body: dict[str, Any]) -> SlackReply:
    """Reply into the answer message's thread; notices go to the clicker alone."""
    container = _dict(body.get("container"))
    message = _dict(body.get("message"))
    thread_ts = container.get("thread_ts") or message.get("thread_ts") or message.get("ts")
    message_ts = container.get("message_ts") or message.get("ts")
    if container.get("is_ephemeral"):
        thread_ts = message_ts = None
    return SlackReply(
        client,
        "click",
        channel=_dict(body.get("channel")).get("id") or container.get("channel_id"),
        user=_dict(body.get("user")).get("id"),
        response_url=body.get("response_url"),
        thread_ts=thread_ts,
        message_ts=message_ts,
    )


def reply_in_place(client: AsyncWebClient, body: dict[str, Any]) -> SlackReply:
    """Notices to the clicker beside the clicked message: in its thread when it is in one,
    else in the channel (a top-level answer's thread may not be open)."""
    container = _dict(body.get("container"))
    message = _dict(body.get("message"))
    thread_ts = container.get("thread_ts") or message.get("thread_ts")
    user = _dict(body.get("user")).get("id")
    return SlackReply(
        client,
        "click",
        channel=_dict(body.get("channel")).get("id") or container.get("channel_id"),
        user=user if isinstance(user, str) and user else None,
        response_url=body.get("response_url"),
        thread_ts=None if container.get("is_ephemeral") else thread_ts,
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
    pages = deps.pages

    async def job() -> Outcome:
        requested = requested_page(_action(body))
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

    await deps.boundary("action", job, reply.notify_thread)
    if record is not None:
        await deps.work.finish(record)
