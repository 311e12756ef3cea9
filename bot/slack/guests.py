"""People from other organisations (Slack Connect guests). With EXTERNAL_USERS=deny (the
default) they get no answers, searches, pages, buttons, votes or Home: their questions spend
none of the organisation's quota and leave no record but one count in the report, and each
channel is told once why. Link previews still unfurl for them (they reveal nothing).

Who is a guest is decided here only, from `bot.slack.identity`: a member's request (whose
payload names the installation's workspace or organisation, or none, or is an event in a
workspace of the organisation) costs no Slack or store call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncBoltContext
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from bot import keys
from bot.render import notice
from bot.report.tally import GUEST_REFUSED
from bot.slack import identity
from bot.slack.boundary import Outcome, duplicate, say_nothing
from bot.slack.delivery.posting import post_visibly, respond
from bot.slack.deps import SlackDeps
from bot.slack.memory import delivery_key
from bot.store import TEXT, StoreError

#: a channel is told again after this long (keys.GUEST_NOTICE)
NOTICE_SECONDS = 90 * 86_400.0
#: the shortcut that asks a question (counted when refused, as a command is)
_ASKING_SHORTCUT = "ask_gdocs"

Middleware = Callable[..., Awaitable[BoltResponse | None]]


async def is_guest(
    deps: SlackDeps, client: AsyncWebClient, body: dict[str, Any], context: AsyncBoltContext
) -> bool:
    """Whether the request comes from someone outside the installation's organisation (and
    EXTERNAL_USERS=deny). Slack not saying where someone is from makes them a member."""
    if deps.settings.external_users == "answer":
        return False
    who, home = identity.asker(body), identity.install(context)
    found = identity.is_guest(who, home)
    if found is None and "event" in body and who.team == body.get("team_id"):
        # an event in the asker's own workspace names its organisation: one of ours? (read so
        # by slack_bolt's extract_actor_enterprise_id, in shared channels too)
        found = False if body.get("enterprise_id") == home.org else None
    if found is None and who.user is not None:  # a Grid workspace the payload cannot place
        profile = await deps.profiles.knowing(client, who.user, "team")
        # placed by Slack in no Grid organisation, or in another: not one of ours
        found = profile is not None and profile.team is not None and profile.org != home.org
    return bool(found)


async def refuse_question(
    deps: SlackDeps,
    ack: AsyncAck,
    body: dict[str, Any],
    client: AsyncWebClient,
    event: dict[str, Any],
) -> None:
    """A guest's question the bot would have heard: claimed (Slack's retries count once),
    acknowledged, counted, and its channel told once, in the guest's thread."""
    key = delivery_key(body)
    claimed = key is None or await deps.work.claim(key)
    await ack()
    if not claimed:
        duplicate(deps.metrics)
        return
    job = partial(_tell_channel, deps, client, event)
    deps.inflight.spawn(deps.boundary("guest", job, say_nothing))


async def _tell_channel(deps: SlackDeps, client: AsyncWebClient, event: dict[str, Any]) -> Outcome:
    await deps.tally.count(GUEST_REFUSED)
    channel, ts, thread = (event.get(k) for k in ("channel", "ts", "thread_ts"))
    if not isinstance(channel, str) or not channel or not isinstance(ts, str):
        return Outcome(outcome="guest")
    try:
        first = await deps.store.add(keys.GUEST_NOTICE.key(channel), "1", TEXT, NOTICE_SECONDS)
    except StoreError:
        first = False  # rather no notice than one per question
    if first:
        where = thread if isinstance(thread, str) and thread else ts
        await post_visibly(client, channel=channel, msg=notice("guests"), thread_ts=where)
    return Outcome(outcome="guest")


def refusing_guests(deps: SlackDeps) -> Middleware:
    """Bolt middleware: a guest's command, shortcut, click or modal is refused privately
    (the command's acknowledgement; else the response_url, if any). Events pass: only the
    listener knows whether the bot would have heard one (events.py)."""

    async def refuse_guests(
        body: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
        next_: Callable[[], Awaitable[None]],
    ) -> BoltResponse | None:
        interactive = isinstance(body.get("command"), str) or isinstance(body.get("user"), dict)
        if "event" in body or not interactive or not await is_guest(deps, client, body, context):
            await next_()
            return None
        msg, command = notice("guests"), isinstance(body.get("command"), str)
        deps.metrics.request("guest", "refused")
        if command or body.get("callback_id") == _ASKING_SHORTCUT:
            await deps.tally.count(GUEST_REFUSED)
        if command:
            return BoltResponse(
                status=200, body={"response_type": "ephemeral", "text": msg["text"]}
            )
        url = body.get("response_url")
        if isinstance(url, str) and url:
            deps.inflight.spawn(_respond(url, msg, client))
        return BoltResponse(status=200, body="")

    return refuse_guests


async def _respond(url: str, msg: Any, client: AsyncWebClient) -> None:
    await respond(url, msg, session=client.session)
