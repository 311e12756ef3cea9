"""Whole documents, never cut short: pages with "Next page", or a file with an intro."""

from __future__ import annotations

import re

from bot.errors import InvalidInput
from bot.models import Document
from bot.render._buttons import MAX_PAGE, next_page_actions, page_title
from bot.render._convert import ATX_RE
from bot.render._markdown import cut_source, markdown_to_blocks
from bot.render._pages import PageSpan, first_section, page_spans
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
    mention,
    section,
)

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
    who = mention(asker) if asker else ""
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
    # the rest of a long first section is never converted
    intro_md, _ = cut_source(
        _without_title_heading(first_section(doc.content), title), 4 * _INTRO_CHARS
    )
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
    title = doc_title(doc)
    content = doc.content
    first, _, rest = content.lstrip().partition("\n")
    heading = ATX_RE.match(first)
    if heading and heading.group("marks") == "#":
        head, body = first.rstrip("\r"), rest.lstrip("\r\n")  # the document names itself already
    else:
        head, body = f"# {title}", content
    text = f"{head}\n\nSource: {doc.uri}\n\n{body}"
    return f"{stem or 'document'}.md", text if text.endswith("\n") else text + "\n"
