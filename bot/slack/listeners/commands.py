"""`/gdocs …` (answers in the channel, everything else ephemeral to the asker) and the
message shortcut "Ask Google's docs" (the message, with its thread's first message as
context, answered in its thread; where the bot may not post, to the person alone). Both are
recorded before the acknowledgement: a crash after it loses nothing."""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot import tenant
from bot.render import notice
from bot.slack import SLACK_CALL_FAILURES, identity
from bot.slack.boundary import Outcome, as_dict, as_str, duplicate
from bot.slack.delivery.posting import OnceAck
from bot.slack.delivery.replies import SlackReply
from bot.slack.deps import SlackDeps
from bot.slack.flows.routing import (
    channel_words,
    strip_mention,
    with_channel,
    with_root_context,
)
from bot.slack.memory import delivery_key
from bot.slack.work.worklog import WorkRecord, streamed, track
from bot.text import clean_text

logger = logging.getLogger(__name__)

#: how long the acknowledgement waits for the work's first reply (progress, help, a refusal)
#: to carry it; Slack gives up after 3 s
FIRST_REPLY_WITHIN = 2.0
#: what the work record keeps of a command
_KEPT = ("command", "text", "channel_id", "user_id", "response_url", "team_id")


def register(app: AsyncApp, deps: SlackDeps) -> None:
    async def on_command(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        kept = {k: body[k] for k in _KEPT if isinstance(body.get(k), str)}
        if deps.settings.oauth_mode:  # a restart resumes it with its installation's token
            kept["tenant"] = tenant.current()
        record = await deps.work.accept("command", kept, key=delivery_key(body))
        once = OnceAck(ack)
        if record is None:  # its work is recorded already (and being answered)
            duplicate(deps.metrics)
            await once()
            return
        job = handle_command(deps, client, body, once, record=record)
        await deps.inflight.start(job, until=once.done, within=FIRST_REPLY_WITHIN)
        await once()  # no reply in time: a bare acknowledgement (no-op once replied)

    app.command("/gdocs")(on_command)

    async def on_ask(
        ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> None:
        payload = shortcut_payload(body, context.bot_user_id)
        handle = partial(handle_shortcut, deps, client, payload)
        await deps.take(ack, body, "shortcut", payload, handle)

    app.message_shortcut("ask_gdocs")(on_ask)


async def handle_command(
    deps: SlackDeps,
    client: AsyncWebClient,
    body: dict[str, Any],
    ack: OnceAck,
    *,
    record: WorkRecord | None = None,
    resumed: bool = False,
) -> None:
    text = found if isinstance(found := body.get("text"), str) else ""
    command = str(body.get("command") or "/gdocs")
    channel, user, url = body.get("channel_id"), body.get("user_id"), body.get("response_url")
    direct = SlackReply(client, "command", channel, user, response_url=url, ack=ack)
    direct.in_place = body.get("retry") == "1"  # Try again's (retry.py): replaces the error
    reply = track(deps.work, direct, record, resumed=resumed)
    settings_words = channel_words(text)

    async def job() -> Outcome:
        if settings_words is not None:  # `/gdocs channel …`: the channel's settings
            return await deps.channel_command(reply, settings_words, command=command)
        route = deps.router.route(text)
        if route.kind == "team":  # `/gdocs team`: the team answers given here
            return await deps.team_flow.command(reply)
        if channel and not channel.startswith("D"):  # `/gdocs channel private on`, `products …`
            route = with_channel(route, await deps.channels.get(channel))
        question = clean_text(text)
        skip_team = body.get("skip_team") == "1"  # Ask Google's docs too (retry.py)
        return await deps.answers(
            reply, route, question=question, name_asker=True, command=command, skip_team=skip_team
        )

    await deps.run("command", job, reply.notify_thread, record)


def shortcut_payload(body: dict[str, Any], bot_user_id: str | None) -> dict[str, Any]:
    """What the work record keeps of a shortcut."""
    message = as_dict(body.get("message"))
    kept = ("ts", "thread_ts", "text", "user")
    return {
        "channel": as_dict(body.get("channel")).get("id"),
        "user": as_dict(body.get("user")).get("id"),
        "message": {k: message[k] for k in kept if isinstance(message.get(k), str)},
        "response_url": body.get("response_url"),
        # org-wide on Grid `team` is null: a stream names the asker's own workspace
        "team": identity.asker_workspace(body) or as_dict(body.get("team")).get("id"),
        "bot_user_id": bot_user_id,
    }


async def handle_shortcut(
    deps: SlackDeps,
    client: AsyncWebClient,
    payload: dict[str, Any],
    *,
    record: WorkRecord | None = None,
    resumed: bool = False,
) -> None:
    message = as_dict(payload.get("message"))
    channel, ts = as_str(payload.get("channel")), as_str(message.get("ts"))
    if channel is None or ts is None:
        if record is not None:
            await deps.work.drop(record, "unreadable")
        return
    thread = as_str(message.get("thread_ts"))
    in_reply = thread if thread is not None and thread != ts else None
    user, url = as_str(payload.get("user")), as_str(payload.get("response_url"))
    direct = SlackReply(
        client, "thread", channel, user, url, thread_ts=in_reply or ts, message_ts=ts
    )
    stream = None
    if deps.settings.stream_answers:
        team = as_str(payload.get("team"))
        stream = streamed(deps.work, direct, team=team, record=record, resumed=resumed)
    reply = track(deps.work, stream or direct, record, resumed=resumed)

    async def job() -> Outcome:
        bot_user_id = as_str(payload.get("bot_user_id"))
        text = strip_mention(as_str(message.get("text")) or "", bot_user_id)
        author = as_str(message.get("user"))
        if not text or (author is not None and author == bot_user_id):
            await reply.notify_asker(notice("own_answer" if text else "no_text"))
            return Outcome(route="-", outcome="invalid_input")
        root = await thread_root(deps, client, channel, in_reply) if in_reply else None
        route = deps.router.route_message(with_root_context(root, text))
        route = with_channel(route, await deps.channels.get(channel))
        answering = deps.answers(reply, route, question=text, name_asker=True, about=author)
        return await deps.streams.run(stream, answering, route.kind)

    await deps.run("shortcut", job, reply.notify_thread, record)


async def thread_root(
    deps: SlackDeps, client: AsyncWebClient, channel: str, thread_ts: str
) -> str | None:
    """A thread's first message: what the bot remembers, else conversations.replies."""
    known = await deps.threads.topic(channel, thread_ts)
    if known is not None and known.question:
        return known.question
    try:
        response = await client.conversations_replies(
            channel=channel, ts=thread_ts, limit=1, inclusive=True
        )
    except SLACK_CALL_FAILURES as exc:
        logger.info("conversations.replies failed: %s", type(exc).__name__)
        return None
    messages = response.get("messages")
    first = messages[0] if isinstance(messages, list) and messages else None
    return as_str(first.get("text")) if isinstance(first, dict) else None
