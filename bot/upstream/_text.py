"""Pure text helpers of the docs service: cache keys, titles from URLs, snippets, UTC midnight."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from urllib.parse import unquote, urlsplit

# linear: one greedy class; a line-anchored prefix of at most 10 characters before `[ \t]+`
_WHITESPACE = re.compile(r"\s+")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+", re.MULTILINE)


def normalise(text: str) -> str:
    """Cache-key form of a query: case-folded, whitespace collapsed."""
    return _WHITESPACE.sub(" ", text.casefold()).strip()


def title_from_uri(uri: str) -> str:
    """A readable title when the real one is unknown: `…/creating-buckets` -> `Creating buckets`."""
    parts = urlsplit(uri)
    segments = [s for s in parts.path.split("/") if s]
    if not segments:
        return parts.hostname or uri
    last = unquote(segments[-1])
    for suffix in (".html", ".htm", ".md"):
        last = last.removesuffix(suffix)
    words = _WHITESPACE.sub(" ", re.sub(r"[-_]+", " ", last)).strip()
    if not words:
        return parts.hostname or uri
    return words[0].upper() + words[1:]


def snippet(text: str, limit: int = 500) -> str:
    """One paragraph of at most `limit` characters, cut at a word boundary.

    Chunks often start with a Markdown heading; its `#` marks mean nothing once the lines
    are joined, so they go.
    """
    flat = _WHITESPACE.sub(" ", _HEADING.sub("", text)).strip()
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:.") + "…"


def next_utc_midnight(now: datetime) -> datetime:
    """The next 00:00 UTC after `now`.

    Google documents per-day quotas as resetting at midnight Pacific time, which is later than
    UTC midnight: trying answer_query too early costs one refused call, then search again.
    """
    utc = now.astimezone(UTC) if now.tzinfo else now.replace(tzinfo=UTC)
    return datetime(utc.year, utc.month, utc.day, tzinfo=UTC) + timedelta(days=1)
