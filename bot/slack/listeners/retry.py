"""Try again under an error, and "Ask Google's docs too" under a team answer: the same
question asked again where it was asked (the second with the team's answer skipped), recorded
as work before the acknowledgement like any question (a restart finishes it). Under `/gdocs`'s
private message it is the command again (`private` stays private), its note replacing that
message; under a message in a channel's thread or a DM, a reply there."""

from __future__ import annotations

from functools import partial
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot import render
from bot.errors import InvalidInput
from bot.slack import identity
from bot.slack.boundary import as_dict, as_str, first_action, ignored
from bot.slack.delivery import posting
from bot.slack.deps import SlackDeps
from bot.slack.listeners.commands import handle_command
from bot.slack.listeners.events import handle_question

#: the buttons that ask again, and whether the team's answer is skipped
_ASKING_AGAIN = {render.ACTION_TRY_AGAIN: False, render.ACTION_ASK_GOOGLE: True}


def is_try_again(body: dict[str, Any]) -> bool:
    """A Try again (or Ask Google's docs too) click: claimed with its work record."""
    action_id = first_action(body).get("action_id")
    return body.get("type") == "block_actions" and action_id in _ASKING_AGAIN


def register(app: AsyncApp, deps: SlackDeps) -> None:
    async def on_try_again(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        skip_team = first_action(body).get("action_id") == render.ACTION_ASK_GOOGLE
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
        kind, payload = again(body, text, channel, user, url, skip_team=skip_team)
        if kind == "command":
            handle = partial(handle_command, deps, client, payload, posting.OnceAck(None))
        else:
            handle = partial(handle_question, deps, client, payload["event"], None, kind=kind)
        await deps.take(ack, body, kind, payload, handle)

    for action_id in _ASKING_AGAIN:
        app.action(action_id)(on_try_again)


def again(
    body: dict[str, Any],
    text: str,
    channel: str,
    user: str,
    url: str | None,
    *,
    skip_team: bool = False,
) -> tuple[str, dict[str, Any]]:
    """The work kind and record of asking `text` again: a command under an ephemeral message
    (no message of its own to reply to), else a reply in the message's thread or DM.
    `skip_team`: kept in the record ("skip_team": "1"), so a restart skips it too."""
    skip = _set(skip_team="1" if skip_team else None)
    message = as_dict(body.get("message"))
    # org-wide on Grid `team` is null: the clicker's workspace, a stream's recipient
    team = identity.asker_workspace(body) or _id(body.get("team"))
    ts, thread = as_str(message.get("ts")), as_str(message.get("thread_ts"))
    if ts is None or as_dict(body.get("container")).get("is_ephemeral"):
        kept = dict(command="/gdocs", text=text, channel_id=channel, user_id=user, retry="1")
        return "command", kept | _set(response_url=url, team_id=team) | skip
    in_dm = channel.startswith("D")
    event = dict(type="message", channel=channel, user=user, text=text, ts=ts)
    event |= _set(thread_ts=thread or (None if in_dm else ts), team=team) | skip
    return ("dm" if in_dm else "thread"), {"event": event, "bot_user_id": None}


def _set(**values: str | None) -> dict[str, str]:
    return {name: value for name, value in values.items() if value is not None}


def _id(value: object) -> str | None:
    return as_str(as_dict(value).get("id"))
