"""`gdocs-bot playground`: a web page on 127.0.0.1 that stands in for a Slack workspace. What
is typed there reaches the real Bolt app (built by `bot.serving.assembly.open_bot`, as `serve`
builds it) as signed requests on loopback; the bot's Web API calls go to a small fake Slack
served by the same process, and the page draws them as Slack would (docs/playground.md)."""

from bot.playground._server import SHORTCUTS, run

__all__ = ["SHORTCUTS", "run"]
