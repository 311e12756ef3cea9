"""`@gdocs …` mentions (answered in the thread) and direct messages (answered in the DM)."""

from __future__ import annotations

import re
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.boundary import Outcome, handle, ignored
from bot.slack.deps import SlackDeps
from bot.slack.durable import event_payload, track
from bot.slack.flows import answer_question
from bot.slack.replies import ThreadReply
from bot.slack.routing import strip_mention
from bot.slack.state import delivery_key
from bot.worklog import WorkRecord


def register(app: AsyncApp, deps: SlackDeps) -> None:
    async def on_mention(
        ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> None:
        event = body.get("event") or {}
        if _not_a_person_asking(event, context):
            await ack()
            ignored(deps.metrics, "mention", "not a person's new message")
            return
        await _accept(deps, ack, body, client, event, context.bot_user_id, kind="mention")

    async def on_message(
        ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> None:
        event = body.get("event") or {}
        if event.get("channel_type") != "im" or _not_a_person_asking(event, context):
            await ack()
            why = "not a direct message" if event.get("channel_type") != "im" else "not a person"
            ignored(deps.metrics, "dm", why)
            return
        await _accept(deps, ack, body, client, event, context.bot_user_id, kind="dm")

    async def on_other_event(ack: AsyncAck, body: dict[str, Any]) -> None:
        # subscribed by mistake or new: acknowledge so Slack does not retry it
        await ack()
        ignored(deps.metrics, "event", "an event type the bot does not handle")

    app.event("app_mention")(on_mention)
    app.event("message")(on_message)
    app.event(re.compile(r".*"))(on_other_event)


async def _accept(
    deps: SlackDeps,
    ack: AsyncAck,
    body: dict[str, Any],
    client: AsyncWebClient,
    event: dict[str, Any],
    bot_user_id: str | None,
    *,
    kind: str,
) -> None:
    """Record the question, then acknowledge it, then work on it: a crash after the ack
    loses nothing (a retry of recorded work is acknowledged and left to its owner)."""
    payload = event_payload(event, bot_user_id)
    record = await deps.work.accept(kind, payload, key=delivery_key(body))
    await ack()
    if record is not None:
        work = handle_question(deps, client, event, bot_user_id, kind=kind, record=record)
        deps.inflight.spawn(work)


def _not_a_person_asking(event: dict[str, Any], context: AsyncBoltContext) -> bool:
    """Edits, joins, bot posts (ours or another bot's): anything but a person's new message."""
    return (
        "subtype" in event
        or bool(event.get("bot_id"))
        or not isinstance(event.get("user"), str)
        or event.get("user") == context.bot_user_id
        or not isinstance(event.get("channel"), str)
        or not isinstance(event.get("ts"), str)
    )


async def handle_question(
    deps: SlackDeps,
    client: AsyncWebClient,
    event: dict[str, Any],
    bot_user_id: str | None,
    *,
    kind: str,
    record: WorkRecord | None = None,
    resumed: bool = False,
) -> None:
    channel: str = event["channel"]
    ts: str = event["ts"]
    in_thread = event.get("thread_ts") if isinstance(event.get("thread_ts"), str) else None
    raw = event.get("text") if isinstance(event.get("text"), str) else ""
    text = strip_mention(raw or "", bot_user_id)
    # a mention always gets a thread; a DM is answered in the DM (in its thread, if any)
    thread_ts = in_thread or ts if kind == "mention" else in_thread
    thread = ThreadReply(client, channel, event.get("user"), message_ts=ts, thread_ts=thread_ts)
    reply = track(deps.work, thread, record, resumed=resumed)

    async def work() -> Outcome:
        earlier = await deps.threads.question(channel, in_thread) if in_thread else None
        route = deps.router.route_in_thread(text, earlier)
        return await answer_question(deps, reply, route, question=text, name_asker=False)

    await handle(kind, work, reply.notify_thread, inflight=deps.inflight, metrics=deps.metrics)
    if record is not None:
        await deps.work.finish(record)
