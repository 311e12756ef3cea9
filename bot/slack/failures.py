"""What a failed Web API call can raise: Slack's answers and the SDK's checks
(`SlackClientError`), a broken connection, a timeout. Anything else is a bug."""

from __future__ import annotations

from aiohttp import ClientError
from slack_sdk.errors import SlackClientError

#: the connection to Slack failed (for callers that read Slack's own answers first)
SLACK_UNREACHABLE: tuple[type[Exception], ...] = (ClientError, OSError, TimeoutError)
SLACK_CALL_FAILURES: tuple[type[Exception], ...] = (SlackClientError, *SLACK_UNREACHABLE)

__all__ = ["SLACK_CALL_FAILURES", "SLACK_UNREACHABLE"]
