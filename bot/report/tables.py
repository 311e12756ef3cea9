"""The report's tables as headings and cells, shared by the Markdown and HTML renderers so
that both show the same columns and numbers (pure)."""

from __future__ import annotations

from bot.report.model import GAP_WORDS, DayRow, GapRow, Report
from bot.report.outcome import WHY_WORDS

Cell = str | int
Table = tuple[list[str], list[list[Cell]]]

DAY_HEAD = ["day", "questions", "generated", "search only", "why", "failed", "rate limited",
            "answer_query made", "refused", "reused exact", "normalised", "shared"]  # fmt: skip
#: the columns of DAY_HEAD that are counts
DAY_NUMERIC = {1, 2, 3, 5, 6, 7, 8, 9, 10, 11}
GAP_HEAD = ["topic", "times", "why", "latest wording", "comments on down votes",
            "flagged commands"]  # fmt: skip
TOPIC_HEAD = ["topic", "asked", "generated", "search only", "latest wording"]
PAGE_HEAD = ["page", "cited in answers", "in search results"]
VOTE_HEAD = ["answer kind", "up", "down"]
CHANNEL_HEAD = ["channel", "answers"]


def why_words(search_why: dict[str, int]) -> str:
    return ", ".join(f"{WHY_WORDS[w]} {n}" for w, n in search_why.items() if n) or "–"


def day_cells(d: DayRow) -> list[Cell]:
    return [
        d.day, d.questions, d.generated, d.search_only, why_words(d.search_why), d.failed,
        d.rate_limited, d.answer_query_made, d.answer_query_refused, d.reuse.get("exact", 0),
        d.reuse.get("normalised", 0), d.reuse.get("shared", 0),
    ]  # fmt: skip


def gap_cells(g: GapRow) -> list[Cell]:
    return [
        g.topic,
        g.count,
        ", ".join(f"{GAP_WORDS[r]} {n}" for r, n in g.reasons.items()),
        g.example,
        " / ".join(g.comments) or "–",
        " / ".join(g.flagged) or "–",
    ]


def days_table(report: Report, *, with_total: bool = False) -> Table:
    rows = [*report.days, report.total] if with_total else list(report.days)
    return DAY_HEAD, [day_cells(d) for d in rows]


def gaps_table(report: Report) -> Table:
    return GAP_HEAD, [gap_cells(g) for g in report.gaps]


def topics_table(report: Report) -> Table:
    return TOPIC_HEAD, [
        [t.topic, t.asked, t.generated, t.search_only, t.example] for t in report.topics
    ]


def pages_table(report: Report) -> Table:
    return PAGE_HEAD, [[p.url, p.cited, p.listed] for p in report.pages]


def votes_table(report: Report) -> Table:
    return VOTE_HEAD, [[v.kind, v.up, v.down] for v in report.votes]


def channels_table(by_channel: dict[str, int]) -> Table:
    return CHANNEL_HEAD, [[c, n] for c, n in by_channel.items()]
