"""The bot's App Home: `app_home_opened` for the Home tab (publish the viewer's view) and
for the Messages tab (suggested prompts, `bot/slack/listeners/prompts.py`), and the Home tab's
Ask again buttons, answered in the viewer's DM (`bot/slack/delivery/direct_reply.py`).

The Home view (`render_home`) shows the team's generated answers left today and when they
come back in the viewer's time zone (the quota ledger; users.info's `tz`), whether the
documentation servers answer (the readiness state behind /readyz), the viewer's last
questions, the settings of the channels they are in that have any (users.conversations,
one page), and for workspace admins the week's usage ("This week",
`bot/slack/flows/report.py`). It is published at most once a minute per person: the claim
`home:<user>` (TTL 60 s) is taken first, and given back when views.publish fails.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any, Literal

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import keys
from bot.errors import InvalidInput
from bot.quota import next_pacific_midnight
from bot.render import (
    ASK_AGAIN_ACTION_RE,
    MAX_HOME_CHANNELS,
    ChannelLine,
    HomeInput,
    RecentQuestion,
    decode_ask_again,
    render_error,
    render_home,
)
from bot.slack.boundary import Job, Outcome, ignored, say_nothing
from bot.slack.delivery.direct_reply import DirectReply
from bot.slack.deps import SlackDeps
from bot.slack.failures import SLACK_CALL_FAILURES
from bot.slack.flows.answer import answer_question
from bot.slack.flows.people import user_profile, workspace_admin
from bot.slack.flows.report import this_week
from bot.slack.listeners.prompts import set_prompts
from bot.store import TEXT, StoreError

logger = logging.getLogger(__name__)

HOME_REPUBLISH_SECONDS = 60.0
#: how many of the viewer's channels the Home tab looks at for settings (one Slack page)
VIEWER_CHANNELS_PAGE = 200


def register(app: AsyncApp, deps: SlackDeps) -> None:
    async def on_home_opened(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        event = body.get("event") or {}
        user, channel, tab = event.get("user"), event.get("channel"), event.get("tab")
        if not isinstance(user, str) or not user:
            ignored(deps.metrics, "home", "no user")
        elif tab == "home":
            deps.inflight.spawn(_handled(deps, "home", partial(publish_home, deps, client, user)))
        elif tab == "messages" and isinstance(channel, str) and channel:
            prompts = partial(set_prompts, deps, client, user=user, channel=channel)
            deps.inflight.spawn(_handled(deps, "prompts", prompts))
        else:
            ignored(deps.metrics, "home", "a tab the bot shows nothing on")

    async def on_ask_again(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        deps.inflight.spawn(ask_again(deps, client, body))

    app.event("app_home_opened")(on_home_opened)
    app.action(ASK_AGAIN_ACTION_RE)(on_ask_again)


async def _handled(deps: SlackDeps, kind: str, job: Job) -> None:
    await deps.boundary(kind, job, say_nothing)


async def publish_home(deps: SlackDeps, client: AsyncWebClient, user: str) -> Outcome:
    """The viewer's Home view, unless it was published less than a minute ago."""
    claim = keys.HOME.key(user)
    if not await deps.store.add(claim, "1", TEXT, HOME_REPUBLISH_SECONDS):
        return Outcome(route="home", outcome="recently_published")
    view = render_home(await home_input(deps, client, user))
    try:
        await client.views_publish(user_id=user, view=view)
    except SLACK_CALL_FAILURES as exc:
        why = exc.response.get("error") if isinstance(exc, SlackApiError) else type(exc).__name__
        logger.warning("Home tab not published: %s", why)
        await deps.store.delete(claim)  # the next opening tries again
        return Outcome(route="home", outcome="publish_failed")
    return Outcome(route="home", outcome="ok")


async def home_input(deps: SlackDeps, client: AsyncWebClient, user: str) -> HomeInput:
    """What the viewer's Home tab shows, read from the ledger, their profile, the readiness
    state and their recent questions (no upstream call)."""
    now = deps.clock()
    quota: Literal["counted", "unlimited", "unknown"] = "counted"
    try:
        state = await deps.quota.state(user)
        left, per_day, resets_at = state.left_today or 0, state.per_day, state.next_reset
        if not state.per_day:
            quota = "unlimited"
    except StoreError:
        left, per_day, resets_at, quota = 0, 0, next_pacific_midnight(now), "unknown"
    profile = await deps.profiles.get(user, lambda u: user_profile(client, u))
    ready, detail = deps.docs_status()
    recent = [RecentQuestion(asked.text, asked.at) for asked in await deps.recent.of(user)]
    channels = await viewer_channels(deps, client, user)
    admin = await workspace_admin(deps, client, user) is True
    return HomeInput(
        answers_left=left,
        per_day=per_day,
        resets_at=resets_at,
        now=now,
        quota=quota,
        viewer_tz=profile.tz if profile is not None else None,
        ready=ready,
        ready_detail=detail,
        recent=recent,
        channels=channels,
        default_followups=deps.config.thread_followups,
        week=await this_week(deps) if admin else None,
    )


async def viewer_channels(deps: SlackDeps, client: AsyncWebClient, user: str) -> list[ChannelLine]:
    """The channels `user` is in (one users.conversations page: the first
    VIEWER_CHANNELS_PAGE) that have settings, at most MAX_HOME_CHANNELS; none when Slack
    will not say."""
    try:
        response = await client.users_conversations(
            user=user,
            types="public_channel,private_channel",
            exclude_archived=True,
            limit=VIEWER_CHANNELS_PAGE,
        )
    except SLACK_CALL_FAILURES as exc:
        why = exc.response.get("error") if isinstance(exc, SlackApiError) else type(exc).__name__
        logger.info("users.conversations failed: %s", why)
        return []
    found = response.get("channels")
    ids = [c.get("id") for c in found if isinstance(c, dict)] if isinstance(found, list) else []
    settings = await deps.channels.of_many(c for c in ids if isinstance(c, str))
    return [
        ChannelLine(channel, kept, fixed_auto=deps.channels.is_fixed_auto(channel))
        for channel, kept in list(settings.items())[:MAX_HOME_CHANNELS]
    ]


async def ask_again(deps: SlackDeps, client: AsyncWebClient, body: dict[str, Any]) -> None:
    """An Ask again click: the question once more, answered in the viewer's DM."""
    user = (body.get("user") or {}).get("id") if isinstance(body.get("user"), dict) else None
    if not isinstance(user, str) or not user:
        ignored(deps.metrics, "home_action", "no user")
        return
    actions = body.get("actions")
    action = actions[0] if isinstance(actions, list) and actions else {}
    reply = DirectReply(client, user)

    async def job() -> Outcome:
        try:
            question = decode_ask_again(action.get("value") if isinstance(action, dict) else None)
        except InvalidInput as exc:
            await reply.notify_asker(render_error(exc))
            return Outcome(route="-", outcome="invalid_input")
        route = deps.router.route(question)
        return await answer_question(deps, reply, route, question=question, name_asker=True)

    await deps.boundary("home_action", job, reply.notify_asker)
