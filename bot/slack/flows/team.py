"""Team answers in Slack (bot/team.py): who manages them."""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.memory import UserProfiles


async def is_team_admin(
    profiles: UserProfiles, admin_ids: frozenset[str], client: AsyncWebClient, user: str
) -> bool:
    """A workspace admin or owner, or one of TEAM_ANSWERS_ADMINS (`settings.team_admin_ids`):
    who approves 👎 suggestions and edits or removes any team answer."""
    return user in admin_ids or await profiles.is_admin(client, user) is True
