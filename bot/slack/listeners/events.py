"""`@gdocs …` mentions (answered in the thread), direct messages (answered in the DM, with the
thread status while the bot works), follow-ups without a mention in threads the bot
answered in, and top-level questions in answer channels (`/gdocs channel auto`,
ANSWER_CHANNELS; bot/slack/listeners/followups.py decides which)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.boundary import Outcome, duplicate, ignored
from bot.slack.delivery.replies import ThreadReply
from bot.slack.delivery.status import DmReply, work_kind
from bot.slack.deps import SlackDeps
from bot.slack.flows.answer import answer_question
from bot.slack.flows.routing import strip_mention, with_channel_privacy
from bot.slack.flows.threaded import streamed_reply
from bot.slack.listeners import stops
from bot.slack.listeners.followups import (
    THREAD_CHANNEL_TYPES,
    is_top_level,
    why_not_a_follow_up,
    why_not_an_auto_question,
    why_not_ours,
)
from bot.slack.memory.state import delivery_key
from bot.slack.work.durable import event_payload, track
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
        if event.get("channel_type") in THREAD_CHANNEL_TYPES:
            await hear_in_channel(deps, ack, body, client, event, context.bot_user_id)
            return
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
    stops.register(app, deps)  # before the catch-all below
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
    if not isinstance(event.get("team"), str) and isinstance(body.get("team_id"), str):
        event = {**event, "team": body["team_id"]}  # a stream in a channel names the team
    payload = event_payload(event, bot_user_id)
    record = await deps.work.accept(kind, payload, key=delivery_key(body))
    await ack()
    if record is None:
        duplicate(deps.metrics)
    else:
        job = handle_question(deps, client, event, bot_user_id, kind=kind, record=record)
        deps.inflight.spawn(job)


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


async def hear_in_channel(
    deps: SlackDeps,
    ack: AsyncAck,
    body: dict[str, Any],
    client: AsyncWebClient,
    event: dict[str, Any],
    bot_user_id: str | None,
) -> None:
    """A channel message: a top-level question in an answer channel, or a follow-up in the
    bot's thread, is answered in its thread (recorded before the ack, like any question);
    everything else is dropped here without a call. Only messages that pass the pure checks
    read the channel's settings (cached) and, for follow-ups, the thread's record."""
    top_level = is_top_level(event)
    kind = "auto" if top_level else "thread"
    if top_level:
        why = await _why_not_auto(deps, event, bot_user_id)
    else:
        why = await _why_not_follow_up(deps, event, bot_user_id)
    if why is not None:
        await ack()
        ignored(deps.metrics, "thread", why)
        return
    await _accept(deps, ack, body, client, event, bot_user_id, kind=kind)


async def _why_not_auto(
    deps: SlackDeps, event: dict[str, Any], bot_user_id: str | None
) -> str | None:
    """Why a top-level message is not answered (None: a question in an answer channel)."""
    why = why_not_an_auto_question(event, bot_user_id)
    if why is None and (await deps.channels.get(event["channel"])).mode != "auto":
        why = "not a reply in a thread (and not an answer channel)"
    return why


async def _why_not_follow_up(
    deps: SlackDeps, event: dict[str, Any], bot_user_id: str | None
) -> str | None:
    """Why a thread reply is not answered (None: a follow-up the bot answers)."""
    # the channel may override THREAD_FOLLOWUPS: its settings are read only for a reply
    # that may be a follow-up at all
    why = why_not_a_follow_up(event, bot_user_id, "anyone")
    if why is not None:
        return why
    channel_policy = (await deps.channels.get(event["channel"])).followups
    policy = channel_policy or deps.config.thread_followups
    if policy == "off":
        return "thread follow-ups are off"
    return await why_not_ours(deps.threads, event, policy)


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
    # a mention or an answer channel's question always gets a thread; a DM is answered in
    # the DM (in its thread, if any); a follow-up is a reply in a thread already
    thread_ts = in_thread or ts if kind in ("mention", "auto") else in_thread
    kind_of_reply = DmReply if kind == "dm" else ThreadReply
    direct = kind_of_reply(client, channel, event.get("user"), message_ts=ts, thread_ts=thread_ts)
    team = event.get("team") if isinstance(event.get("team"), str) else None
    stream = streamed_reply(deps, direct, team=team, record=record, resumed=resumed)
    reply = track(deps.work, stream or direct, record, resumed=resumed)

    async def job() -> Outcome:
        earlier = await deps.threads.question(channel, in_thread) if in_thread else None
        route = deps.router.route_in_thread(text, earlier)
        if isinstance(direct, DmReply):
            direct.status_kind = work_kind(route.kind)
            route = replace(route, private=False)  # a DM is private already
        else:  # `/gdocs channel private on`
            route = with_channel_privacy(route, (await deps.channels.get(channel)).private)
        answering = answer_question(deps, reply, route, question=text, name_asker=False)
        if stream is None:
            return await answering
        return await deps.streams.run(stream, answering, route.kind)

    await deps.boundary(kind, job, reply.notify_thread)
    if record is not None:
        await deps.work.finish(record)
