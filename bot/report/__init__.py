"""`gdocs-bot report`: what the team asks and where the docs fall short. `tally` counts per
day as the bot works, `aggregate` makes the `Report`, `render*` show it; nobody is named."""

from __future__ import annotations

from bot.report.aggregate import MAX_WINDOW_DAYS as MAX_WINDOW_DAYS
from bot.report.aggregate import Collected as Collected
from bot.report.aggregate import Window as Window
from bot.report.aggregate import aggregate as aggregate
from bot.report.aggregate import collect as collect
from bot.report.aggregate import topic_of as topic_of
from bot.report.aggregate import without_people as without_people
from bot.report.render import render_json as render_json
from bot.report.render import render_md as render_md
from bot.report.render_html import render_html as render_html
from bot.report.tally import DailyTally as DailyTally
from bot.report.tally import Report as Report
from bot.report.tally import answered_counts as answered_counts
from bot.report.tally import classify as classify
from bot.report.tally import scope_counts as scope_counts
