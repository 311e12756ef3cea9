"""Buttons and their values (Show full doc, Next page), and link previews."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from bot.errors import InvalidInput
from bot.names import is_valid_name, uri_for_name
from bot.render._text import (
    MAX_BUTTON_VALUE_CHARS,
    MAX_OPTION_VALUE_CHARS,
    SECTION_CHARS,
    Block,
    actions,
    blocks_chars,
    button,
    escape_truncated,
    is_http_url,
    link,
    option,
    section,
)
from bot.text import strip_controls

ACTION_SHOW_DOC_PREFIX = "show_doc:"
ACTION_SHOW_DOC_MORE = "show_doc_more"
ACTION_NEXT_PAGE = "doc_next_page"
MAX_PAGE = 10_000
#: "Show full doc" buttons before the rest go into a menu
MAX_DOC_BUTTONS = 5
#: an overflow menu holds at most 5 options; a longer list becomes a static select
_MAX_OVERFLOW_OPTIONS = 5
_MAX_SELECT_OPTIONS = 100
_FORGED = "That button is out of date or was not made by this bot."


def encode_page_value(name: str, page: int) -> str:
    """The value of a "Next page" button: `{"n": name, "p": page}` as compact JSON."""
    if not is_valid_name(name) or not 1 <= page <= MAX_PAGE:
        raise InvalidInput("Cannot page through that document.")
    value = json.dumps({"n": name, "p": page}, separators=(",", ":"), ensure_ascii=True)
    assert len(value) <= MAX_BUTTON_VALUE_CHARS  # a valid name is at most 500 characters
    return value


def decode_page_value(value: str) -> tuple[str, int]:
    """`(name, page)` from a button value; InvalidInput for anything we did not produce."""
    if not isinstance(value, str) or len(value) > MAX_BUTTON_VALUE_CHARS:
        raise InvalidInput(_FORGED)
    try:
        data = json.loads(value)
    except (ValueError, RecursionError):
        raise InvalidInput(_FORGED) from None
    if not isinstance(data, dict) or set(data) != {"n", "p"}:
        raise InvalidInput(_FORGED)
    name, page = data["n"], data["p"]
    if not isinstance(name, str) or not is_valid_name(name):
        raise InvalidInput(_FORGED)
    if type(page) is not int or not 1 <= page <= MAX_PAGE:
        raise InvalidInput(_FORGED)
    return name, page


def _button_label(title: str, name: str) -> str:
    return title.strip() or uri_for_name(name).rsplit("/", 1)[-1] or name


def _buttons_first(
    valid: list[tuple[str, str]],
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(as buttons, in the menu): long names (too long for a menu option) take the button
    slots first, then the documents in order."""
    if len(valid) <= MAX_DOC_BUTTONS:
        return valid, []
    long_names = [doc for doc in valid if len(doc[0]) > MAX_OPTION_VALUE_CHARS]
    chosen = {doc[0] for doc in long_names[:MAX_DOC_BUTTONS]}
    for doc in valid:
        if len(chosen) >= MAX_DOC_BUTTONS:
            break
        chosen.add(doc[0])
    as_buttons = [doc for doc in valid if doc[0] in chosen]
    rest = [d for d in valid if d[0] not in chosen and len(d[0]) <= MAX_OPTION_VALUE_CHARS]
    return as_buttons, rest


def show_doc_actions(docs: list[tuple[str, str]], *, max_chars: int = 3000) -> Block | None:
    """An actions block with a "Show full doc" button per `(name, title)`, the first five as
    buttons and the rest in a menu; None when no name is valid.

    Menu option values are limited to 150 characters, so documents with longer names take
    the button slots first; one that still finds no place stays reachable from Sources.
    The block stays within `max_chars` (every string in it), dropping menu entries first.
    """
    seen: set[str] = set()
    valid: list[tuple[str, str]] = []
    for name, title in docs:
        if name not in seen and is_valid_name(name):
            seen.add(name)
            valid.append((name, _button_label(title, name)))
    if not valid:
        return None
    as_buttons, rest = _buttons_first(valid)
    elements = [
        button(f"Show full doc: {title}", f"{ACTION_SHOW_DOC_PREFIX}{index}", name)
        for index, (name, title) in enumerate(as_buttons)
    ]
    while len(elements) > 1 and blocks_chars(elements) > max_chars:
        elements.pop()  # only with absurdly long names: keep the message within its budget
    options: list[Block] = []
    room = max_chars - blocks_chars(elements) - 120
    for name, title in rest[:_MAX_SELECT_OPTIONS]:
        candidate = option(title, name)
        if blocks_chars([*options, candidate]) > room:
            break
        options.append(candidate)
    if 0 < len(options) <= _MAX_OVERFLOW_OPTIONS:
        elements.append({"type": "overflow", "action_id": ACTION_SHOW_DOC_MORE, "options": options})
    elif options:
        elements.append(
            {
                "type": "static_select",
                "action_id": ACTION_SHOW_DOC_MORE,
                "placeholder": {"type": "plain_text", "text": "More documents…"},
                "options": options,
            }
        )
    return actions(elements, block_id="show_docs")


