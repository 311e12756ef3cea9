"""Serving the bot: the composition of its parts, start-up checks, health, work in flight."""
