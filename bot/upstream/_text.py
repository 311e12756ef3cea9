"""Pure text helpers of the docs service: cache keys, titles from URLs, snippets (the
whitespace rule is `bot.text.collapse_whitespace`)."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from bot.text import collapse_whitespace

_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+", re.MULTILINE)


def normalise(text: str) -> str:
    """Cache-key form of a query: case-folded, whitespace collapsed."""
    return collapse_whitespace(text.casefold())


def title_from_uri(uri: str) -> str:
    """A readable title when the real one is unknown: `…/creating-buckets` -> `Creating buckets`."""
    parts = urlsplit(uri)
    segments = [s for s in parts.path.split("/") if s]
    if not segments:
        return parts.hostname or uri
    last = unquote(segments[-1])
    for suffix in (".html", ".htm", ".md"):
        last = last.removesuffix(suffix)
    words = collapse_whitespace(re.sub(r"[-_]+", " ", last))
    if not words:
        return parts.hostname or uri
    return words[0].upper() + words[1:]


def snippet(text: str, limit: int = 500) -> str:
    """One paragraph of at most `limit` characters, cut at a word boundary.

    Chunks often start with a Markdown heading; its `#` marks mean nothing once the lines
    are joined, so they go.
    """
    flat = collapse_whitespace(_HEADING.sub("", text))
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:.") + "…"
