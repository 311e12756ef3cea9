"""The Stop button of a streamed answer (`agent_session_stopped`): the work for that thread
is cancelled and its stream ends with "Stopped." (bot.slack.delivery.streams). When another
replica works on that thread, a marker in the shared store tells it (bot.slack.work.stops)."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.slack.boundary import ignored
from bot.slack.deps import SlackDeps
from bot.slack.work.stops import slack_time


def register(app: AsyncApp, deps: SlackDeps) -> None:
    async def on_stopped(ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        event = body.get("event") or {}
        channel, thread = event.get("channel"), event.get("thread_ts")
        if not isinstance(channel, str) or not isinstance(thread, str):
            ignored(deps.metrics, "stop", "no channel or thread")
            return
        if deps.streams.stop(channel, thread) is None:
            # answered already, or worked on by another replica: tell the replicas
            if not await deps.streams.relay(channel, thread, slack_time(event.get("event_ts"))):
                ignored(deps.metrics, "stop", "no answer in progress in this process")
                return
            deps.metrics.request("stop", "relayed")
            return
        deps.metrics.request("stop", "ok")

    app.event("agent_session_stopped")(on_stopped)
