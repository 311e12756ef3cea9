"""The report as Markdown (`gdocs-bot report`, the default): headings and tables."""

from __future__ import annotations

from bot.report.model import Report
from bot.report.tables import (
    Table,
    channels_table,
    days_table,
    gaps_table,
    pages_table,
    topics_table,
    votes_table,
    why_words,
)

_PERCENT_OF = "{:.0f} %"


def cell(text: object) -> str:
    """A table cell: one line, pipes and Markdown's active characters escaped."""
    value = " ".join(str(text).split())
    for char in "\\|*_`[]<>":
        value = value.replace(char, "\\" + char)
    return value


def _table(table: Table) -> list[str]:
    head, rows = table
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


def share(part: int, whole: int) -> str:
    return _PERCENT_OF.format(100 * part / whole) if whole else "–"


def _summary(report: Report) -> list[str]:
    t = report.total
    quota = f"{report.quota_per_day} a day" if report.quota_per_day else "no daily limit"
    reuse = t.reuse
    return [
        f"# gdocs-bot report, {report.since} to {report.until}",
        "",
        "Days are Pacific days (the answer quota's).",
        "",
        f"- Questions: {t.questions}",
        f"- Generated answers: {t.generated} ({share(t.generated, t.questions)})",
        f"- Search only: {t.search_only} ({why_words(t.search_why)})",
        f"- Failed: {t.failed}; rate limited: {t.rate_limited}",
        f"- answer_query calls: {t.answer_query_made} made, {t.answer_query_refused} refused "
        f"(quota: {quota})",
        f"- Reused: {reuse.get('exact', 0)} exact, {reuse.get('normalised', 0)} normalised, "
        f"{reuse.get('shared', 0)} shared in flight",
        f"- Channels: {report.channels}",
    ]


def render_md(report: Report) -> str:
    sections = [
        ("Per day", days_table(report)),
        ("Top topics", topics_table(report)),
        ("Gaps", gaps_table(report)),
        ("Most cited pages", pages_table(report)),
        ("Votes", votes_table(report)),
    ]
    if report.by_channel is not None:
        sections.append(("Answers by channel", channels_table(report.by_channel)))
    lines = _summary(report)
    for title, table in sections:
        lines += ["", f"## {title}", "", *_table(table)]
    return "\n".join(lines) + "\n"
