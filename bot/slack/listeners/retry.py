"""Try again under an error: the same question asked again where it was asked, recorded as
work before the acknowledgement like any question (a restart finishes it). Under `/gdocs`'s
private error it is the command again (`private` stays private), its note replacing the error;
under a message in a channel's thread or a DM, a reply there."""

from __future__ import annotations

from functools import partial
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot import render
from bot.errors import InvalidInput
from bot.slack.boundary import as_dict, as_str, first_action, ignored
from bot.slack.delivery import posting
from bot.slack.deps import SlackDeps
from bot.slack.listeners.commands import handle_command
from bot.slack.listeners.events import handle_question


def is_try_again(body: dict[str, Any]) -> bool:
    """A Try again click: claimed with its work record."""
    return body.get("type") == "block_actions" and first_action(body).get("action_id") == (
        render.ACTION_TRY_AGAIN
    )


def register(app: AsyncApp, deps: SlackDeps) -> None:
    async def on_try_again(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        channel, user = _id(body.get("channel")), _id(body.get("user"))
        url = as_str(body.get("response_url"))
        try:
            text = render.decode_try_again(first_action(body).get("value"))
        except InvalidInput as exc:
            await ack()
            await posting.respond(url, render.render_error(exc), session=client.session)
            ignored(deps.metrics, "action", "a Try again value not made by this bot")
            return
        if channel is None or user is None:
            await ack()
            return
        kind, payload = again(body, text, channel, user, url)
        if kind == "command":
            handle = partial(handle_command, deps, client, payload, posting.OnceAck(None))
        else:
            handle = partial(handle_question, deps, client, payload["event"], None, kind=kind)
        await deps.take(ack, body, kind, payload, handle)

    app.action(render.ACTION_TRY_AGAIN)(on_try_again)


def again(
    body: dict[str, Any], text: str, channel: str, user: str, url: str | None
) -> tuple[str, dict[str, Any]]:
    """The work kind and record of asking `text` again: a command under an ephemeral error
    (no message of its own to reply to), else a reply in the error's thread or DM."""
    message, team = as_dict(body.get("message")), _id(body.get("team"))
    ts, thread = as_str(message.get("ts")), as_str(message.get("thread_ts"))
    if ts is None or as_dict(body.get("container")).get("is_ephemeral"):
        kept = dict(command="/gdocs", text=text, channel_id=channel, user_id=user, retry="1")
        return "command", kept | _set(response_url=url, team_id=team)
    in_dm = channel.startswith("D")
    event = dict(type="message", channel=channel, user=user, text=text, ts=ts)
    event |= _set(thread_ts=thread or (None if in_dm else ts), team=team)
    return ("dm" if in_dm else "thread"), {"event": event, "bot_user_id": None}


def _set(**values: str | None) -> dict[str, str]:
    return {name: value for name, value in values.items() if value is not None}


def _id(value: object) -> str | None:
    return as_str(as_dict(value).get("id"))
