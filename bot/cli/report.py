"""`gdocs-bot report [--since YYYY-MM-DD] [--until YYYY-MM-DD] [--format md|json|html]
[--out FILE] [--by-channel]`: what the team asked and where the docs fell short.

It reads the state store the bot writes (STATE_URL, as `serve` does) and never calls Slack
or Google. Days are Pacific days (the answer quota's); the default window is the last 7
days, today included. A store that does not answer is an error (exit 1, one line), never an
empty report; a bad date or format is exit 2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from bot.errors import InvalidInput
from bot.quota import pacific_day
from bot.report.aggregate import MAX_WINDOW_DAYS, Window
from bot.report.model import Report
from bot.settings import Settings

FORMATS = ("md", "json", "html")
DEFAULT_DAYS = 7
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class ReportRequest:
    window: Window
    format: str
    out: Path | None
    by_channel: bool


def _date(option: str, text: str | None) -> date | None:
    if text is None:
        return None
    try:
        if not _DATE_RE.fullmatch(text.strip()):
            raise ValueError(text)
        return date.fromisoformat(text.strip())
    except ValueError:
        raise InvalidInput(f"{option} takes a date as YYYY-MM-DD, not {text[:40]!r}") from None


def report_request(
    since: str | None,
    until: str | None,
    fmt: str | None,
    out: str | None,
    by_channel: bool,
    *,
    now: datetime,
) -> ReportRequest:
    """What the options ask for; InvalidInput (one line) for anything the command does not
    take."""
    kind = (fmt or "md").strip().lower()
    if kind not in FORMATS:
        raise InvalidInput(f"--format takes md, json or html, not {(fmt or '')[:40]!r}")
    last = _date("--until", until) or date.fromisoformat(pacific_day(now))
    first = _date("--since", since) or last - timedelta(days=DEFAULT_DAYS - 1)
    if first > last:
        raise InvalidInput(f"--since ({first}) is after --until ({last})")
    if (last - first).days + 1 > MAX_WINDOW_DAYS:
        raise InvalidInput(f"a report covers at most {MAX_WINDOW_DAYS} days")
    path = Path(out) if out else None
    if path is not None and path.is_dir():
        raise InvalidInput(f"--out names a directory, not a file: {out[:80] if out else ''}")
    return ReportRequest(Window(first, last), kind, path, by_channel)


async def build_report(settings: Settings, request: ReportRequest) -> Report:
    """The report from the store STATE_URL names. StoreError when it cannot be read
    (StoreConfigError when STATE_URL is wrong)."""
    from bot.report.aggregate import aggregate
    from bot.report.collect import collect
    from bot.serving.assembly import open_report_store

    async with open_report_store(settings) as store:
        collected = await collect(store)
    return aggregate(
        collected,
        request.window,
        quota_per_day=settings.answer_quota_per_day,
        by_channel=request.by_channel,
    )


def rendered(report: Report, fmt: str) -> str:
    if fmt == "json":
        from bot.report.render_json import render_json

        return render_json(report) + "\n"
    if fmt == "html":
        from bot.report.render_html import render_html

        return render_html(report)
    from bot.report.render_md import render_md

    return render_md(report)
