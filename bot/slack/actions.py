"""Buttons on answers: "Show full doc" (one per cited doc, then an overflow) and "Next page".

Button values come back from Slack's client and are untrusted: a name is validated before
anything is fetched, and a forged or stale value gets a short ephemeral explanation.
"""

from __future__ import annotations

import re
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.docs import is_valid_name
from bot.errors import GdocsError, InvalidInput, NotFound
from bot.render import (
    ACTION_NEXT_PAGE,
    ACTION_SHOW_DOC_MORE,
    ACTION_SHOW_DOC_PREFIX,
    decode_page_value,
    render_error,
)
from bot.slack import documents
from bot.slack.context import BotContext
from bot.slack.guard import RequestRecord, guarded, ignored
from bot.slack.posting import plain
from bot.slack.replies import ActionReply

SHOW_DOC_RE = re.compile(rf"^{re.escape(ACTION_SHOW_DOC_PREFIX)}\d+$")
#: a click's progress; ActionReply shows it as a reaction on the clicked message
FETCHING = plain("Fetching the document…")
STALE_BUTTON = (
    "That button does not point at a documentation page I can fetch "
    "(it may be out of date). Ask again with /gdocs."
)


def register(app: AsyncApp, ctx: BotContext) -> None:
    async def on_show_doc(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        ctx.inflight.spawn(handle_doc_action(ctx, client, body))

    async def on_unknown(ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        actions = body.get("actions") or [{}]
        ignored(ctx, "action", f"unknown action_id {str(actions[0].get('action_id'))[:100]!r}")

    app.action(SHOW_DOC_RE)(on_show_doc)
    app.action(ACTION_SHOW_DOC_MORE)(on_show_doc)
    app.action(ACTION_NEXT_PAGE)(on_show_doc)
    app.action(re.compile(r".*"))(on_unknown)


def requested_page(action: dict[str, Any]) -> tuple[str, int]:
    """(document name, page) a button asks for; InvalidInput when the value is not ours."""
    action_id = action.get("action_id")
    name: object
    page = documents.FIRST_PAGE
    if action_id == ACTION_NEXT_PAGE:
        value = action.get("value")
        if not isinstance(value, str):
            raise InvalidInput(STALE_BUTTON)
        name, page = decode_page_value(value)
    elif action_id == ACTION_SHOW_DOC_MORE:
        option = action.get("selected_option")
        name = option.get("value") if isinstance(option, dict) else None
    else:
        name = action.get("value")
    if not isinstance(name, str) or not is_valid_name(name):
        raise InvalidInput(STALE_BUTTON)
    return name, page


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _where(client: AsyncWebClient, body: dict[str, Any]) -> ActionReply:
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


async def handle_doc_action(ctx: BotContext, client: AsyncWebClient, body: dict[str, Any]) -> None:
    reply = _where(client, body)

    async def work(record: RequestRecord) -> None:
        record.route = "doc"
        actions = body.get("actions")
        action = _dict(actions[0]) if isinstance(actions, list) and actions else {}
        try:
            name, page = requested_page(action)
        except InvalidInput:
            record.outcome = "invalid_input"
            await reply.notice(plain(STALE_BUTTON))
            return
        await reply.start_progress(FETCHING)
        try:
            doc = await documents.fetch(ctx, name, record)
            await documents.show(ctx, client, reply, doc, page=page, record=record)
        except NotFound:
            record.outcome = "not_found"
            await reply.notice(plain(documents.NO_LONGER_AVAILABLE))
        except GdocsError as error:
            record.outcome = error.code.value
            await reply.notice(render_error(error))
        finally:
            await reply.finish()

    await guarded(ctx, "action", work, reply.notice)
