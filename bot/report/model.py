"""The report's values: what `aggregate` computes and every renderer shows, and the short
"This week" summary Slack shows workspace admins (App Home, `/gdocs report`). Plain data."""

from __future__ import annotations

from dataclasses import dataclass, field

GAP_WORDS = {
    "search_only": "search only",
    "no_hit": "no hit",
    "thumbs_down": "voted down",
    "not_found": "a command not in the cited pages",
}
GAP_REASONS = tuple(GAP_WORDS)


@dataclass(frozen=True)
class DayRow:
    """One Pacific day (or the window's total, day "total")."""

    day: str
    questions: int = 0
    generated: int = 0
    search_why: dict[str, int] = field(default_factory=dict)
    failed: int = 0
    rate_limited: int = 0
    answer_query_made: int = 0
    answer_query_refused: int = 0
    reuse: dict[str, int] = field(default_factory=dict)

    @property
    def search_only(self) -> int:
        return sum(self.search_why.values())

    @property
    def unanswered(self) -> int:
        """Questions that got neither an answer nor search results (an error, a rate limit)."""
        return self.failed + self.rate_limited


@dataclass(frozen=True)
class TopicRow:
    topic: str
    asked: int
    generated: int
    search_only: int
    #: the latest wording asked (no mentions, cut short)
    example: str


@dataclass(frozen=True)
class GapRow:
    topic: str
    count: int
    #: gap events by reason (GAP_REASONS)
    reasons: dict[str, int]
    example: str
    #: the 👎 comments given (distinct, cut short)
    comments: tuple[str, ...] = ()
    #: commands the verified-answers check did not find in the cited pages
    flagged: tuple[str, ...] = ()


@dataclass(frozen=True)
class PageRow:
    url: str
    cited: int
    listed: int


@dataclass(frozen=True)
class VoteRow:
    kind: str
    up: int
    down: int


@dataclass(frozen=True)
class Report:
    since: str
    until: str
    #: ANSWER_QUOTA_PER_DAY (0: the bot sets no daily limit)
    quota_per_day: int
    days: tuple[DayRow, ...]
    total: DayRow
    topics: tuple[TopicRow, ...]
    gaps: tuple[GapRow, ...]
    pages: tuple[PageRow, ...]
    votes: tuple[VoteRow, ...]
    #: how many channels (and DMs) answers went to
    channels: int
    #: answers per channel id (DMs together as "direct messages"); None unless asked for
    by_channel: dict[str, int] | None = None


@dataclass(frozen=True)
class WeekSummary:
    since: str
    until: str
    questions: int
    generated: int
    search_only: int
    unanswered: int
    #: (topic, how many times) of the most frequent gaps, most frequent first
    gaps: tuple[tuple[str, int], ...] = ()


def week_summary(report: Report, top_gaps: int = 3) -> WeekSummary:
    t = report.total
    return WeekSummary(
        since=report.since,
        until=report.until,
        questions=t.questions,
        generated=t.generated,
        search_only=t.search_only,
        unanswered=t.unanswered,
        gaps=tuple((g.topic, g.count) for g in report.gaps[:top_gaps]),
    )
