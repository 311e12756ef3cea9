"""`gdocs-bot report`: what the team asks and where the docs fall short.

- `tally`: the per-day counters the bot writes as it works, and how one answered question is
  classified (`answered_counts`);
- `aggregate`: `collect` reads the store, `aggregate` makes the `Report` (pure);
- `render`, `render_html`: the report as Markdown, JSON or one HTML page (pure);
- `model`: the report's values and the short `week_summary` for Slack's admins.

Nothing here names a person: answer records and votes hold user ids, the report reads past
them.
"""

from __future__ import annotations

from bot.report.aggregate import (
    MAX_WINDOW_DAYS,
    Collected,
    Window,
    aggregate,
    collect,
    topic_of,
    without_people,
)
from bot.report.model import WeekSummary, week_summary
from bot.report.render import render_json, render_md, report_object
from bot.report.render_html import render_html
from bot.report.tally import DailyTally, answered_counts, classify

__all__ = [
    "MAX_WINDOW_DAYS",
    "Collected",
    "DailyTally",
    "WeekSummary",
    "Window",
    "aggregate",
    "answered_counts",
    "classify",
    "collect",
    "render_html",
    "render_json",
    "render_md",
    "report_object",
    "topic_of",
    "week_summary",
    "without_people",
]
