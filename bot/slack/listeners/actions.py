"""Buttons on answers: "Show full doc" (one per cited doc, then an overflow) and "Next page".

Button values come back from Slack's client and are untrusted: a name is validated before
anything is fetched, and a forged or stale value gets a short ephemeral explanation.
"""

from __future__ import annotations

import re
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import GdocsError, InvalidInput, NotFound
from bot.names import is_valid_name
from bot.render import (
    ACTION_NEXT_PAGE,
    ACTION_SHOW_DOC_MORE,
    ACTION_SHOW_DOC_PREFIX,
    decode_page_value,
    render_document_gone,
    render_error,
    render_fetching,
    render_stale_button,
)
from bot.slack.boundary import DEVELOPER_KNOWLEDGE, Outcome, ignored
from bot.slack.delivery.replies import ActionReply
from bot.slack.deps import SlackDeps
from bot.slack.flows.show_doc import FIRST_PAGE, fetch_document, show_document
from bot.slack.memory.state import delivery_key
from bot.slack.work.durable import action_payload, track
from bot.worklog import WorkRecord

SHOW_DOC_RE = re.compile(rf"^{re.escape(ACTION_SHOW_DOC_PREFIX)}\d+$")


def register(app: AsyncApp, deps: SlackDeps) -> None:
    async def on_show_doc(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        record = await deps.work.accept("action", action_payload(body), key=delivery_key(body))
        await ack()
        if record is not None:
            deps.inflight.spawn(handle_doc_click(deps, client, body, record=record))

    async def on_unknown(ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        actions = body.get("actions") or [{}]
        why = f"unknown action_id {str(actions[0].get('action_id'))[:100]!r}"
        ignored(deps.metrics, "action", why)

    app.action(SHOW_DOC_RE)(on_show_doc)
    app.action(ACTION_SHOW_DOC_MORE)(on_show_doc)
    app.action(ACTION_NEXT_PAGE)(on_show_doc)
    app.action(re.compile(r".*"))(on_unknown)


def requested_page(action: dict[str, Any]) -> tuple[str, int] | None:
    """(document name, page) a button asks for; None when the value is not ours (forged,
    or out of date)."""
    action_id = action.get("action_id")
    name: object
    page = FIRST_PAGE
    if action_id == ACTION_NEXT_PAGE:
        value = action.get("value")
        if not isinstance(value, str):
            return None
        try:
            name, page = decode_page_value(value)
        except InvalidInput:
            return None
    elif action_id == ACTION_SHOW_DOC_MORE:
        option = action.get("selected_option")
        name = option.get("value") if isinstance(option, dict) else None
    else:
        name = action.get("value")
    if not isinstance(name, str) or not is_valid_name(name):
        return None
    return name, page


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def reply_for_click(client: AsyncWebClient, body: dict[str, Any]) -> ActionReply:
    """Reply into the answer message's thread; notices go to the clicker alone."""
    container = _dict(body.get("container"))
    message = _dict(body.get("message"))
    thread_ts = container.get("thread_ts") or message.get("thread_ts") or message.get("ts")
    message_ts = container.get("message_ts") or message.get("ts")
    if container.get("is_ephemeral"):
        thread_ts = message_ts = None
    return ActionReply(
        client=client,
        channel=_dict(body.get("channel")).get("id") or container.get("channel_id"),
        user=_dict(body.get("user")).get("id"),
        response_url=body.get("response_url"),
        thread_ts=thread_ts,
        message_ts=message_ts,
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
    actions = body.get("actions")
    action = _dict(actions[0]) if isinstance(actions, list) and actions else {}

    async def job() -> Outcome:
        requested = requested_page(action)
        if requested is None:
            await reply.notify_asker(render_stale_button())
            return Outcome(route="doc", outcome="invalid_input")
        name, page = requested
        await reply.start_progress(render_fetching())
        try:
            doc = await fetch_document(deps, name)
            outcome = await show_document(deps, reply, doc, page=page)
            return Outcome("doc", outcome, DEVELOPER_KNOWLEDGE, "get_documents")
        except NotFound:
            await reply.notify_asker(render_document_gone())
            return Outcome("doc", "not_found", DEVELOPER_KNOWLEDGE)
        except GdocsError as error:
            await reply.notify_asker(render_error(error))
            return Outcome("doc", error.code.value, DEVELOPER_KNOWLEDGE)
        finally:
            await reply.finish()

    await deps.boundary("action", job, reply.notify_thread)
    if record is not None:
        await deps.work.finish(record)
