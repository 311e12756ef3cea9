"""`@gdocs …` mentions (answered in the thread), direct messages (answered in the DM, with the
thread status while the bot works) and follow-ups without a mention in threads the bot
answered in (bot/slack/listeners/followups.py decides which)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.boundary import Outcome, ignored
from bot.slack.delivery.replies import ThreadReply
from bot.slack.delivery.status import DmReply, work_kind
from bot.slack.deps import SlackDeps
from bot.slack.flows.answer import answer_question
from bot.slack.flows.routing import strip_mention
from bot.slack.flows.threaded import streamed_reply
from bot.slack.listeners import stops
from bot.slack.listeners.followups import THREAD_CHANNEL_TYPES, why_not_a_follow_up, why_not_ours
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
    if record is not None:
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
    """A channel message: a follow-up in the bot's thread is answered there (recorded before
    the ack, like any question); everything else is dropped here without a call (only the
    thread check reads the store)."""
    policy = deps.config.thread_followups
    why = why_not_a_follow_up(event, bot_user_id, policy)
    if why is None:
        why = await why_not_ours(deps.threads, event, policy)
    if why is not None:
        await ack()
        ignored(deps.metrics, "thread", why)
        return
    await _accept(deps, ack, body, client, event, bot_user_id, kind="thread")


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
    # a mention always gets a thread; a DM is answered in the DM (in its thread, if any); a
    # follow-up is a reply in a thread already
    thread_ts = in_thread or ts if kind == "mention" else in_thread
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
        answering = answer_question(deps, reply, route, question=text, name_asker=False)
        if stream is None:
            return await answering
        return await deps.streams.run(stream, answering, route.kind)

    await deps.boundary(kind, job, reply.notify_thread)
    if record is not None:
        await deps.work.finish(record)
