"""Events: mentions, direct messages, follow-ups in the bot's threads and questions in
answer channels, the Stop button, the App Home's tabs, and link previews."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import partial
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.render import WorkKind
from bot.slack import guests, identity
from bot.slack.boundary import Outcome, as_dict, ignored, say_nothing
from bot.slack.delivery.replies import SlackReply, Where
from bot.slack.deps import SlackDeps
from bot.slack.flows.pages import unfurl
from bot.slack.flows.routing import (
    THREAD_CHANNEL_TYPES,
    is_top_level,
    strip_mention,
    why_not_a_follow_up,
    why_not_a_person,
    why_not_asked,
    with_channel,
)
from bot.slack.work.stops import slack_time
from bot.slack.work.worklog import WorkRecord, streamed, track

#: what a DM's status says for a route (help and quota never show one)
_WORK_KINDS: tuple[WorkKind, ...] = ("answer", "search", "pay", "doc")
#: what the work record keeps of an event
_KEPT = ("type", "channel", "channel_type", "user", "text", "ts", "thread_ts", "team")


def register(app: AsyncApp, deps: SlackDeps) -> None:
    async def on_mention(
        ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> None:
        event = body.get("event") or {}
        if why_not_a_person(event, context.bot_user_id):
            await ack()
            ignored(deps.metrics, "mention", "not a person's new message")
            return
        await _accept(deps, ack, body, client, event, context, kind="mention")

    async def on_message(
        ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> None:
        event, bot_user_id = body.get("event") or {}, context.bot_user_id
        # a question in an answer channel, a follow-up in the bot's thread, or a DM; only
        # what passes the pure checks reads the store
        if event.get("channel_type") in THREAD_CHANNEL_TYPES:
            top_level = is_top_level(event)
            kind = "auto" if top_level else "thread"
            why = await _why_not_heard(deps, event, bot_user_id, top_level)
        else:
            kind, why = "dm", None
            if event.get("channel_type") != "im":
                why = "not a direct message"
            elif why_not_a_person(event, bot_user_id):
                why = "not a person"
        if why is not None:
            await ack()
            ignored(deps.metrics, "dm" if kind == "dm" else "thread", why)
            return
        await _accept(deps, ack, body, client, event, context, kind=kind)

    async def on_stopped(ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        event = body.get("event") or {}
        channel, thread = event.get("channel"), event.get("thread_ts")
        if not isinstance(channel, str) or not isinstance(thread, str):
            ignored(deps.metrics, "stop", "no channel or thread")
        elif deps.streams.stop(channel, thread) is not None:
            deps.metrics.request("stop", "ok")
        # answered already, or worked on by another replica: tell the replicas
        elif await deps.streams.relay(channel, thread, slack_time(event.get("event_ts"))):
            deps.metrics.request("stop", "relayed")
        else:
            ignored(deps.metrics, "stop", "no answer in progress in this process")

    async def on_home_opened(
        ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> None:
        await ack()
        event = body.get("event") or {}
        user, channel, tab = event.get("user"), event.get("channel"), event.get("tab")
        if not isinstance(user, str) or not user:
            ignored(deps.metrics, "home", "no user")
        elif await guests.is_guest(deps, client, body, context):
            ignored(deps.metrics, "home", "a guest from another organisation")
        elif tab == "home":
            job = partial(deps.home.publish, client, user)
            deps.inflight.spawn(deps.boundary("home", job, say_nothing))
        elif tab == "messages" and isinstance(channel, str) and channel:
            job = partial(deps.home.set_prompts, client, user, channel)
            deps.inflight.spawn(deps.boundary("prompts", job, say_nothing))
        else:
            ignored(deps.metrics, "home", "a tab the bot shows nothing on")

    async def on_link_shared(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        event = as_dict(body.get("event"))
        job = partial(unfurl, deps.service, deps.store, client, event)
        deps.inflight.spawn(deps.boundary("unfurl", job, say_nothing))

    async def on_other_event(ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()  # subscribed by mistake or new: acknowledged so Slack does not retry it
        ignored(deps.metrics, "event", "an event type the bot does not handle")

    app.event("app_mention")(on_mention)
    app.event("message")(on_message)
    app.event("agent_session_stopped")(on_stopped)
    app.event("app_home_opened")(on_home_opened)
    app.event("link_shared")(on_link_shared)
    app.event(re.compile(r".*"))(on_other_event)  # last: Bolt runs the first that matches


async def _accept(
    deps: SlackDeps,
    ack: AsyncAck,
    body: dict[str, Any],
    client: AsyncWebClient,
    event: dict[str, Any],
    context: AsyncBoltContext,
    *,
    kind: str,
) -> None:
    if await guests.is_guest(deps, client, body, context):  # heard, but not answered
        await guests.refuse_question(deps, ack, body, client, event)
        return
    bot_user_id = context.bot_user_id
    workspace = identity.asker_workspace(body)  # a stream names the asker's workspace
    if workspace is not None:
        event = {**event, "team": workspace}
    kept = {k: event[k] for k in _KEPT if isinstance(event.get(k), str)}
    handle = partial(handle_question, deps, client, event, bot_user_id, kind=kind)
    await deps.take(ack, body, kind, {"event": kept, "bot_user_id": bot_user_id}, handle)


async def _why_not_heard(
    deps: SlackDeps, event: dict[str, Any], bot_user_id: str | None, top_level: bool
) -> str | None:
    if top_level:
        why = why_not_a_person(event, bot_user_id) or why_not_asked(event)
        if why is None and (await deps.channels.get(event["channel"])).mode != "auto":
            why = "not a reply in a thread (and not an answer channel)"
        return why
    why = why_not_a_follow_up(event, bot_user_id)
    if why is not None:
        return why
    # the channel may override THREAD_FOLLOWUPS
    policy = (await deps.channels.get(event["channel"])).followups or deps.settings.thread_followups
    if policy == "off":
        return "thread follow-ups are off"
    topic = await deps.threads.topic(event["channel"], event["thread_ts"])
    if topic is None:
        return "not a thread the bot answered in"
    if policy == "asker" and topic.asker != event.get("user"):
        return "not from the thread's original asker"
    return None


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
    where: Where = "dm" if kind == "dm" else "thread"
    direct = SlackReply(
        client, where, channel, event.get("user"), message_ts=ts, thread_ts=thread_ts
    )
    team = event.get("team") if isinstance(event.get("team"), str) else None
    stream = None
    if deps.settings.stream_answers:
        stream = streamed(deps.work, direct, team=team, record=record, resumed=resumed)
    reply = track(deps.work, stream or direct, record, resumed=resumed)

    async def job() -> Outcome:
        topic = await deps.threads.topic(channel, in_thread) if in_thread else None
        if topic is None:
            route = deps.router.route(text)
        else:  # a follow-up carries the thread's question and the products it named
            route = deps.router.route_in_thread(text, topic.question, topic.scope)
        if where == "dm":
            direct.status_kind = next((k for k in _WORK_KINDS if k == route.kind), "answer")
            route = replace(route, private=False)  # a DM is private already
        else:  # `/gdocs channel private on`, `products …`
            route = with_channel(route, await deps.channels.get(channel))
        skip_team = event.get("skip_team") == "1"  # Ask Google's docs too (retry.py)
        answering = deps.answers(reply, route, question=text, name_asker=False, skip_team=skip_team)
        return await deps.streams.run(stream, answering, route.kind)

    await deps.run(kind, job, reply.notify_thread, record)
