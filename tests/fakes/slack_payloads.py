"""What Slack sends the bot: one slash-command payload shape shared by every test path."""

from __future__ import annotations

import itertools
import time

_triggers = itertools.count(1)


def slash_command_form(
    text: str, *, response_url: str, user: str = "U1", channel: str = "C1", **fields: str
) -> dict[str, str]:
    """The fields of a `/gdocs <text>` command as Slack posts them (form or Socket Mode)."""
    return {
        "token": "verification-token",
        "team_id": "T1",
        "team_domain": "test",
        "channel_id": channel,
        "channel_name": "general",
        "user_id": user,
        "user_name": f"user-{user}",
        "command": "/gdocs",
        "text": text,
        "api_app_id": "A1",
        "is_enterprise_install": "false",
        "response_url": response_url,
        # a fresh trigger id per command: the bot drops a repeated one as a Slack retry
        "trigger_id": f"{time.time_ns()}.1.{next(_triggers)}",
        **fields,
    }
