"""Cited pages offered and shown: the "Show full doc" and "Next page" buttons (a value comes
back as user input: its decoder accepts exactly what its encoder makes), link previews, and
whole documents, never cut short: pages with "Next page", or a file with an intro."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from bot.errors import InvalidInput
from bot.models import Document
from bot.names import is_valid_name
from bot.products import BY_HOST
from bot.render._convert import ATX_RE
from bot.render._inline import plain_text
from bot.render._markdown import cut_source, markdown_to_blocks
from bot.render._notices import forged
from bot.render._pages import PageSpan, first_section, page_spans
from bot.render._text import (
    MAX_BLOCKS,
    MAX_BUTTON_VALUE_CHARS,
    MAX_OPTION_VALUE_CHARS,
    SECTION_CHARS,
    Block,
    Message,
    actions,
    blocks_chars,
    button,
    context,
    display_url,
    escape,
    escape_truncated,
    header,
    is_http_url,
    link,
    mention,
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
#: what the control's elements may add up to, well within one message
_ACTIONS_CHARS = 3000
#: the hosts the Developer Knowledge corpus covers: every product's sites
CORPUS_HOSTS = frozenset(BY_HOST)
DESCRIPTION_CHARS = 300
_DEFAULT_PORTS = {"http": 80, "https": 443}
_BAR_RE = re.compile(r"\s*\|\s*")


def decode_page_value(value: str) -> tuple[str, int]:
    """`(name, page)` from exactly what `next_page_actions` writes, else InvalidInput."""
    short = isinstance(value, str) and len(value) <= MAX_BUTTON_VALUE_CHARS
    try:
        data: Any = json.loads(value) if short else None
    except (ValueError, RecursionError):
        data = None
    whole = isinstance(data, dict) and set(data) == {"n", "p"}
    name, page = (data["n"], data["p"]) if whole else (None, None)
    if not (isinstance(name, str) and is_valid_name(name)):
        raise InvalidInput(forged("button"))
    if type(page) is not int or not 1 <= page <= MAX_PAGE:
        raise InvalidInput(forged("button"))
    return name, page


def page_title(title: str, limit: int = 300) -> str:
    """A page's title as every surface shows it, NOT escaped: one line, inline Markdown read,
    `|` read as `·` (a mrkdwn link label cannot hold `|`, so headers and buttons say `·` too)."""
    flat = one_line(plain_text(title[: 8 * limit]))
    return truncate(_BAR_RE.sub(" · ", flat).strip(" ·"), limit)


#: what `Settings.doc_file_threshold_chars` is unless set: a longer page comes as a file
FILE_CHARS = 20_000


def _show_words(number: int, size: int | None, file_chars: int) -> str:
    """ "Show full doc 2", with " (file, 48 KB)" when a page of `size` bytes will come as a
    file. Bytes are compared with the threshold's characters: exact for the corpus's mostly
    ASCII pages (a page in CJK may still come as pages; one within it never as a file)."""
    if size is None or size <= file_chars:
        return f"Show full doc {number}"
    amount = f"{size / 1e6:.1f} MB" if size >= 999_500 else f"{round(size / 1000)} KB"
    return f"Show full doc {number} (file, {amount})"


#: (its number in the Sources list, document name, title, size in bytes when known)
CitedPage = tuple[int, str, str, int | None]


def _buttons_first(valid: list[CitedPage]) -> tuple[list[CitedPage], list[CitedPage]]:
    """(as buttons, in a menu): names too long for a menu option take the buttons first."""
    if len(valid) <= _MAX_BUTTONS:
        return valid, []
    long_names = [page for page in valid if len(page[1]) > MAX_OPTION_VALUE_CHARS]
    chosen = {page[1] for page in long_names[:_MAX_BUTTONS]}
    for page in valid:  # then the first others, in the Sources' order
        if len(chosen) < _MAX_BUTTONS:
            chosen.add(page[1])
    rest = [p for p in valid if p[1] not in chosen and len(p[1]) <= MAX_OPTION_VALUE_CHARS]
    return [page for page in valid if page[1] in chosen], rest[:100]


def show_doc_actions(pages: list[CitedPage], *, file_chars: int = FILE_CHARS) -> Block | None:
    """ONE control for the numbered pages that can be fetched: `Show full doc 1`, `Show full
    doc 2 (file, 48 KB)`… (five buttons, the rest in a menu; a lone `2` read as unclear in the
    playground). Titles stay in the Sources list above."""
    valid: dict[str, CitedPage] = {}
    for number, name, title, size in pages:
        if name not in valid and is_valid_name(name):
            valid[name] = (number, name, title, size)
    if not valid:
        return None
    as_buttons, rest = _buttons_first(list(valid.values()))
    elements: list[Block] = []
    for number, name, title, size in as_buttons:
        shown = _show_words(number, size, file_chars)
        element = button(shown, f"{ACTION_SHOW_DOC_PREFIX}{number}", name)
        said = f"{shown}: {page_title(title)}".rstrip(": ")
        elements.append(element | {"accessibility_label": truncate(said, 75)})
    while len(elements) > 1 and blocks_chars(elements) > _ACTIONS_CHARS:
        elements.pop()  # only with absurdly long names
    options: list[Block] = []
    room = _ACTIONS_CHARS - blocks_chars(elements) - 120
    for number, name, _, size in rest:
        shown = _show_words(number, size, file_chars)
        candidate = {"text": plain_text_object(shown, 75), "value": name}
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


#: rendered size of one page's body: with the title, link, counter and button a page stays
#: well under Slack's ~12,000 characters
PAGE_CHARS = 8000
#: 50 minus header, link, page counter and button
_PAGE_BODY_BLOCKS = MAX_BLOCKS - 4
_INTRO_CHARS = 2500
_FILENAME_RE = re.compile(r"[^A-Za-z0-9._-]+")


def doc_title(doc: Document) -> str:
    """The document's own title as every surface shows it, else its name's last part."""
    return page_title(doc.title) or doc.name.rstrip("/").rsplit("/", 1)[-1] or "Document"


def document_page_spans(doc: Document) -> list[PageSpan]:
    """Page i is `spans[i].text(doc.content)`; each page's rendering fits one message."""

    def fits(page: str) -> bool:
        blocks = markdown_to_blocks(page, max_chars=SECTION_CHARS, base_url=doc.uri)
        return len(blocks) <= _PAGE_BODY_BLOCKS and blocks_chars(blocks) <= PAGE_CHARS

    return page_spans(doc.content, max_chars=PAGE_CHARS, fits=fits)


