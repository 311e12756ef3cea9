"""`gdocs-bot feedback export [--since YYYY-MM-DD] [--vote up|down]`: every vote people gave
the bot's answers, as JSON Lines on stdout (one object a vote, oldest first) — the eval set.

It reads the state store the bot writes (STATE_URL, the same setting as `serve`), directly:
a store that does not answer is an error, not an empty export. Each line carries `time`
(ISO 8601, UTC), `vote`, `question`, `kind`, `tool`, `answer`, `references` (URLs),
`comment`, `channel`, `ts` and `answer_id`; never who voted, never a token. Non-ASCII text
is written as JSON escapes, so nothing in a line can reach a terminal as a control sequence.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date, datetime

from bot.errors import InvalidInput
from bot.feedback import VoteKind, VoteRecord, export_object, since_start
from bot.settings import Settings

_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_VOTES: dict[str, VoteKind] = {"up": "up", "down": "down"}


@dataclass(frozen=True)
class ExportFilter:
    """Which votes to export: from `since` (UTC) on, of one `vote` kind; None: all."""

    since: datetime | None = None
    vote: VoteKind | None = None

    def keeps(self, vote: VoteRecord) -> bool:
        if self.since is not None and vote.time < self.since:
            return False
        return self.vote is None or vote.vote == self.vote


def export_filter(since: str | None, vote: str | None) -> ExportFilter:
    """The filter `--since` and `--vote` ask for; InvalidInput (one line) when either is not
    what the command takes."""
    start = None
    if since is not None:
        text = since.strip()
        try:
            if not _DATE_RE.fullmatch(text):
                raise ValueError(text)
            start = since_start(date.fromisoformat(text))
        except ValueError:
            raise InvalidInput(f"--since takes a date as YYYY-MM-DD, not {since[:40]!r}") from None
    kind = None
    if vote is not None:
        kind = _VOTES.get(vote.strip().lower())
        if kind is None:
            raise InvalidInput(f"--vote takes up or down, not {vote[:40]!r}")
    return ExportFilter(since=start, vote=kind)


def export_line(vote: VoteRecord) -> str:
    return json.dumps(export_object(vote), ensure_ascii=True, separators=(",", ":"))


async def export_lines(settings: Settings, wanted: ExportFilter) -> list[str]:
    """The JSON lines of the votes `wanted` keeps, oldest first. StoreError when the store
    cannot be read (StoreConfigError when STATE_URL is wrong)."""
    from bot.serving.assembly import open_feedback

    async with open_feedback(settings) as log:
        votes = await log.votes()
    return [export_line(vote) for vote in votes if wanted.keeps(vote)]
