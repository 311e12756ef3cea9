"""gdocs-bot: answers developers' questions in Slack from Google's own documentation."""

__version__ = "0.1.0"
