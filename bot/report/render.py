"""The report as Markdown (`gdocs-bot report`, the default) and as JSON (`--format json`),
and the tables the Markdown and HTML renderers share, so both show the same columns."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from bot.report.model import GAP_WORDS, DayRow, GapRow, Report
from bot.report.tally import WHY_WORDS

Cell = str | int
Table = tuple[list[str], list[list[Cell]]]

DAY_HEAD = ["day", "questions", "generated", "search only", "why", "failed", "rate limited",
            "answer_query made", "refused", "reused exact", "normalised", "shared"]  # fmt: skip
#: the columns of DAY_HEAD that are counts
DAY_NUMERIC = {1, 2, 3, 5, 6, 7, 8, 9, 10, 11}


def why_words(search_why: dict[str, int]) -> str:
    return ", ".join(f"{WHY_WORDS[w]} {n}" for w, n in search_why.items() if n) or "–"


def _day_cells(d: DayRow) -> list[Cell]:
    return [
        d.day, d.questions, d.generated, d.search_only, why_words(d.search_why), d.failed,
        d.rate_limited, d.answer_query_made, d.answer_query_refused, d.reuse.get("exact", 0),
        d.reuse.get("normalised", 0), d.reuse.get("shared", 0),
    ]  # fmt: skip


def _gap_cells(g: GapRow) -> list[Cell]:
    reasons = ", ".join(f"{GAP_WORDS[r]} {n}" for r, n in g.reasons.items())
    return [g.topic, g.count, reasons, g.example, " / ".join(g.comments) or "–",
            " / ".join(g.flagged) or "–"]  # fmt: skip


def days_table(report: Report, *, with_total: bool = False) -> Table:
    rows = [*report.days, report.total] if with_total else list(report.days)
    return DAY_HEAD, [_day_cells(d) for d in rows]


def gaps_table(report: Report) -> Table:
    head = ["topic", "times", "why", "latest wording", "comments on down votes",
            "flagged commands"]  # fmt: skip
    return head, [_gap_cells(g) for g in report.gaps]


def topics_table(report: Report) -> Table:
    head = ["topic", "asked", "generated", "search only", "latest wording"]
    return head, [[t.topic, t.asked, t.generated, t.search_only, t.example] for t in report.topics]


def pages_table(report: Report) -> Table:
    head = ["page", "cited in answers", "in search results"]
    return head, [[p.url, p.cited, p.listed] for p in report.pages]


def votes_table(report: Report) -> Table:
    return ["answer kind", "up", "down"], [[v.kind, v.up, v.down] for v in report.votes]


def channels_table(by_channel: dict[str, int]) -> Table:
    return ["channel", "answers"], [[c, n] for c, n in by_channel.items()]


def share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "–"


# --- Markdown ----------------------------------------------------------------------------
def cell(text: object) -> str:
    """A table cell: one line, pipes and Markdown's active characters escaped."""
    value = " ".join(str(text).split())
    for char in "\\|*_`[]<>":
        value = value.replace(char, "\\" + char)
    return value


def _md_table(table: Table) -> list[str]:
    head, rows = table
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return lines + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]


def render_md(report: Report) -> str:
    t = report.total
    quota = f"{report.quota_per_day} a day" if report.quota_per_day else "no daily limit"
    lines = [
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
        f"- Reused: {t.reuse.get('exact', 0)} exact, {t.reuse.get('normalised', 0)} normalised, "
        f"{t.reuse.get('shared', 0)} shared in flight",
        f"- Channels: {report.channels}",
    ]
    sections = [
        ("Per day", days_table(report)),
        ("Top topics", topics_table(report)),
        ("Gaps", gaps_table(report)),
        ("Most cited pages", pages_table(report)),
        ("Votes", votes_table(report)),
    ]
    if report.by_channel is not None:
        sections.append(("Answers by channel", channels_table(report.by_channel)))
    for title, table in sections:
        lines += ["", f"## {title}", "", *_md_table(table)]
    return "\n".join(lines) + "\n"


# --- JSON --------------------------------------------------------------------------------
def _day_object(row: DayRow) -> dict[str, Any]:
    return {
        "day": row.day,
        "questions": row.questions,
        "generated": row.generated,
        "search_only": row.search_only,
        "search_only_why": dict(row.search_why),
        "failed": row.failed,
        "rate_limited": row.rate_limited,
        "answer_query": {"made": row.answer_query_made, "refused": row.answer_query_refused},
        "reuse": dict(row.reuse),
    }


def report_object(report: Report) -> dict[str, Any]:
    channels: dict[str, Any] = {"count": report.channels}
    if report.by_channel is not None:
        channels["answers_by_channel"] = dict(report.by_channel)
    gaps = [
        {
            "topic": g.topic,
            "count": g.count,
            "reasons": dict(g.reasons),
            "example": g.example,
            "comments": list(g.comments),
            "flagged_commands": list(g.flagged),
        }
        for g in report.gaps
    ]
    return {
        "since": report.since,
        "until": report.until,
        "days_are": "America/Los_Angeles (the quota's day)",
        "quota_per_day": report.quota_per_day,
        "total": _day_object(report.total),
        "days": [_day_object(row) for row in report.days],
        "topics": [asdict(t) for t in report.topics],
        "gaps": gaps,
        "pages": [asdict(p) for p in report.pages],
        "votes": [asdict(v) for v in report.votes],
        "channels": channels,
    }


def render_json(report: Report) -> str:
    """Indented JSON, non-ASCII as escapes (nothing in it reaches a terminal as a control)."""
    return json.dumps(report_object(report), indent=2, ensure_ascii=True)
