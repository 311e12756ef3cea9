"""The report as one self-contained HTML page (`--format html`): inline CSS and SVG, no
script, nothing fetched (it opens offline), light or dark as the reader's system prefers.
Every piece of text is escaped; the numbers are the same as in md and json."""

from __future__ import annotations

from html import escape

from bot.report.render import (
    TITLES,
    Table,
    day_cells,
    guest_line,
    has_team,
    share,
    tables,
    team_line,
)
from bot.report.tally import Report

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
@media (prefers-color-scheme: dark) { :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1;
  --line: #3d444d; --card: #151b23; --gen: #3fb950; --search: #d29922; --fail: #f85149;
  --quota: #4493f8; --limit: #ab7df8; } }
body { background: var(--bg); color: var(--fg); margin: 0 auto; max-width: 1100px;
  padding: 24px; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; }
.muted { color: var(--muted); }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px;
  padding: 10px 14px; min-width: 130px; }
.card b { display: block; font-size: 24px; } svg text { fill: var(--muted); font-size: 11px; }
svg .axis { stroke: var(--line); } .gen { fill: var(--gen); } .search { fill: var(--search); }
.fail { fill: var(--fail); } .quota { fill: var(--quota); } .team { fill: var(--limit); }
.limit { stroke: var(--limit); stroke-width: 2; stroke-dasharray: 6 4; }
.legend span { display: inline-block; margin-right: 14px; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 5px;
  border-radius: 2px; }
.legend i.gen { background: var(--gen); } .legend i.search { background: var(--search); }
.legend i.fail { background: var(--fail); } .legend i.quota { background: var(--quota); }
.legend i.team { background: var(--limit); }
.legend i.limit { width: 18px; height: 0; border-top: 2px dashed var(--limit); border-radius: 0;
  vertical-align: middle; }
