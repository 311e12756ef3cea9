"""The report as Markdown (`gdocs-bot report`, the default): headings and tables."""

from __future__ import annotations

from bot.report.model import GAP_WORDS, Report
from bot.report.outcome import WHY_WORDS

_PERCENT_OF = "{:.0f} %"


def cell(text: object) -> str:
    """A table cell: one line, pipes and Markdown's active characters escaped."""
    value = " ".join(str(text).split())
    for char in "\\|*_`[]<>":
        value = value.replace(char, "\\" + char)
    return value


def _table(head: list[str], rows: list[list[object]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


def share(part: int, whole: int) -> str:
    return _PERCENT_OF.format(100 * part / whole) if whole else "–"


def _why(search_why: dict[str, int]) -> str:
    return ", ".join(f"{WHY_WORDS[w]} {n}" for w, n in search_why.items() if n) or "–"


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
        f"- Search only: {t.search_only} ({_why(t.search_why)})",
        f"- Failed: {t.failed}; rate limited: {t.rate_limited}",
        f"- answer_query calls: {t.answer_query_made} made, {t.answer_query_refused} refused "
        f"(quota: {quota})",
        f"- Reused: {t.reuse.get('exact', 0)} exact, {t.reuse.get('normalised', 0)} normalised, "
        f"{t.reuse.get('shared', 0)} shared in flight",
        f"- Channels: {report.channels}",
        "",
        "## Per day",
        "",
    ]
    lines += _table(
        ["day", "questions", "generated", "search only", "why", "failed", "rate limited",
         "answer_query made", "refused", "reused exact", "normalised", "shared"],
        [
            [d.day, d.questions, d.generated, d.search_only, _why(d.search_why), d.failed,
             d.rate_limited, d.answer_query_made, d.answer_query_refused,
             d.reuse.get("exact", 0), d.reuse.get("normalised", 0), d.reuse.get("shared", 0)]
            for d in report.days
        ],
    )  # fmt: skip
    lines += ["", "## Top topics", ""]
    lines += _table(
        ["topic", "asked", "generated", "search only", "latest wording"],
        [[r.topic, r.asked, r.generated, r.search_only, r.example] for r in report.topics],
    )
    lines += ["", "## Gaps", ""]
    lines += _table(
        ["topic", "times", "why", "latest wording", "comments on down votes", "commands not found"],
        [
            [
                g.topic,
                g.count,
                ", ".join(f"{GAP_WORDS[r]} {n}" for r, n in g.reasons.items()),
                g.example,
                " / ".join(g.comments) or "–",
                " / ".join(g.flagged) or "–",
            ]
            for g in report.gaps
        ],
    )
    lines += ["", "## Most cited pages", ""]
    lines += _table(
        ["page", "cited in answers", "in search results"],
        [[p.url, p.cited, p.listed] for p in report.pages],
    )
    lines += ["", "## Votes", ""]
    lines += _table(["answer kind", "up", "down"], [[v.kind, v.up, v.down] for v in report.votes])
    if report.by_channel is not None:
        lines += ["", "## Answers by channel", ""]
        lines += _table(["channel", "answers"], [[c, n] for c, n in report.by_channel.items()])
    return "\n".join(lines) + "\n"
