"""What the Slack app manifest must declare for this code to work (checked against
manifest.yml and against the listeners by the tests)."""

from __future__ import annotations

#: slash commands the app registers
COMMANDS: tuple[str, ...] = ("/gdocs",)

#: bot events the app subscribes to
BOT_EVENTS: tuple[str, ...] = (
    "app_mention",
    "message.im",
    # the Home tab (tab "home") and the agent view's Messages tab (tab "messages")
    "app_home_opened",
    # link previews of Google's documentation pages
    "link_shared",
    # follow-up questions in threads the bot answered in, without a mention
    "message.channels",
    "message.groups",
    # the Stop button of a streamed answer
    "agent_session_stopped",
)

#: bot token scopes, each with the calls that need it
BOT_SCOPES: dict[str, str] = {
    "commands": "/gdocs",
    "chat:write": (
        "chat.postMessage, chat.postEphemeral, chat.update, assistant.threads.setStatus, "
        "chat.startStream / appendStream / stopStream, agents.sessions.setStatus"
    ),
    "app_mentions:read": "app_mention events",
    "im:history": "message.im events (direct messages)",
    "users:read": (
        "users.info for the asker's locale (Pay language), time zone (Home tab) and, with "
        "CHANNEL_SETTINGS_ADMINS_ONLY, whether they are a workspace admin"
    ),
    "files:write": "files.getUploadURLExternal / completeUploadExternal (long documents)",
    "reactions:write": "reactions.add / reactions.remove (progress on mentions)",
    "assistant:write": "assistant.threads.setSuggestedPrompts (the Messages tab's prompts)",
    "links:read": "link_shared events (links to Google's docs)",
    "links:write": "chat.unfurl (link previews)",
    "channels:history": (
        "message.channels events (follow-ups, answer channels), conversations.replies "
        "(a thread's first message for the message shortcut)"
    ),
    "groups:history": "message.groups events and conversations.replies in private channels",
    "channels:read": "users.conversations (the Home tab's public channels with settings)",
    "groups:read": "users.conversations (the Home tab's private channels with settings)",
}

#: the message shortcut "Ask Google's docs" (`features.shortcuts`, type message)
ASK_SHORTCUT = "ask_gdocs"
#: message shortcuts: callback_id -> (name, description), as manifest.yml declares them
SHORTCUTS: dict[str, tuple[str, str]] = {
    ASK_SHORTCUT: (
        "Ask Google's docs",
        "Answer this message's question from Google's developer documentation, in its thread",
    ),
}

#: hosts whose links get a preview (`features.unfurl_domains`; Slack allows at most five):
#: the documentation hosts people paste most
UNFURL_DOMAINS: tuple[str, ...] = (
    "docs.cloud.google.com",
    "cloud.google.com",
    "firebase.google.com",
    "developer.android.com",
    "developers.google.com",
)

#: interactivity must be on: "Show full doc", "Next page", feedback and other buttons
INTERACTIVITY = True
