"""Whole documents in Slack, never cut short: pages reachable with "Next page", or the
whole Markdown as a file with a short intro."""

from __future__ import annotations

import re

from bot.errors import InvalidInput
from bot.models import Document
from bot.render._actions import MAX_PAGE, next_page_actions
from bot.render._convert import ATX_RE
from bot.render._inline import plain_text
from bot.render._markdown import cut_source, markdown_to_blocks
from bot.render._pages import PageSpan, page_spans, scan_units
from bot.render._text import (
    MAX_BLOCKS,
    SECTION_CHARS,
    Block,
    Message,
    blocks_chars,
    context,
    display_url,
    escape,
    escape_truncated,
    header,
    link,
    section,
)
from bot.text import truncate

#: rendered size of one page's body: with the title, link, counter and button a page stays
#: well under Slack's ~12,000 characters
PAGE_CHARS = 8000
#: 50 minus header, link, page counter and button
_PAGE_BODY_BLOCKS = MAX_BLOCKS - 4
_INTRO_CHARS = 2500
_FILENAME_RE = re.compile(r"[^A-Za-z0-9._-]+")


def doc_title(doc: Document) -> str:
    """The document's own title (read up to 2000, cut to 300), else its name's last part."""
    title = truncate(" ".join(plain_text(doc.title[:2000]).split()), 300)
    return title or doc.name.rstrip("/").rsplit("/", 1)[-1] or "Document"


def document_page_spans(doc: Document, *, max_chars: int = PAGE_CHARS) -> list[PageSpan]:
    """Page i is `spans[i].text(doc.content)`; the slices, in order, are the whole source and
    each page's rendering fits one message (`max_chars`, 46 blocks)."""
    if max_chars < 1000:
        raise ValueError("max_chars must be at least 1000")

    def fits(page: str) -> bool:
        blocks = markdown_to_blocks(page, max_chars=SECTION_CHARS, base_url=doc.uri)
        return len(blocks) <= _PAGE_BODY_BLOCKS and blocks_chars(blocks) <= max_chars

    return page_spans(doc.content, max_chars=max_chars, fits=fits)


def document_pages(doc: Document, *, max_chars: int = PAGE_CHARS) -> list[str]:
    return [span.text(doc.content) for span in document_page_spans(doc, max_chars=max_chars)]


def _without_title_heading(page: str, title: str) -> str:
    """Page 1 without a leading `# Title` that only repeats the header block."""
    first, _, rest = page.lstrip("\n").partition("\n")
    match = ATX_RE.match(first)
    heading = " ".join(plain_text(match.group("text") or "").split()) if match else None
    return rest if heading is not None and heading.casefold() == title.casefold() else page


def _source_line(doc: Document) -> Block:
    return context(f"Source: {link(doc.uri, display_url(doc.uri))}")


def render_document_page(doc: Document, page: int, *, pages: list[str] | None = None) -> Message:
    """Page `page` (from 1): title and source link on page 1, "Page i of n", and a "Next
    page" button while there is one."""
    pages = pages if pages is not None else document_pages(doc)
    total = len(pages)
    if not 1 <= page <= total or page > MAX_PAGE:
        raise InvalidInput(f"That document has {total} page{'s' if total != 1 else ''}.")
    title = doc_title(doc)
    body_md = pages[page - 1]
    blocks: list[Block] = []
    if page == 1:
        blocks += [header(title), _source_line(doc)]
        body_md = _without_title_heading(body_md, title)
    body = markdown_to_blocks(body_md, max_chars=SECTION_CHARS, base_url=doc.uri)
    if not body:
        empty = not doc.content.strip()
        body = [section("_This document is empty._" if empty else "_(Nothing to show here.)_")]
    blocks += body
    counter = f"Page {page} of {total}"
    blocks.append(context(counter if page == 1 else f"{escape(title)} · {counter}"))
    next_page = next_page_actions(doc.name, page + 1, total) if page < total else None
    blocks += [next_page] if next_page is not None else []
    text = escape_truncated(f"{title} — page {page} of {total}", 300)
    return {"text": text, "blocks": blocks}


def wants_file(doc: Document, threshold_chars: int) -> bool:
    return len(doc.content) > threshold_chars


def first_section(markdown: str) -> str:
    """Everything up to the first heading that follows some text (not in code blocks)."""
    seen_text = False
    for unit in scan_units(markdown, max_table_prefix=0):
        if unit.heading and seen_text:
            return markdown[: unit.start]
        if not unit.heading and markdown[unit.start : unit.end].strip():
            seen_text = True
    return markdown


def render_document_file_intro(doc: Document) -> Message:
    """The message with a document uploaded as a file: title, link, first section."""
    title = doc_title(doc)
    # the rest of a long first section is never converted
    intro_md, _ = cut_source(
        _without_title_heading(first_section(doc.content), title), 4 * _INTRO_CHARS
    )
    blocks: list[Block] = [header(title), _source_line(doc)]
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


def document_filename(name: str) -> str:
    """`documents/host/a/creating-buckets.html` -> `creating-buckets.md` (safe characters)."""
    last = name.rstrip("/").rsplit("/", 1)[-1]
    last = re.sub(r"\.(?:html?|md|markdown)$", "", last, flags=re.IGNORECASE)
    stem = _FILENAME_RE.sub("-", last).strip(".-_")[:100].strip(".-_")
    return f"{stem or 'document'}.md"


def document_file(doc: Document) -> tuple[str, str]:
    """`(filename, content)`: a title line, the source URL, then the Markdown as sent."""
    title = doc_title(doc)
    content = doc.content
    first, _, rest = content.lstrip().partition("\n")
    heading = ATX_RE.match(first)
    if heading and heading.group("marks") == "#":
        head, body = first.rstrip("\r"), rest.lstrip("\r\n")  # the document names itself already
    else:
        head, body = f"# {title}", content
    text = f"{head}\n\nSource: {doc.uri}\n\n{body}"
    return document_filename(doc.name), text if text.endswith("\n") else text + "\n"