def next_page_actions(name: str, page: int, pages: int) -> Block | None:
    """The "Next page" button of page `page - 1` of `pages`, when the name can be encoded."""
    if not is_valid_name(name) or not 1 <= page <= min(pages, MAX_PAGE):
        return None
    return actions(
        [
            button(
                f"Next page ({page} of {pages})",
                ACTION_NEXT_PAGE,
                encode_page_value(name, page),
                primary=True,
            )
        ],
        block_id="doc_pages",
    )


#: the hosts the Developer Knowledge corpus covers (shared/reference/google-mcp.md)
CORPUS_HOSTS: frozenset[str] = frozenset(
    {
        "developer.android.com",
        "firebase.google.com",
        "docs.cloud.google.com",
        "cloud.google.com",
        "developer.chrome.com",
        "web.dev",
        "go.dev",
        "dart.dev",
        "docs.flutter.dev",
        "developers.google.com",
        "ai.google.dev",
        "tensorflow.org",
        "fuchsia.dev",
        "genkit.dev",
        "adk.dev",
        "geminicli.com",
        "antigravity.google",
        "docs.apigee.com",
        "developers.home.google.com",
        "mapsplatform.google.com",
        "knowledge.workspace.google.com",
    }
)
#: a preview's description is cut to this many characters (at a word)
DESCRIPTION_CHARS = 300
SHOW_DOC_LABEL = "Show full doc"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def doc_name_for_url(url: str) -> str | None:
    """The document name of a link to a documentation page, or None for anything else.

    `https://docs.cloud.google.com/storage/docs/creating-buckets?hl=en#top` →
    `documents/docs.cloud.google.com/storage/docs/creating-buckets`. Slack's `<url|label>`
    and `<url>` forms are accepted; the query, fragment and trailing slash are dropped. None
    for another host, a site's front page, credentials or an unusual port in the URL, or a
    name the document-name rules refuse.
    """
    text = url.strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    text = text.split("|", 1)[0]
    if not is_http_url(text):
        return None
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    if parts.username is not None or parts.password is not None:
        return None
    if port is not None and port != _DEFAULT_PORTS.get(parts.scheme.lower()):
        return None
    host = (parts.hostname or "").rstrip(".")
    path = parts.path.rstrip("/")
    if host not in CORPUS_HOSTS or not path:
        return None
    name = f"documents/{host}{path}"
    return name if is_valid_name(name) else None


#: a title or description is read no further than this (a few times what is shown): the
#: rest of an oversized one is never cleaned up, escaped or cut at a word
_READ_CHARS = 8 * DESCRIPTION_CHARS


def _one_line(text: str) -> str:
    return " ".join(strip_controls(text[:_READ_CHARS]).split())


def render_unfurl(doc_title: str, description: str, url: str, name: str) -> dict[str, Any]:
    """One `unfurls[url]` entry of `chat.unfurl`: the page's title as a link to `url`, its
    description (escaped, cut at a word), and the answer's "Show full doc" button for `name`
    (left out when `name` is not a valid document name)."""
    title = f"*{link(url, _one_line(doc_title))}*"
    summary = escape_truncated(_one_line(description), DESCRIPTION_CHARS, at_word=True)
    text = f"{title}\n{summary}" if summary else title
    blocks: list[Block] = [section(text if len(text) <= SECTION_CHARS else title)]
    if is_valid_name(name):
        show = button(SHOW_DOC_LABEL, f"{ACTION_SHOW_DOC_PREFIX}0", name)
        blocks.append(actions([show], block_id="show_docs"))
    return {"blocks": blocks}
