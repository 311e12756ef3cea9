"""The report as JSON (`gdocs-bot report --format json`): the same numbers as md and html."""

from __future__ import annotations

import json
from typing import Any

from bot.report.model import DayRow, Report


def day_object(row: DayRow) -> dict[str, Any]:
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
    return {
        "since": report.since,
        "until": report.until,
        "days_are": "America/Los_Angeles (the quota's day)",
        "quota_per_day": report.quota_per_day,
        "total": day_object(report.total),
        "days": [day_object(row) for row in report.days],
        "topics": [
            {
                "topic": t.topic,
                "asked": t.asked,
                "generated": t.generated,
                "search_only": t.search_only,
                "example": t.example,
            }
            for t in report.topics
        ],
        "gaps": [
            {
                "topic": g.topic,
                "count": g.count,
                "reasons": dict(g.reasons),
                "example": g.example,
                "comments": list(g.comments),
                "flagged_commands": list(g.flagged),
            }
            for g in report.gaps
        ],
        "pages": [{"url": p.url, "cited": p.cited, "listed": p.listed} for p in report.pages],
        "votes": [{"kind": v.kind, "up": v.up, "down": v.down} for v in report.votes],
        "channels": channels,
    }


def render_json(report: Report) -> str:
    """Indented JSON, non-ASCII as escapes (nothing in it reaches a terminal as a control)."""
    return json.dumps(report_object(report), indent=2, ensure_ascii=True)
