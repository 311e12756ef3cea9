"""What a failed call to Slack's Web API can raise, named once.

`SlackClientError` covers Slack's answers (`SlackApiError`: not_in_channel, ratelimited, …)
and the SDK's own checks; aiohttp's `ClientError` and `OSError` a connection that broke;
`TimeoutError` a call that took too long. Anything else is a bug and reaches the boundary.
"""

from __future__ import annotations

from aiohttp import ClientError
from slack_sdk.errors import SlackClientError

SLACK_CALL_FAILURES: tuple[type[Exception], ...] = (
    SlackClientError,
    ClientError,
    OSError,
    TimeoutError,
)

__all__ = ["SLACK_CALL_FAILURES"]
