"""The "Show full doc" and "Next page" buttons and their values, and link previews. A value
comes back from Slack as user input: its decoder accepts exactly what its encoder makes."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from bot.errors import InvalidInput
from bot.names import is_valid_name
from bot.render._inline import plain_text
from bot.render._notices import forged
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
    plain_text_object,
    section,
)
from bot.text import one_line, truncate

ACTION_SHOW_DOC_PREFIX = "show_doc:"
ACTION_SHOW_DOC_MORE = "show_doc_more"
ACTION_NEXT_PAGE = "doc_next_page"
MAX_PAGE = 10_000
#: "Show full doc" buttons before the rest go into a menu (an overflow holds 5 options)
_MAX_BUTTONS = 5
#: the hosts the Developer Knowledge corpus covers (shared/reference/google-mcp.md)
_CORPUS = (
    "developer.android.com firebase.google.com docs.cloud.google.com cloud.google.com "
    "developer.chrome.com web.dev go.dev dart.dev docs.flutter.dev developers.google.com "
    "ai.google.dev tensorflow.org fuchsia.dev genkit.dev adk.dev geminicli.com "
    "antigravity.google docs.apigee.com developers.home.google.com "
    "mapsplatform.google.com knowledge.workspace.google.com"
)
CORPUS_HOSTS = frozenset(_CORPUS.split())
DESCRIPTION_CHARS = 300
_DEFAULT_PORTS = {"http": 80, "https": 443}
_BAR_RE = re.compile(r"\s*\|\s*")


def decode_page_value(value: str) -> tuple[str, int]:
    if not isinstance(value, str) or len(value) > MAX_BUTTON_VALUE_CHARS:
        raise InvalidInput(forged("button"))
    try:
        data = json.loads(value)
    except (ValueError, RecursionError):
        raise InvalidInput(forged("button")) from None
    if not isinstance(data, dict) or set(data) != {"n", "p"}:
        raise InvalidInput(forged("button"))
    name, page = data["n"], data["p"]
    if not isinstance(name, str) or not is_valid_name(name):
        raise InvalidInput(forged("button"))
    if type(page) is not int or not 1 <= page <= MAX_PAGE:
        raise InvalidInput(forged("button"))
    return name, page


def page_title(title: str, limit: int = 300) -> str:
    """A page's title as every surface shows it, NOT escaped: one line, inline Markdown read,
    `|` read as `·` (a mrkdwn link label cannot hold `|`, so headers and buttons say `·` too)."""
    flat = one_line(plain_text(title[: 8 * limit]))
    return truncate(_BAR_RE.sub(" · ", flat).strip(" ·"), limit)


#: (its number in the Sources list, document name, title)
CitedPage = tuple[int, str, str]


def _buttons_first(valid: list[CitedPage]) -> tuple[list[CitedPage], list[CitedPage]]:
    """(as buttons, in a menu): names too long for a menu option take the buttons first."""
    if len(valid) <= _MAX_BUTTONS:
        return valid, []
    long_names = [page for page in valid if len(page[1]) > MAX_OPTION_VALUE_CHARS]
    chosen = {page[1] for page in long_names[:_MAX_BUTTONS]}
    for page in valid:
        if len(chosen) >= _MAX_BUTTONS:
            break
        chosen.add(page[1])
    rest = [p for p in valid if p[1] not in chosen and len(p[1]) <= MAX_OPTION_VALUE_CHARS]
    return [page for page in valid if page[1] in chosen], rest[:100]


def show_doc_actions(pages: list[CitedPage], *, max_chars: int = 3000) -> Block | None:
    """ONE control for the numbered pages that can be fetched: `Show full doc 1`, `Show full
    doc 2`… (five buttons, the rest in a menu; a lone `2` read as unclear in the playground).
    Titles stay in the Sources list above."""
    valid: dict[str, CitedPage] = {}
    for number, name, title in pages:
        if name not in valid and is_valid_name(name):
            valid[name] = (number, name, title)
    if not valid:
        return None
    as_buttons, rest = _buttons_first(list(valid.values()))
    elements: list[Block] = []
    for number, name, title in as_buttons:
        element = button(f"Show full doc {number}", f"{ACTION_SHOW_DOC_PREFIX}{number}", name)
        said = f"Show full doc {number}: {page_title(title)}".rstrip(": ")
        elements.append(element | {"accessibility_label": truncate(said, 75)})
    while len(elements) > 1 and blocks_chars(elements) > max_chars:
        elements.pop()  # only with absurdly long names
    options: list[Block] = []
    room = max_chars - blocks_chars(elements) - 120
    for number, name, _ in rest:
        candidate = {"text": plain_text_object(f"Show full doc {number}", 75), "value": name}
        if blocks_chars([*options, candidate]) > room:
            break
        options.append(candidate)
    if 0 < len(options) <= _MAX_BUTTONS:
        elements.append({"type": "overflow", "action_id": ACTION_SHOW_DOC_MORE, "options": options})
    elif options:
        placeholder = {"type": "plain_text", "text": "More…"}
        menu = {"type": "static_select", "action_id": ACTION_SHOW_DOC_MORE}
        elements.append(menu | {"placeholder": placeholder, "options": options})
    return actions(elements, block_id="show_docs")


def next_page_actions(name: str, page: int, pages: int) -> Block | None:
    if not is_valid_name(name) or not 1 <= page <= min(pages, MAX_PAGE):
        return None
    value = json.dumps({"n": name, "p": page}, separators=(",", ":"), ensure_ascii=True)
    more = button(f"Next page ({page} of {pages})", ACTION_NEXT_PAGE, value, primary=True)
    return actions([more], block_id="doc_pages")


def doc_name_for_url(url: str) -> str | None:
    """`documents/<host>/<path>` for a link to a corpus page (Slack's `<url|label>` too), else
    None (another host, a front page, credentials or an unusual port)."""
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
    host, path = (parts.hostname or "").rstrip("."), parts.path.rstrip("/")
    name = f"documents/{host}{path}"
    return name if host in CORPUS_HOSTS and path and is_valid_name(name) else None


def render_unfurl(doc_title: str, description: str, url: str, name: str) -> dict[str, Any]:
    """One `unfurls[url]` entry: the title as a link, the description, "Show full doc"."""
    # read no further than a few times what is shown
    title = f"*{link(url, page_title(doc_title))}*"
    about = one_line(description[: 8 * DESCRIPTION_CHARS])
    summary = escape_truncated(about, DESCRIPTION_CHARS, at_word=True)
    text = f"{title}\n{summary}" if summary else title
    blocks: list[Block] = [section(text if len(text) <= SECTION_CHARS else title)]
    if is_valid_name(name):
        show = button("Show full doc", f"{ACTION_SHOW_DOC_PREFIX}0", name)
        blocks.append(actions([show], block_id="show_docs"))
    return {"blocks": blocks}
