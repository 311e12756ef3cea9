"""`/gdocs …`: answers in the channel, everything else ephemeral to the asker."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.boundary import Outcome, duplicate
from bot.slack.delivery.posting import OnceAck
from bot.slack.delivery.replies import SlackReply
from bot.slack.deps import SlackDeps
from bot.slack.flows.routing import channel_words, with_channel_privacy
from bot.slack.memory import delivery_key
from bot.slack.work.worklog import WorkRecord, track
from bot.text import clean_text

#: how long the acknowledgement waits for the work's first reply (progress, help, a refusal)
#: to carry it; Slack gives up after 3 s
FIRST_REPLY_WITHIN = 2.0
#: what the work record keeps of a command
_KEPT = ("command", "text", "channel_id", "user_id", "response_url", "team_id")


def register(app: AsyncApp, deps: SlackDeps) -> None:
    async def on_command(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        # recorded before the acknowledgement: a crash after it loses nothing
        kept = {k: body[k] for k in _KEPT if isinstance(body.get(k), str)}
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


async def handle_command(
    deps: SlackDeps,
    client: AsyncWebClient,
    body: dict[str, Any],
    ack: OnceAck,
    *,
    record: WorkRecord | None = None,
    resumed: bool = False,
) -> None:
    text = body.get("text") if isinstance(body.get("text"), str) else ""
    command = str(body.get("command") or "/gdocs")
    reply = track(
        deps.work,
        SlackReply(
            client,
            "command",
            channel=body.get("channel_id"),
            user=body.get("user_id"),
            response_url=body.get("response_url"),
            ack=ack,
        ),
        record,
        resumed=resumed,
    )
    settings_words = channel_words(text or "")

    async def job() -> Outcome:
        if settings_words is not None:  # `/gdocs channel …`: the channel's settings
            return await deps.channel_command(reply, settings_words, command=command)
        route = deps.router.route(text or "")
        channel = reply.channel
        if channel and not channel.startswith("D"):  # `/gdocs channel private on`
            route = with_channel_privacy(route, (await deps.channels.get(channel)).private)
        question = clean_text(text or "")
        return await deps.answers(reply, route, question=question, name_asker=True, command=command)

    await deps.boundary("command", job, reply.notify_thread)
    if record is not None:
        await deps.work.finish(record)
