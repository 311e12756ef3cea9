"""Escaping for Slack mrkdwn, and Block Kit pieces with Slack's limits."""

from __future__ import annotations

import re
from typing import Any, TypedDict
from urllib.parse import urlsplit

from bot.text import one_line, strip_controls, truncate

# `_USER_ID_RE` is anchored and bounded. `_HOSTLIKE_RE` runs on a link label: host labels
# are split at dots (not in their class), so giving back a label costs one character each;
# linear in the label, which `link` has already cleaned of whitespace runs.
_USER_ID_RE = re.compile(r"^[UW][A-Z0-9]{2,20}$")
#: a label that reads like a host name or URL ("google.com", "https://cloud.google.com/x")
_HOSTLIKE_RE = re.compile(
    r"^(?:[a-z][a-z0-9+.-]*://)?(?P<host>(?:[a-z0-9-]+\.)+[a-z]{2,})(?::\d+)?(?:[/?#]\S*)?$",
    re.IGNORECASE,
)
#: longest escaped URL put in a link; longer ones are shown as text (Slack still auto-links)
MAX_LINK_URL_CHARS = 1500
#: longest escaped label; a longer one is shown as text followed by a short link
MAX_LINK_LABEL_CHARS = 800
_DISPLAY_URL_CHARS = 80
#: what no URL may hold: whitespace (as `str.isspace` says: `\s` is the same test) and
#: control characters; one search instead of a test per character (it runs on every link)
_NOT_IN_URL = re.compile(r"[\s\x00-\x1f\x7f]")
#: what a `|` in a label becomes: `|` would end the URL part of `<url|label>`
_PIPE_STANDIN = "¦"


def escape(text: str) -> str:
    """Untrusted text made inert for mrkdwn: exactly `&`, `<`, `>` escaped, controls dropped.

    Entities already in the text are not decoded: a source `&lt;` reaches the reader as the
    literal text `&lt;`, never as a `<` that could start markup.
    """
    text = strip_controls(text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def is_http_url(url: str) -> bool:
    """An absolute http(s) URL with a host and no whitespace or control characters."""
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
    label = strip_controls(label.replace("\r", " ").replace("\n", " ").replace("\t", " "))
    return " ".join(label.split()).replace("|", _PIPE_STANDIN)


def _spoofs_host(label: str, url: str) -> bool:
    """True when the label names a host that is not where the link goes."""
    match = _HOSTLIKE_RE.match(label)
    if match is None:
        return False
    shown = match.group("host").lower()
    real = (urlsplit(url).hostname or "").lower()
    return not (real == shown or real.endswith("." + shown))


def spoofs_host(label: str, url: str) -> bool:
    """True when `label` (cleaned as a link label) reads like a host other than `url`'s."""
    return _spoofs_host(_clean_label(label), url.strip())


def link(url: str, label: str | None = None) -> str:
    """`<url|label>` for an http(s) URL; otherwise the escaped label (or URL) as plain text.

    The label is escaped, `|` becomes `¦` and line breaks become spaces, so it cannot end
    the link early or smuggle markup. A label that looks like a host name other than the
    link's own (`[google.com](https://evil.example)`) is replaced by the real address.
    """
    url = url.strip()
    text = _clean_label(label or "")
    if not is_http_url(url) or len(_escape_url(url)) > MAX_LINK_URL_CHARS:
        return escape(text or url)
    if not text or _spoofs_host(text, url):
        text = display_url(url).replace("|", _PIPE_STANDIN)
    shown = escape(text)
    if len(shown) > MAX_LINK_LABEL_CHARS:
        return f"{shown} ({link(url)})"
    return f"<{_escape_url(url)}|{shown}>"


def mention(user_id: str) -> str:
    """`<@U…>` for a well-formed Slack user id; "" for anything else (never echoed)."""
    return f"<@{user_id}>" if _USER_ID_RE.match(user_id) else ""


def escape_truncated(text: str, limit: int, *, at_word: bool = False) -> str:
    """`escape(text)` in at most `limit` characters: the text is cut before escaping (as
    little as possible), so no entity is ever cut in half."""
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


MAX_BLOCKS = 50
#: what the renderer aims for in one section, below Slack's 3000
SECTION_CHARS = 2900
MAX_HEADER_CHARS = 150
MAX_BUTTON_TEXT_CHARS = 75
MAX_OPTION_TEXT_CHARS = 75
MAX_OPTION_VALUE_CHARS = 150
MAX_BUTTON_VALUE_CHARS = 2000
#: whole-message budget (fallback text + every string in the blocks); Slack refuses ~13k
MAX_MESSAGE_CHARS = 11_500
#: the fallback `text` of a message with blocks is kept short (notifications, screen readers)
MAX_FALLBACK_CHARS = 600

Block = dict[str, Any]


class Message(TypedDict):
    """What `chat.postMessage` & co. take: a mrkdwn fallback `text` and Block Kit `blocks`."""

    text: str
    blocks: list[Block]


def section(mrkdwn: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}}


def context(mrkdwn: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": mrkdwn}]}


def divider() -> Block:
    return {"type": "divider"}


def plain_text_object(text: str, limit: int) -> dict[str, Any]:
    """A plain_text object: Slack shows it literally, so it is cut, not escaped."""
    return {"type": "plain_text", "text": truncate(one_line(text) or "…", limit), "emoji": True}


def text_message(text: str) -> Message:
    """A one-line notice: no blocks, so Slack renders the (already safe) text as is."""
    return {"text": text, "blocks": []}


def header(text: str) -> Block:
    return {"type": "header", "text": plain_text_object(text, MAX_HEADER_CHARS)}


def button(text: str, action_id: str, value: str, *, primary: bool = False) -> Block:
    element: Block = {
        "type": "button",
        "text": plain_text_object(text, MAX_BUTTON_TEXT_CHARS),
        "action_id": action_id,
        "value": value,
    }
    if primary:
        element["style"] = "primary"
    return element


def option(text: str, value: str) -> Block:
    return {"text": plain_text_object(text, MAX_OPTION_TEXT_CHARS), "value": value}


def actions(elements: list[Block], block_id: str | None = None) -> Block:
    block: Block = {"type": "actions", "elements": elements}
    if block_id:
        block["block_id"] = block_id
    return block


def blocks_chars(blocks: list[Block]) -> int:
    return _strings_length(blocks)


def _strings_length(value: object) -> int:
    """The length of every string in `value`'s dicts and lists, however deep (a loop, not a
    recursion: a message is measured several times while it is fitted to Slack's limits)."""
    total = 0
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return total
