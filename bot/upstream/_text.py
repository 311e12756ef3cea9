"""Pure text helpers: cleaning user input, cache keys, titles from URLs, UTC midnight."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime, timedelta
from urllib.parse import unquote, urlsplit

from bot.errors import InvalidInput

_WHITESPACE = re.compile(r"\s+")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+", re.MULTILINE)
_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$")
# format characters that change how text reads without being visible: bidi overrides,
# zero-width joiners; a query never needs them and they make cache keys differ
_INVISIBLE = {"Cc", "Cf"}


def clean_query(text: str, max_chars: int) -> str:
    """The user's text without control characters; InvalidInput when empty or too long."""
    kept = []
    for ch in text:
        if ch in "\t\n\r":
            kept.append(" " if ch != "\n" else "\n")
        elif unicodedata.category(ch) not in _INVISIBLE:
            kept.append(ch)
    cleaned = "".join(kept).strip()
    if not cleaned:
        raise InvalidInput("There is nothing to look up: the text is empty.")
    if len(cleaned) > max_chars:
        raise InvalidInput(
            f"That is too long ({len(cleaned)} characters): keep it under {max_chars} characters."
        )
    return cleaned


def normalise(text: str) -> str:
    """Cache-key form of a query: case-folded, whitespace collapsed."""
    return _WHITESPACE.sub(" ", text.casefold()).strip()


def clean_language(language: str | None) -> str | None:
    """A BCP-47 tag such as `it-IT`, or None; InvalidInput for anything else."""
    if language is None or not language.strip():
        return None
    tag = language.strip().replace("_", "-")
    if not _LANGUAGE.match(tag) or len(tag) > 35:
        raise InvalidInput(
            f"Not a language code: use a BCP-47 tag such as it-IT, not {tag[:40]!r}."
        )
    return tag


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


def one_line(text: str, limit: int = 200) -> str:
    """Server text made safe to embed in a one-line message."""
    flat = _WHITESPACE.sub(" ", "".join(c for c in text if c.isprintable() or c.isspace())).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
