"""The short "This week" summary Slack shows workspace admins (the App Home, `/gdocs
report`): questions, the share that got a generated answer, and the top three gaps. Plain
values, computed from a report (no I/O)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.report.model import Report

TOP_GAPS = 3


@dataclass(frozen=True)
class WeekSummary:
    since: str
    until: str
    questions: int
    generated: int
    search_only: int
    #: failed or rate limited
    unanswered: int
    #: (topic, how many times) of the most frequent gaps, most frequent first
    gaps: tuple[tuple[str, int], ...] = ()


def week_summary(report: Report) -> WeekSummary:
    t = report.total
    return WeekSummary(
        since=report.since,
        until=report.until,
        questions=t.questions,
        generated=t.generated,
        search_only=t.search_only,
        unanswered=t.unanswered,
        gaps=tuple((g.topic, g.count) for g in report.gaps[:TOP_GAPS]),
    )
