"""What a failed call to Slack's Web API can raise, named once.

`SlackClientError` covers Slack's answers (`SlackApiError`: not_in_channel, ratelimited, …)
and the SDK's own checks; aiohttp's `ClientError` and `OSError` a connection that broke;
`TimeoutError` a call that took too long. Anything else is a bug and reaches the boundary.
`SLACK_UNREACHABLE` is the connection part alone, for start-up and `gdocs-bot check`, which
read `SlackApiError` first.
"""

from __future__ import annotations

from aiohttp import ClientError
from slack_sdk.errors import SlackClientError

#: the connection to Slack failed (for callers that read Slack's own answers first)
SLACK_UNREACHABLE: tuple[type[Exception], ...] = (ClientError, OSError, TimeoutError)
SLACK_CALL_FAILURES: tuple[type[Exception], ...] = (SlackClientError, *SLACK_UNREACHABLE)

__all__ = ["SLACK_CALL_FAILURES", "SLACK_UNREACHABLE"]
