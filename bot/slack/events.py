"""`@gdocs …` mentions (answered in the thread), direct messages (answered in the DM, with the
thread status while the bot works) and follow-ups without a mention in threads the bot
answered in (bot/slack/followups.py decides which)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.boundary import Outcome, handle, ignored
from bot.slack.deps import SlackDeps
from bot.slack.flows import answer_question
from bot.slack.followups import THREAD_CHANNEL_TYPES, why_not_a_follow_up, why_not_ours
from bot.slack.replies import ThreadReply
from bot.slack.routing import strip_mention
from bot.slack.status import DmReply, work_kind


def register(app: AsyncApp, deps: SlackDeps) -> None:
    async def on_mention(
        ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> None:
        await ack()
        event = body.get("event") or {}
        if _not_a_person_asking(event, context):
            ignored(deps.metrics, "mention", "not a person's new message")
            return
        work = handle_question(deps, client, event, context.bot_user_id, kind="mention")
        deps.inflight.spawn(work)

    async def on_message(
        ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> None:
        await ack()
        event = body.get("event") or {}
        if event.get("channel_type") in THREAD_CHANNEL_TYPES:
            hear_in_channel(deps, client, event, context.bot_user_id)
            return
        if event.get("channel_type") != "im":
            ignored(deps.metrics, "dm", "not a direct message")
            return
        if _not_a_person_asking(event, context):
            ignored(deps.metrics, "dm", "not a person's new message")
            return
        deps.inflight.spawn(handle_question(deps, client, event, context.bot_user_id, kind="dm"))

    async def on_other_event(ack: AsyncAck, body: dict[str, Any]) -> None:
        # subscribed by mistake or new: acknowledge so Slack does not retry it
        await ack()
        ignored(deps.metrics, "event", "an event type the bot does not handle")

    app.event("app_mention")(on_mention)
    app.event("message")(on_message)
    app.event(re.compile(r".*"))(on_other_event)


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


def hear_in_channel(
    deps: SlackDeps, client: AsyncWebClient, event: dict[str, Any], bot_user_id: str | None
) -> None:
    """A channel message: a follow-up in the bot's thread is answered there; everything else
    is dropped here without a call (only the thread check reads the store)."""
    policy = deps.config.thread_followups
    why = why_not_a_follow_up(event, bot_user_id, policy)
    if why is not None:
        ignored(deps.metrics, "thread", why)
        return

    async def answer_if_ours() -> None:
        not_ours = await why_not_ours(deps.threads, event, policy)
        if not_ours is not None:
            ignored(deps.metrics, "thread", not_ours)
            return
        await handle_question(deps, client, event, bot_user_id, kind="thread")

    deps.inflight.spawn(answer_if_ours())


async def handle_question(
    deps: SlackDeps,
    client: AsyncWebClient,
    event: dict[str, Any],
    bot_user_id: str | None,
    *,
    kind: str,
) -> None:
    channel: str = event["channel"]
    ts: str = event["ts"]
    in_thread = event.get("thread_ts") if isinstance(event.get("thread_ts"), str) else None
    raw = event.get("text") if isinstance(event.get("text"), str) else ""
    text = strip_mention(raw or "", bot_user_id)
    # a mention always gets a thread; a DM is answered in the DM (in its thread, if any); a
    # follow-up is a reply in a thread already
    thread_ts = in_thread or ts if kind == "mention" else in_thread
    kind_of_reply = DmReply if kind == "dm" else ThreadReply
    reply = kind_of_reply(client, channel, event.get("user"), message_ts=ts, thread_ts=thread_ts)

    async def work() -> Outcome:
        earlier = await deps.threads.question(channel, in_thread) if in_thread else None
        route = deps.router.route_in_thread(text, earlier)
        if isinstance(reply, DmReply):
            reply.status_kind = work_kind(route.kind)
            route = replace(route, private=False)  # a DM is private already
        return await answer_question(deps, reply, route, question=text, name_asker=False)

    await handle(kind, work, reply.notify_thread, inflight=deps.inflight, metrics=deps.metrics)
