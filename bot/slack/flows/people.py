"""What Slack says about a person: their locale and time zone (for Pay's language and the
quota note's times) and whether they are a workspace admin or owner (for `/gdocs report`,
the Home tab's "This week" and CHANNEL_SETTINGS_ADMINS_ONLY). One `users.info` call, kept
with the person's profile (`profile:<user>`, 6 hours) so each person costs one call."""

from __future__ import annotations

import logging
from collections.abc import Awaitable

from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.deps import SlackDeps
from bot.slack.failures import SLACK_CALL_FAILURES
from bot.slack.memory.state import UserProfile

logger = logging.getLogger(__name__)


async def user_profile(client: AsyncWebClient, user: str) -> UserProfile | None:
    """The user's Slack locale (`it-IT`), time zone and admin role, or None when Slack will
    not say."""
    try:
        response = await client.users_info(user=user, include_locale=True)
    except SLACK_CALL_FAILURES as exc:
        logger.info("users.info failed: %s", type(exc).__name__)
        return None
    info = response.get("user")
    if not isinstance(info, dict):
        return None
    locale, tz = info.get("locale"), info.get("tz")
    return UserProfile(
        locale=locale if isinstance(locale, str) else None,
        tz=tz if isinstance(tz, str) else None,
        is_admin=info.get("is_admin") is True or info.get("is_owner") is True,
    )


async def workspace_admin(deps: SlackDeps, client: AsyncWebClient, user: str) -> bool | None:
    """Whether `user` is a workspace admin or owner; None when Slack will not say. A profile
    kept before the bot asked (no `is_admin`) is asked for again, not taken as "no"."""

    def fetch(u: str) -> Awaitable[UserProfile | None]:
        return user_profile(client, u)

    profile = await deps.profiles.get(user, fetch)
    if profile is None or profile.is_admin is None:
        profile = await deps.profiles.refreshed(user, fetch)
    return None if profile is None else profile.is_admin
