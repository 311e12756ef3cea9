"""Escaping for Slack mrkdwn, and Block Kit pieces with Slack's limits."""

from __future__ import annotations

import re
from datetime import UTC, datetime, tzinfo
from typing import Any, TypedDict
from urllib.parse import urlsplit

from bot.text import one_line, strip_controls, truncate

# linear: anchored, and host labels are split at dots (not in their class)
_USER_ID_RE = re.compile(r"^[UW][A-Z0-9]{2,20}$")
_HOSTLIKE_RE = re.compile(
    r"^(?:[a-z][a-z0-9+.-]*://)?(?P<host>(?:[a-z0-9-]+\.)+[a-z]{2,})(?::\d+)?(?:[/?#]\S*)?$",
    re.IGNORECASE,
)
#: a longer escaped URL is shown as text (Slack still auto-links it)
MAX_LINK_URL_CHARS = 1500
#: a longer escaped label is shown as text followed by a short link
MAX_LINK_LABEL_CHARS = 800
_DISPLAY_URL_CHARS = 80
_NOT_IN_URL = re.compile(r"[\s\x00-\x1f\x7f]")
#: `|` would end the URL part of `<url|label>`
_PIPE_STANDIN = "¦"
_COMMAND_RE = re.compile(r"/[a-z0-9_-]{1,31}")

MAX_BLOCKS = 50
#: what the renderer aims for in one section, below Slack's 3000
SECTION_CHARS = 2900
MAX_OPTION_VALUE_CHARS = 150
MAX_BUTTON_VALUE_CHARS = 2000
#: fallback text + every string in the blocks; Slack refuses ~13k
MAX_MESSAGE_CHARS = 11_500
MAX_FALLBACK_CHARS = 600

Block = dict[str, Any]


class Message(TypedDict):
    text: str
    blocks: list[Block]


def escape(text: str) -> str:
    """Exactly `&`, `<`, `>` escaped, controls dropped; entities in the text stay literal."""
    text = strip_controls(text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def is_http_url(url: str) -> bool:
    if not url or _NOT_IN_URL.search(url) is not None:
        return False
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(host)


def _escape_url(url: str) -> str:
    return escape(url).replace("|", "%7C")


def display_url(url: str) -> str:
    """A short, readable, unescaped form of a URL: no scheme, cut after 80 characters."""
    shown = re.sub(r"^https?://", "", url, flags=re.IGNORECASE)
    return shown if len(shown) <= _DISPLAY_URL_CHARS else shown[: _DISPLAY_URL_CHARS - 1] + "…"


def _clean_label(label: str) -> str:
    return one_line(label.replace("\r", " ")).replace("|", _PIPE_STANDIN)


def spoofs_host(label: str, url: str, *, cleaned: bool = False) -> bool:
    """True when the label reads like a host name that is not where the link goes."""
    match = _HOSTLIKE_RE.match(label if cleaned else _clean_label(label))
    if match is None:
        return False
    shown = match.group("host").lower()
    real = (urlsplit(url.strip()).hostname or "").lower()
    return not (real == shown or real.endswith("." + shown))


def link(url: str, label: str | None = None) -> str:
    """`<url|label>` for an http(s) URL, else escaped text; a label naming another host shows
    the address."""
    url = url.strip()
    text = _clean_label(label or "")
    if not is_http_url(url) or len(_escape_url(url)) > MAX_LINK_URL_CHARS:
        return escape(text or url)
    if not text or spoofs_host(text, url, cleaned=True):
        text = display_url(url).replace("|", _PIPE_STANDIN)
    shown = escape(text)
    if len(shown) > MAX_LINK_LABEL_CHARS:
        return f"{shown} ({link(url)})"
    return f"<{_escape_url(url)}|{shown}>"


def mention(user_id: str) -> str:
    """`<@U…>` for a well-formed Slack user id; "" for anything else (never echoed)."""
    return f"<@{user_id}>" if _USER_ID_RE.match(user_id) else ""


def escape_truncated(text: str, limit: int, *, at_word: bool = False) -> str:
    """`escape(text)` in at most `limit` characters, cut before escaping (no half entity)."""
    shown = escape(truncate(text, limit, at_word=at_word))
    if len(shown) <= limit:
        return shown
    low, high, best = 1, limit - 1, ""
    while low <= high:  # escaping only grows text: the longest cut that fits, by bisection
        middle = (low + high) // 2
        candidate = escape(truncate(text, middle, at_word=at_word))
        if len(candidate) <= limit:
            best, low = candidate, middle + 1
        else:
            high = middle - 1
    return best


def safe_command(command: str) -> str:
    """The configured slash command, or "/gdocs" for anything that is not one."""
    return command if _COMMAND_RE.fullmatch(command) else "/gdocs"


def section(mrkdwn: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}}


def context(mrkdwn: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": mrkdwn}]}


def divider() -> Block:
    return {"type": "divider"}


def plain_text_object(text: str, limit: int) -> dict[str, Any]:
    """Slack shows plain_text literally, so it is cut, not escaped."""
    return {"type": "plain_text", "text": truncate(one_line(text) or "…", limit), "emoji": True}


def text_message(text: str) -> Message:
    return {"text": text, "blocks": []}


def header(text: str) -> Block:
    return {"type": "header", "text": plain_text_object(text, 150)}


def button(text: str, action_id: str, value: str, *, primary: bool = False) -> Block:
    element: Block = {"type": "button", "text": plain_text_object(text, 75)}
    element |= {"action_id": action_id, "value": value}
    return element | {"style": "primary"} if primary else element


def actions(elements: list[Block], block_id: str | None = None) -> Block:
    block: Block = {"type": "actions", "elements": elements}
    return block | {"block_id": block_id} if block_id else block


def blocks_chars(value: object) -> int:
    """The length of every string in `value`'s dicts and lists, however deep."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        value = list(value.values())
    return sum(map(blocks_chars, value)) if isinstance(value, list) else 0


def day_words(moment: datetime, zone: tzinfo | None = None) -> str:
    """ "3 Dec 2026" (no leading zero, the same on every surface): `moment`'s own day, or
    its day in `zone` (a naive `moment` read as UTC)."""
    if zone is not None:
        moment = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(zone)
    return f"{moment.day} {moment:%b %Y}"
