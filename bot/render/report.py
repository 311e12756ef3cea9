"""The "This week" summary for workspace admins: a section of the App Home and the private
reply to `/gdocs report`, and the refusal everyone else gets.

render/ takes anything shaped like `bot.report.summary.WeekSummary` (`WeekView` below)
rather than importing it. Topics are people's questions: escaped like any untrusted text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from bot.render.blocks import Block, Message, context, header, section, text_message
from bot.render.escape import escape_truncated

GAP_TOPIC_CHARS = 80


class WeekView(Protocol):
    @property
    def since(self) -> str: ...
    @property
    def until(self) -> str: ...
    @property
    def questions(self) -> int: ...
    @property
    def generated(self) -> int: ...
    @property
    def search_only(self) -> int: ...
    @property
    def unanswered(self) -> int: ...
    @property
    def gaps(self) -> Sequence[tuple[str, int]]: ...


def _percent(part: int, whole: int) -> str:
    return f"{round(100 * part / whole)} %" if whole else "–"


def week_lines(week: WeekView) -> tuple[str, str]:
    """(the figures, the gaps) as two mrkdwn lines."""
    figures = (
        f"*{week.questions}* questions · *{_percent(week.generated, week.questions)}* got a "
        f"generated answer · {week.search_only} search results only · "
        f"{week.unanswered} no answer"
    )
    if week.gaps:
        gaps = "\n".join(
            f"{i}. {escape_truncated(topic, GAP_TOPIC_CHARS, at_word=True)} ({count}×)"
            for i, (topic, count) in enumerate(week.gaps, start=1)
        )
        gaps = f"*Top gaps* (search only, no hit, 👎, unverified commands)\n{gaps}"
    else:
        gaps = "*Top gaps:* none this week."
    return figures, gaps


def week_blocks(week: WeekView, command: str = "/gdocs") -> list[Block]:
    """The Home tab's "This week" section (admins only)."""
    figures, gaps = week_lines(week)
    return [
        header("This week"),
        section(figures),
        section(gaps),
        context(
            f"{week.since} to {week.until}, Pacific days. Only admins see this. "
            f"`{command} report` posts it to you; `gdocs-bot report --format html` has it all."
        ),
    ]


def render_week_report(week: WeekView) -> Message:
    """The private reply to `/gdocs report`."""
    figures, gaps = week_lines(week)
    text = f"This week ({week.since} to {week.until}): {week.questions} questions"
    blocks = [
        section(f"*This week* ({week.since} to {week.until}, Pacific days)"),
        section(figures),
        section(gaps),
        context("The whole picture: `gdocs-bot report --format html` where the bot runs."),
    ]
    return {"text": text, "blocks": blocks}


def render_report_refused() -> Message:
    return text_message(
        "The usage report is for workspace admins and owners only. "
        "Ask one of them, or whoever runs the bot (`gdocs-bot report`)."
    )


def render_report_unknown() -> Message:
    return text_message("I can't read the usage figures right now; try again in a minute.")
