"""The report as one self-contained HTML page (`--format html`): inline CSS and SVG, no
script, nothing fetched (it opens offline), light or dark as the reader's system prefers.
Every piece of text is escaped; the numbers are the same as in md and json."""

from __future__ import annotations

from html import escape

from bot.report.model import Report
from bot.report.render import (
    DAY_NUMERIC,
    Table,
    channels_table,
    days_table,
    gaps_table,
    pages_table,
    share,
    topics_table,
    votes_table,
)

CHART_HEIGHT = 200
#: the plot's width to fill (bars are 6 to 60 px wide, so a long window scrolls)
CHART_WIDTH = 760
BAR_GAP = 8
LEFT = 36
BOTTOM = 34

_STYLE = """
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1f2328; --muted: #59636e;
  --line: #d1d9e0; --card: #f6f8fa; --gen: #1a7f37; --search: #bf8700; --fail: #cf222e;
  --quota: #0969da; --limit: #8250df; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --card: #151b23;
    --gen: #3fb950; --search: #d29922; --fail: #f85149; --quota: #4493f8; --limit: #ab7df8; }
}
body { background: var(--bg); color: var(--fg); margin: 0 auto; max-width: 1100px;
  padding: 24px; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; }
.muted { color: var(--muted); }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px;
  padding: 10px 14px; min-width: 130px; }
.card b { display: block; font-size: 24px; }
svg text { fill: var(--muted); font-size: 11px; }
svg .axis { stroke: var(--line); } .gen { fill: var(--gen); } .search { fill: var(--search); }
.fail { fill: var(--fail); } .quota { fill: var(--quota); }
.limit { stroke: var(--limit); stroke-width: 2; stroke-dasharray: 6 4; }
.legend span { display: inline-block; margin-right: 14px; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 5px;
  border-radius: 2px; }
.legend i.gen { background: var(--gen); } .legend i.search { background: var(--search); }
.legend i.fail { background: var(--fail); } .legend i.quota { background: var(--quota); }
.legend i.limit { width: 18px; height: 0; border-top: 2px dashed var(--limit);
  border-radius: 0; vertical-align: middle; } .legend i.none { display: none; }
table { border-collapse: collapse; width: 100%; margin: 4px 0 8px; }
th, td { border-bottom: 1px solid var(--line); padding: 6px 8px; text-align: left;
  vertical-align: top; }
th { color: var(--muted); font-weight: 600; } td.n { text-align: right;
  font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; }
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _chart(count: int, top: int, label: str) -> tuple[int, int, list[str]]:
    """A chart's bar width and width, and its frame: the y axis with 0 and its top value,
    and the x axis."""
    bar = max(6, min(60, (CHART_WIDTH - LEFT) // max(count, 1) - BAR_GAP))
    width = LEFT + count * (bar + BAR_GAP) + BAR_GAP
    base = CHART_HEIGHT - BOTTOM
    frame = [
        f'<line class="axis" x1="{LEFT}" y1="{base}" x2="{width}" y2="{base}"/>',
        f'<line class="axis" x1="{LEFT}" y1="8" x2="{LEFT}" y2="{base}"/>',
        f'<text x="{LEFT - 6}" y="{base + 4}" text-anchor="end">0</text>',
        f'<text x="{LEFT - 6}" y="12" text-anchor="end">{_e(top)}</text>',
        f"<title>{_e(label)}</title>",
    ]
    return bar, width, frame


def _bar_x(i: int, bar: int) -> int:
    return LEFT + BAR_GAP + i * (bar + BAR_GAP)


def _day_label(x: float, day: str, index: int, count: int) -> str:
    """The day's MM-DD under its bar (every few days only, when there are many)."""
    every = max(1, count // 15)
    if index % every and index != count - 1:
        return ""
    y = CHART_HEIGHT - BOTTOM + 14
    return f'<text x="{x:.1f}" y="{y}" text-anchor="middle">{_e(day[5:])}</text>'


def _rect(cls: str, x: float, y: float, w: int, h: float, tip: str) -> str:
    return (
        f'<rect class="{cls}" x="{x:.1f}" y="{y:.1f}" width="{w}" height="{h:.1f}">'
        f"<title>{_e(tip)}</title></rect>"
    )


def questions_chart(report: Report) -> str:
    """Questions per day, stacked: generated, search only, no answer (failed, rate limited)."""
    days = report.days
    top = max([1, *(d.generated + d.search_only + d.unanswered for d in days)])
    bar, width, parts = _chart(len(days), top, "Questions per day")
    plot = CHART_HEIGHT - BOTTOM - 10
    for i, d in enumerate(days):
        x = _bar_x(i, bar)
        y = float(CHART_HEIGHT - BOTTOM)
        for cls, n, word in (
            ("gen", d.generated, "generated"),
            ("search", d.search_only, "search only"),
            ("fail", d.unanswered, "no answer"),
        ):
            if n:
                h = plot * n / top
                y -= h
                parts.append(_rect(cls, x, y, bar, h, f"{d.day}: {n} {word}"))
        parts.append(_day_label(x + bar / 2, d.day, i, len(days)))
    return _svg(width, parts, "Questions per day: generated, search only, no answer")


def quota_chart(report: Report) -> str:
    """answer_query calls made per day against the daily quota (a dashed line)."""
    days, limit = report.days, report.quota_per_day
    top = max([limit, 1, *(d.answer_query_made for d in days)])
    label = "answer_query calls per day against the daily quota"
    bar, width, parts = _chart(len(days), top, label)
    plot = CHART_HEIGHT - BOTTOM - 10
    base = CHART_HEIGHT - BOTTOM
    for i, d in enumerate(days):
        x = _bar_x(i, bar)
        h = plot * d.answer_query_made / top
        tip = f"{d.day}: {d.answer_query_made} of {limit or 'unlimited'} made, "
        tip += f"{d.answer_query_refused} refused"
        parts.append(_rect("quota", x, base - h, bar, h, tip))
        parts.append(_day_label(x + bar / 2, d.day, i, len(days)))
    if limit:
        y = base - plot * limit / top
        parts.append(f'<line class="limit" x1="{LEFT}" y1="{y:.1f}" x2="{width}" y2="{y:.1f}"/>')
    return _svg(width, parts, label)


def _svg(width: int, parts: list[str], label: str) -> str:
    body = "".join(parts)
    return (
        f'<div class="scroll"><svg role="img" aria-label="{_e(label)}" width="{width + 10}" '
        f'height="{CHART_HEIGHT}" viewBox="0 0 {width + 10} {CHART_HEIGHT}">{body}</svg></div>'
    )


def _table(table: Table, numeric: set[int]) -> str:
    head, rows = table
    th = "".join(f"<th>{_e(h)}</th>" for h in head)
    trs = []
    for row in rows:
        tds = "".join(
            f'<td class="n">{_e(c)}</td>' if i in numeric else f"<td>{_e(c)}</td>"
            for i, c in enumerate(row)
        )
        trs.append(f"<tr>{tds}</tr>")
    if not trs:
        trs.append(f'<tr><td colspan="{len(head)}" class="muted">none in this window</td></tr>')
    return f'<div class="scroll"><table><tr>{th}</tr>{"".join(trs)}</table></div>'


def _cards(report: Report) -> str:
    t = report.total
    cards = [
        ("questions", t.questions),
        ("generated answers", f"{t.generated} ({share(t.generated, t.questions)})"),
        ("search only", t.search_only),
        ("no answer", t.unanswered),
        ("answer_query made", t.answer_query_made),
        ("refused by Google", t.answer_query_refused),
        ("reused answers", sum(t.reuse.values())),
        ("channels", report.channels),
    ]
    shown = "".join(
        f'<div class="card"><b>{_e(v)}</b><span class="muted">{_e(k)}</span></div>'
        for k, v in cards
    )
    return f'<div class="cards">{shown}</div>'


def _quota_legend(limit: int) -> list[tuple[str, str]]:
    made = ("quota", "answer_query calls made")
    if not limit:
        return [made, ("none", "the bot sets no daily limit")]
    return [made, ("limit", f"the daily quota: {limit} (ANSWER_QUOTA_PER_DAY)")]


def _legend(items: list[tuple[str, str]]) -> str:
    spans = "".join(f'<span><i class="{c}"></i>{_e(w)}</span>' for c, w in items)
    return f'<p class="legend muted">{spans}</p>'


def render_html(report: Report) -> str:
    sections = [
        f"<h1>What the team asks: {_e(report.since)} to {_e(report.until)}</h1>",
        '<p class="muted">gdocs-bot report. Days are Pacific days (the answer quota\'s).</p>',
        _cards(report),
        "<h2>Questions per day</h2>",
        _legend([("gen", "generated"), ("search", "search only"), ("fail", "no answer")]),
        questions_chart(report),
        "<h2>Generated answers against the daily quota</h2>",
        _legend(_quota_legend(report.quota_per_day)),
        quota_chart(report),
        "<h2>Gaps: where the docs fall short</h2>",
        _table(gaps_table(report), {1}),
        "<h2>Top topics</h2>",
        _table(topics_table(report), {1, 2, 3}),
        "<h2>Most cited pages</h2>",
        _table(pages_table(report), {1, 2}),
        "<h2>Votes</h2>",
        _table(votes_table(report), {1, 2}),
        "<h2>Per day</h2>",
        _table(days_table(report, with_total=True), DAY_NUMERIC),
    ]
    if report.by_channel is not None:
        sections += ["<h2>Answers by channel</h2>", _table(channels_table(report.by_channel), {1})]
    title = f"gdocs-bot report {report.since} to {report.until}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head>"
        f"<body>{''.join(sections)}</body></html>\n"
    )
