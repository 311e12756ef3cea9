"""Who the bot is in Slack (auth.test), fetched once behind a lock (Bolt's own authorize
calls it once per concurrent request under a burst), primed by the runtime's start-up call;
Bolt gets the bot's ids from it, so the bot's own messages are ignored."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from slack_bolt.authorization import AuthorizeResult
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.failures import SLACK_CALL_FAILURES

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BotIdentity:
    user_id: str | None
    bot_id: str | None
    team_id: str | None


class SlackIdentity:
    """The bot's auth.test result, cached for the process's lifetime."""

    def __init__(self) -> None:
        self._identity: BotIdentity | None = None
        self._lock = asyncio.Lock()

    def prime(self, auth_test: Mapping[str, Any]) -> BotIdentity:
        """Use an auth.test response the runtime already has."""
        self._identity = BotIdentity(
            user_id=auth_test.get("user_id"),
            bot_id=auth_test.get("bot_id"),
            team_id=auth_test.get("team_id"),
        )
        return self._identity

    async def get(self, client: AsyncWebClient) -> BotIdentity | None:
        if self._identity is not None:
            return self._identity
        async with self._lock:
            if self._identity is None:
                try:
                    response = await client.auth_test()
                except SLACK_CALL_FAILURES as exc:
                    logger.error("auth.test failed: %s", type(exc).__name__)
                    return None
                self.prime(response.data if isinstance(response.data, dict) else {})
        return self._identity

    def authorizer(self, client: AsyncWebClient, token: str) -> Any:
        """An `authorize` function for `AsyncApp`, backed by this cache."""

        async def authorize(
            enterprise_id: str | None, team_id: str | None, user_id: str | None
        ) -> AuthorizeResult | None:
            identity = await self.get(client)
            if identity is None:
                return None
            return AuthorizeResult(
                enterprise_id=enterprise_id,
                team_id=team_id or identity.team_id,
                bot_user_id=identity.user_id,
                bot_id=identity.bot_id,
                bot_token=token,
                user_id=user_id,
            )

        return authorize
