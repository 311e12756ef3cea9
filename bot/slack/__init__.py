"""The Slack side of gdocs-bot. Imports go one way (tests/test_layers.py):
`app` → `listeners` (Bolt registration, durable accept, ack) → `flows` (answer, pages,
settings, sharing, home; each takes the parts it uses) → `work` (the work log, tracked
replies, Stop) → `delivery` (the replies) → `memory` (small state)."""

from aiohttp import ClientError
from slack_sdk.errors import SlackClientError

#: a failed Web API call: Slack's answers and the SDK's checks, a broken connection, a
#: timeout (anything else is a bug); SLACK_UNREACHABLE for callers reading Slack's answers
SLACK_UNREACHABLE: tuple[type[Exception], ...] = (ClientError, OSError, TimeoutError)
SLACK_CALL_FAILURES: tuple[type[Exception], ...] = (SlackClientError, *SLACK_UNREACHABLE)
