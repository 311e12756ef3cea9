"""The commands that read what the bot recorded in the store STATE_URL names (as `serve`
does), never calling Slack or Google. A store that does not answer is an error (StoreError,
exit 1), never an empty result; a bad option is InvalidInput (exit 2).

- `feedback export [--since YYYY-MM-DD] [--vote up|down]`: every vote as JSON Lines, oldest
  first: the eval set. Never who voted; non-ASCII text as JSON escapes, so nothing reaches a
  terminal as a control sequence.
- `report [--since] [--until] [--format md|json|html] [--out FILE] [--by-channel]`: what the
  team asked and where the docs fell short, by Pacific day (the quota's); 7 days by default.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from bot.errors import InvalidInput
from bot.feedback import VoteKind, since_start
from bot.quota import pacific_day
from bot.report.aggregate import MAX_WINDOW_DAYS, Window
from bot.settings import Settings

REPORT_FORMATS = ("md", "json", "html")
REPORT_DAYS = 7
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_VOTES: dict[str, VoteKind] = {"up": "up", "down": "down"}


def parse_day(option: str, text: str | None) -> date | None:
    if text is None:
        return None
    try:
        if not _DATE_RE.fullmatch(text.strip()):
            raise ValueError(text)
        return date.fromisoformat(text.strip())
    except ValueError:
        raise InvalidInput(f"{option} takes a date as YYYY-MM-DD, not {text[:40]!r}") from None


async def export_votes(settings: Settings, since: str | None, vote: str | None) -> str:
    """The JSON lines of the votes `--since` and `--vote` keep."""
    day = parse_day("--since", since)
    start = since_start(day) if day is not None else None
    kind = None
    if vote is not None:
        kind = _VOTES.get(vote.strip().lower())
        if kind is None:
            raise InvalidInput(f"--vote takes up or down, not {vote[:40]!r}")
    from bot.feedback import export_object
    from bot.serving.assembly import feedback_log, open_state

    async with open_state(settings) as store:
        votes = await feedback_log(settings, store).votes()
    return "".join(
        json.dumps(export_object(v), ensure_ascii=True, separators=(",", ":")) + "\n"
        for v in votes
        if (start is None or v.time >= start) and (kind is None or v.vote == kind)
    )


@dataclass(frozen=True)
class ReportRequest:
    window: Window
    format: str
    out: Path | None
    by_channel: bool


def report_request(
    since: str | None,
    until: str | None,
    fmt: str | None,
    out: str | None,
    by_channel: bool,
    *,
    now: datetime,
) -> ReportRequest:
    kind = (fmt or "md").strip().lower()
    if kind not in REPORT_FORMATS:
        raise InvalidInput(f"--format takes md, json or html, not {(fmt or '')[:40]!r}")
    last = parse_day("--until", until) or date.fromisoformat(pacific_day(now))
    first = parse_day("--since", since) or last - timedelta(days=REPORT_DAYS - 1)
    if first > last:
        raise InvalidInput(f"--since ({first}) is after --until ({last})")
    if (last - first).days + 1 > MAX_WINDOW_DAYS:
        raise InvalidInput(f"a report covers at most {MAX_WINDOW_DAYS} days")
    path = Path(out) if out else None
    if path is not None and path.is_dir():
        raise InvalidInput(f"--out names a directory, not a file: {out[:80] if out else ''}")
    return ReportRequest(Window(first, last), kind, path, by_channel)


async def report_text(settings: Settings, request: ReportRequest) -> str:
    from bot.report.aggregate import aggregate, collect
    from bot.serving.assembly import open_state

    async with open_state(settings) as store:
        collected = await collect(store)
    report = aggregate(
        collected,
        request.window,
        quota_per_day=settings.answer_quota_per_day,
        by_channel=request.by_channel,
    )
    if request.format == "json":
        from bot.report.render import render_json

        return render_json(report) + "\n"
    if request.format == "html":
        from bot.report.render_html import render_html

        return render_html(report)
    from bot.report.render import render_md

    return render_md(report)