.legend i.none { display: none; }
table { border-collapse: collapse; width: 100%; margin: 4px 0 8px; }
th, td { border-bottom: 1px solid var(--line); padding: 6px 8px; text-align: left;
  vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
td.n { text-align: right; font-variant-numeric: tabular-nums; } .scroll { overflow-x: auto; }
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _bars_chart(report: Report, label: str, stacks: list[list[tuple[str, int, str]]]) -> str:
    """Bars per day, each a stack of (class, count, word); the daily quota as a dashed line
    when the bars are answer_query calls."""
    days, limit = report.days, report.quota_per_day if "quota" in label else 0
    top = max([limit, 1, *(sum(n for _, n, _ in stack) for stack in stacks)])
    bar = max(6, min(60, (CHART_WIDTH - LEFT) // max(len(days), 1) - BAR_GAP))
    width = LEFT + len(days) * (bar + BAR_GAP) + BAR_GAP
    base, plot, every = CHART_HEIGHT - BOTTOM, CHART_HEIGHT - BOTTOM - 10, max(1, len(days) // 15)
    parts = [
        f'<line class="axis" x1="{LEFT}" y1="{base}" x2="{width}" y2="{base}"/>',
        f'<line class="axis" x1="{LEFT}" y1="8" x2="{LEFT}" y2="{base}"/>',
        f'<text x="{LEFT - 6}" y="{base + 4}" text-anchor="end">0</text>',
        f'<text x="{LEFT - 6}" y="12" text-anchor="end">{_e(top)}</text>',
        f"<title>{_e(label)}</title>",
    ]
    for i, (d, stack) in enumerate(zip(days, stacks, strict=True)):
        x, y = LEFT + BAR_GAP + i * (bar + BAR_GAP), float(base)
        for cls, n, word in stack:
            if n:
                h = plot * n / top
                y -= h
                parts.append(
                    f'<rect class="{cls}" x="{x:.1f}" y="{y:.1f}" width="{bar}" height="{h:.1f}">'
                    f"<title>{_e(f'{d.day}: {n} {word}')}</title></rect>"
                )
        if i % every == 0 or i == len(days) - 1:  # the day's MM-DD under every few bars
            mid = x + bar / 2
            parts.append(
                f'<text x="{mid:.1f}" y="{base + 14}" text-anchor="middle">{_e(d.day[5:])}</text>'
            )
    if limit:
        y = base - plot * limit / top
        parts.append(f'<line class="limit" x1="{LEFT}" y1="{y:.1f}" x2="{width}" y2="{y:.1f}"/>')
    return (
        f'<div class="scroll"><svg role="img" aria-label="{_e(label)}" width="{width + 10}" '
        f'height="{CHART_HEIGHT}" viewBox="0 0 {width + 10} {CHART_HEIGHT}">'
        f"{''.join(parts)}</svg></div>"
    )


def _charts(report: Report) -> list[str]:
    """Questions per day, then answer_query calls against the quota, each with its legend."""
    limit = ("none", "the bot sets no daily limit")
    if report.quota_per_day:
        limit = ("limit", f"the daily quota: {report.quota_per_day} (ANSWER_QUOTA_PER_DAY)")
    of = report.quota_per_day or "unlimited"
    kinds = [("gen", "generated"), ("search", "search only"), ("fail", "no answer")]
    counts: list[tuple[int, ...]] = [
        (d.generated, d.search_only, d.unanswered) for d in report.days
    ]
    if has_team(report):
        kinds.insert(1, ("team", "team answers"))
        counts = [
            (c[0], d.team.get("used", 0), *c[1:]) for c, d in zip(counts, report.days, strict=True)
        ]
    questions = [[(c, n, w) for (c, w), n in zip(kinds, ns, strict=True)] for ns in counts]
    quota = [
        [("quota", d.answer_query["made"], f"of {of} made, {d.answer_query['refused']} refused")]
        for d in report.days
    ]
    return [
        "<h2>Questions per day</h2>",
        _legend(kinds),
        _bars_chart(report, "Questions per day: " + ", ".join(w for _, w in kinds), questions),
        "<h2>Generated answers against the daily quota</h2>",
        _legend([("quota", "answer_query calls made"), limit]),
        _bars_chart(report, "answer_query calls per day against the daily quota", quota),
    ]


def _table(table: Table) -> str:
    head, rows = table
    th = "".join(f"<th>{_e(h)}</th>" for h in head)
    trs = []
    for row in rows:  # counts right-aligned
        tds = "".join(
            f'<td class="n">{_e(c)}</td>' if isinstance(c, int) else f"<td>{_e(c)}</td>"
            for c in row
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
        ("answer_query made", t.answer_query["made"]),
        ("refused by Google", t.answer_query["refused"]),
        ("reused answers", sum(t.reuse.values())),
        ("channels", report.channels),
    ]
    shown = "".join(
        f'<div class="card"><b>{_e(v)}</b><span class="muted">{_e(k)}</span></div>'
        for k, v in cards
    )
    return f'<div class="cards">{shown}</div>'


def _legend(items: list[tuple[str, str]]) -> str:
    spans = "".join(f'<span><i class="{c}"></i>{_e(w)}</span>' for c, w in items)
    return f'<p class="legend muted">{spans}</p>'


def render_html(report: Report) -> str:
    shown = tables(report)
    head, days = shown["days"]
    shown["days"] = (head, [*days, day_cells(report.total, has_team(report))])
    sections = [
        f"<h1>What the team asks: {_e(report.since)} to {_e(report.until)}</h1>",
        '<p class="muted">gdocs-bot report. Days are Pacific days (the answer quota\'s).</p>',
        _cards(report),
        *(f"<p>{_e(line)}</p>" for line in (team_line(report), guest_line(report)) if line),
        *_charts(report),
    ]
    for key in ("gaps", "topics", "pages", "votes", "days", "products", "channels"):
        title = "Gaps: where the docs fall short" if key == "gaps" else TITLES[key]
        if key in shown:
            sections += [f"<h2>{title}</h2>", _table(shown[key])]
    title = f"gdocs-bot report {report.since} to {report.until}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head>"
        f"<body>{''.join(sections)}</body></html>\n"
    )