def _without_title_heading(page: str, title: str) -> str:
    """Page 1 without a leading heading that only repeats the header block: the whole title,
    or its first part (`Create buckets` of `Create buckets · Cloud Storage`)."""
    first, _, rest = page.lstrip("\n").partition("\n")
    match = ATX_RE.match(first)
    heading = page_title(match.group("text") or "").casefold() if match else None
    said = {title.casefold(), title.split(" · ", 1)[0].casefold()}
    return rest if heading in said else page


def _source_line(doc: Document, asker: str | None) -> Block:
    return context(f"Source: {link(doc.uri, display_url(doc.uri))}{_asked(asker)}")


def _asked(asker: str | None) -> str:
    """Who asked for the page, said in a channel (`asker` None: a DM)."""
    who = mention(asker or "")
    return f" · {who} asked for this page" if who else ""


def render_document_page(
    doc: Document, page: int, *, pages: list[str], asker: str | None = None
) -> Message:
    """Page `page` (from 1), with "Page i of n" (of more than one) and a "Next page" button
    while there is one; `asker`: who asked for it, said in a channel."""
    total = len(pages)
    if not 1 <= page <= total or page > MAX_PAGE:
        raise InvalidInput(f"That document has {total} page{'s' if total != 1 else ''}.")
    title = doc_title(doc)
    body_md = pages[page - 1]
    blocks: list[Block] = []
    if page == 1:
        blocks += [header(title), _source_line(doc, asker)]
        body_md = _without_title_heading(body_md, title)
    body = markdown_to_blocks(body_md, max_chars=SECTION_CHARS, base_url=doc.uri)
    if not body:
        empty = not doc.content.strip()
        body = [section("_This document is empty._" if empty else "_(Nothing to show here.)_")]
    blocks += body
    counter = f"Page {page} of {total}"
    if page > 1:  # page 1 has the header and who asked above it
        blocks.append(context(f"{escape(title)} · {counter}{_asked(asker)}"))
    elif total > 1:
        blocks.append(context(counter))
    next_page = next_page_actions(doc.name, page + 1, total) if page < total else None
    blocks += [next_page] if next_page is not None else []
    text = escape_truncated(f"{title} — page {page} of {total}" if total > 1 else title, 300)
    return {"text": text, "blocks": blocks}


def render_document_file_intro(doc: Document, asker: str | None = None) -> Message:
    """The message with a document uploaded as a file: title, link, first section."""
    title = doc_title(doc)
    intro = _without_title_heading(first_section(doc.content), title)
    intro_md, _ = cut_source(intro, 4 * _INTRO_CHARS)  # the rest is never converted
    blocks: list[Block] = [header(title), _source_line(doc, asker)]
    shown = 0
    for block in markdown_to_blocks(intro_md, max_chars=SECTION_CHARS, base_url=doc.uri)[:6]:
        size = blocks_chars(block)
        if shown + size > _INTRO_CHARS:
            break
        blocks.append(block)
        shown += size
    blocks.append(section("_The full document is attached as a Markdown file._"))
    text = escape_truncated(f"{title}: the full document is attached as a Markdown file.", 400)
    return {"text": text, "blocks": blocks}


def document_file(doc: Document) -> tuple[str, str]:
    """`(filename, content)`: a title line, the source URL, then the Markdown as sent; the
    filename is the name's last part with safe characters (`creating-buckets.md`)."""
    last = doc.name.rstrip("/").rsplit("/", 1)[-1]
    last = re.sub(r"\.(?:html?|md|markdown)$", "", last, flags=re.IGNORECASE)
    stem = _FILENAME_RE.sub("-", last).strip(".-_")[:100].strip(".-_")
    first, _, rest = doc.content.lstrip().partition("\n")
    heading = ATX_RE.match(first)
    if heading and heading.group("marks") == "#":
        head, body = first.rstrip("\r"), rest.lstrip("\r\n")  # the document names itself already
    else:
        head, body = f"# {doc_title(doc)}", doc.content
    text = f"{head}\n\nSource: {doc.uri}\n\n{body}"
    return f"{stem or 'document'}.md", text if text.endswith("\n") else text + "\n"
