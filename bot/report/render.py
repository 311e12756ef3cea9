"""The report as Markdown (`gdocs-bot report`, the default) and as JSON (`--format json`),
and the tables the Markdown and HTML renderers share, so both show the same columns."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from bot.report.tally import GAP_WORDS, WHY_WORDS, DayRow, Report

Cell = str | int
Table = tuple[list[str], list[list[Cell]]]

DAY_HEAD = ["day", "questions", "generated", "search only", "why", "failed", "rate limited",
            "answer_query made", "refused", "reused exact", "normalised", "shared"]  # fmt: skip


def why_words(search_why: dict[str, int]) -> str:
    return ", ".join(f"{WHY_WORDS[w]} {n}" for w, n in search_why.items() if n) or "–"


def day_cells(d: DayRow, team: bool = False) -> list[Cell]:
    """`team`: with the team answers column (a report with team answers)."""
    return [
        d.day, d.questions, d.generated, *([d.team.get("used", 0)] if team else []),
        d.search_only, why_words(d.search_only_why), d.failed,
        d.rate_limited, d.answer_query["made"], d.answer_query["refused"], d.reuse.get("exact", 0),
        d.reuse.get("normalised", 0), d.reuse.get("shared", 0),
    ]  # fmt: skip


def has_team(report: Report) -> bool:
    """Whether any team answer was given in the window (else the report shows none of it)."""
    return report.total.team.get("used", 0) > 0


def team_line(report: Report) -> str | None:
    t = report.total.team
    if not has_team(report):
        return None
    saved = t.get("saved", 0)
    answers = "answer" if saved == 1 else "answers"
    return f"Team answers: {t['used']} used, {saved} generated {answers} saved"


def guest_line(report: Report) -> str | None:
    """Shown only when a guest from another organisation was refused in the window."""
    refused = report.total.guest_refused
    return f"Guest questions refused: {refused}" if refused > 0 else None


def tables(report: Report) -> dict[str, Table]:
    """The tables both md and html show (html adds the total to the days); a team answers
    column after "generated" when any was given."""
    team = has_team(report)
    day_head = [*DAY_HEAD[:3], "team answers", *DAY_HEAD[3:]] if team else DAY_HEAD
    topic_head = ["topic", "asked", "generated", *(["team answers"] if team else []),
                  "search only", "latest wording"]  # fmt: skip
    gaps: list[list[Cell]] = [
        [g.topic, g.count, ", ".join(f"{GAP_WORDS[r]} {n}" for r, n in g.reasons.items()),
         g.example, " / ".join(g.comments) or "–", " / ".join(g.flagged_commands) or "–"]
        for g in report.gaps
    ]  # fmt: skip
    out: dict[str, Table] = {
        "days": (day_head, [day_cells(d, team) for d in report.days]),
        "topics": (topic_head,
                   [[t.topic, t.asked, t.generated, *([t.team] if team else []), t.search_only,
                     t.example] for t in report.topics]),
        "gaps": (["topic", "times", "why", "latest wording", "comments on down votes",
                  "flagged commands"], gaps),
        "pages": (["page", "cited in answers", "in search results"],
                  [[p.url, p.cited, p.listed] for p in report.pages]),
        "votes": (["answer kind", "up", "down"], [[v.kind, v.up, v.down] for v in report.votes]),
    }  # fmt: skip
    if report.by_channel is not None:
        out["channels"] = (["channel", "answers"], [[c, n] for c, n in report.by_channel.items()])
    if report.by_product:
        products: list[list[Cell]] = [[p, n] for p, n in report.by_product.items()]
        out["products"] = (["products", "questions"], products)
    return out


def share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "–"


TITLES = {
    "days": "Per day", "topics": "Top topics", "gaps": "Gaps", "pages": "Most cited pages",
    "votes": "Votes", "channels": "Answers by channel", "products": "By product",
}  # fmt: skip


def cell(text: object) -> str:
    """A table cell: one line, pipes and Markdown's active characters escaped."""
    value = " ".join(str(text).split())
    for char in "\\|*_`[]<>":
        value = value.replace(char, "\\" + char)
    return value


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
        *([f"- {line}"] if (line := team_line(report)) else []),
        f"- Search only: {t.search_only} ({why_words(t.search_only_why)})",
        f"- Failed: {t.failed}; rate limited: {t.rate_limited}",
        f"- answer_query calls: {t.answer_query['made']} made, {t.answer_query['refused']} refused "
        f"(quota: {quota})",
        f"- Reused: {t.reuse.get('exact', 0)} exact, {t.reuse.get('normalised', 0)} normalised, "
        f"{t.reuse.get('shared', 0)} shared in flight",
        f"- Channels: {report.channels}",
        *([f"- {line}"] if (line := guest_line(report)) else []),
    ]
    for key, (head, rows) in tables(report).items():
        lines += ["", f"## {TITLES[key]}", "", f"| {' | '.join(head)} |", "|---" * len(head) + "|"]
        lines += [f"| {' | '.join(cell(c) for c in row)} |" for row in rows]
    return "\n".join(lines) + "\n"


def render_json(report: Report) -> str:
    """Indented JSON, non-ASCII as escapes (nothing in it reaches a terminal as a control)."""
    rows = asdict(report)
    if not has_team(report):  # a report without team answers says nothing of them
        for row in (rows["total"], *rows["days"], *rows["topics"]):
            row.pop("team")
    if not guest_line(report):  # nor of guests, when none was refused
        for row in (rows["total"], *rows["days"]):
            row.pop("guest_refused")
    channels: dict[str, Any] = {"count": report.channels}
    if report.by_channel is not None:
        channels["answers_by_channel"] = report.by_channel
    shown = {
        "since": report.since,
        "until": report.until,
        "days_are": "America/Los_Angeles (the quota's day)",
        "quota_per_day": report.quota_per_day,
        **{key: rows[key] for key in ("total", "days", "topics", "gaps", "pages", "votes")},
        "channels": channels,
    }
    if report.by_product:
        shown["by_product"] = report.by_product
    return json.dumps(shown, indent=2, ensure_ascii=True)
