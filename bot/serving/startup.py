"""Start-up checks against Slack: a bad token is a configuration problem (exit 2, naming the
setting); an unreachable Slack is an outage (retried, then exit 1). No stack traces."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import suppress
from functools import partial
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.failures import SLACK_UNREACHABLE

logger = logging.getLogger(__name__)

#: Slack's answers that mean "this token will never work": fix the setting, don't retry
TOKEN_ERRORS = frozenset(
    {"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired"}
    | {"not_allowed_token_type", "invalid_token"}
)
#: attempts (each already retried by the client's handlers); then the platform restarts us
ATTEMPTS = 2
PAUSE_SECONDS = 1.0


class StartupError(Exception):
    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


async def _call_slack(
    call: Callable[[], Awaitable[Any]],
    *,
    what: str,
    setting: str,
    hint: str,
    api_url: str,
    stop: asyncio.Event,
) -> Any:
    """Run one Web API call; retry an outage after a pause, refuse a bad token at once."""
    last = ""
    for attempt in range(ATTEMPTS):
        if attempt:
            logger.warning("cannot reach Slack (%s); retrying in %gs", last, PAUSE_SECONDS)
            with suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), PAUSE_SECONDS)
            if stop.is_set():
                break
        try:
            return await call()
        except SlackApiError as exc:
            error = str(exc.response.get("error", "unknown_error"))
            if error in TOKEN_ERRORS:
                raise StartupError(
                    f"Slack refused {setting} ({error}) on {what}: {hint}", 2
                ) from None
            if exc.response.status_code < 500 and error != "ratelimited":
                raise StartupError(f"Slack {what} failed: {error}", 1) from None
            last = f"{error} (HTTP {exc.response.status_code})"
        except SLACK_UNREACHABLE as exc:
            last = type(exc).__name__
        if stop.is_set():  # after a signal, no retry to announce
            break
    if stop.is_set():
        raise StartupError("stopped while waiting for Slack", 0)
    raise StartupError(
        f"cannot reach Slack at {api_url} ({last}) after {ATTEMPTS} attempts; "
        "check SLACK_API_URL and the network",
        1,
    )


async def check_bot_token(
    client: AsyncWebClient, *, api_url: str, stop: asyncio.Event
) -> dict[str, Any]:
    """auth.test with the bot token; the bot's identity on success."""
    response = await _call_slack(
        client.auth_test,
        what="auth.test",
        setting="SLACK_BOT_TOKEN",
        hint="set it to the app's Bot User OAuth Token (xoxb-…) and reinstall the app if needed",
        api_url=api_url,
        stop=stop,
    )
    return dict(response.data) if isinstance(response.data, dict) else {}


async def open_socket_url(
    client: AsyncWebClient, app_token: str, *, api_url: str, stop: asyncio.Event
) -> str:
    """apps.connections.open with the app-level token: the WebSocket URL to connect to."""
    response = await _call_slack(
        partial(client.apps_connections_open, app_token=app_token),
        what="apps.connections.open",
        setting="SLACK_APP_TOKEN",
        hint="set it to an app-level token (xapp-…) with the connections:write scope",
        api_url=api_url,
        stop=stop,
    )
    return str(response["url"])
