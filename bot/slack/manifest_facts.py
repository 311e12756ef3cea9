"""What the Slack app manifest must declare for this code to work (checked against
manifest.yml and against the listeners by the tests)."""

from __future__ import annotations

#: slash commands the app registers
COMMANDS: tuple[str, ...] = ("/gdocs",)

#: bot events the app subscribes to
BOT_EVENTS: tuple[str, ...] = ("app_mention", "message.im")

#: bot token scopes, each with the calls that need it
BOT_SCOPES: dict[str, str] = {
    "commands": "/gdocs",
    "chat:write": "chat.postMessage, chat.postEphemeral, chat.update",
    "app_mentions:read": "app_mention events",
    "im:history": "message.im events (direct messages)",
    "users:read": "users.info for the asker's locale (Pay language)",
    "files:write": "files.getUploadURLExternal / completeUploadExternal (long documents)",
    "reactions:write": "reactions.add / reactions.remove (progress on mentions and DMs)",
}

#: interactivity must be on: "Show full doc" and "Next page" buttons
INTERACTIVITY = True
