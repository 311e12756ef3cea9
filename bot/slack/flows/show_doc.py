"""Bringing a whole documentation page into Slack: paged messages with a Next page button,
or, for long documents, a short intro and the full Markdown as a file in the thread.

A file needs a visible conversation to go into. When there is none (the bot is not in the
channel, or the button was on a message only the clicker sees) or the upload fails, the
document is paged instead, so every part of it stays reachable and nothing claims a file
that is not there. How a document is cut into pages is kept with it (`pages:` in the store),
so a Next page click does not cut the whole document again.
"""

from __future__ import annotations

import hashlib
import logging

from pydantic import TypeAdapter
from slack_sdk.errors import SlackApiError

from bot import keys
from bot.models import Document
from bot.render import (
    PageSpan,
    document_file,
    document_page_spans,
    render_document_file_intro,
    render_document_page,
    render_no_more_pages,
    wants_file,
)
from bot.slack.delivery import posting
from bot.slack.delivery.replies import Reply
from bot.slack.deps import SlackDeps
from bot.slack.failures import SLACK_CALL_FAILURES
from bot.store import AdapterCodec

logger = logging.getLogger(__name__)

FIRST_PAGE = 1
#: the request's outcome when the file could not be uploaded and the pages went instead
UPLOAD_FAILED = "upload_failed"
_SPANS = AdapterCodec(TypeAdapter(list[PageSpan]))


async def fetch_document(deps: SlackDeps, name: str) -> Document:
    """One document by (validated) name; NotFound when the server has none."""
    return (await deps.service.docs([name]))[0]


async def show_document(deps: SlackDeps, reply: Reply, doc: Document, *, page: int) -> str:
    """Post page `page` of `doc` where `reply` delivers; a long document's first showing
    goes out as a file when it can. The outcome: "ok", or "upload_failed" when the file
    could not be uploaded and the pages went instead."""
    outcome = "ok"
    if page == FIRST_PAGE and wants_file(doc, deps.config.doc_file_threshold_chars):
        shown, outcome = await _show_as_file(deps, reply, doc)
        if shown:
            return outcome
    pages = await _pages(deps, doc)
    if not FIRST_PAGE <= page < FIRST_PAGE + len(pages):
        await reply.notify_asker(render_no_more_pages())
        return outcome
    await reply.deliver(render_document_page(doc, page, pages=pages))
    return outcome


async def _pages(deps: SlackDeps, doc: Document) -> list[str]:
    """The document's pages, cut once per version of its content."""
    digest = hashlib.sha256(doc.content.encode()).hexdigest()[:16]
    key = keys.PAGES.key(doc.name, digest)
    spans = await deps.store.get(key, _SPANS)
    if spans is None:
        spans = document_page_spans(doc)
        await deps.store.set(key, spans, _SPANS, deps.config.document_ttl_seconds)
    return [span.text(doc.content) for span in spans]


async def _show_as_file(deps: SlackDeps, reply: Reply, doc: Document) -> tuple[bool, str]:
    """Intro, then the file in its thread. (False, …) when nothing was shown, so the caller
    pages the document instead."""
    channel = reply.channel
    intro_ts = await reply.post_visibly(render_document_file_intro(doc))
    if not intro_ts or channel is None:
        return False, "ok"  # no visible conversation to upload into: nothing was sent
    filename, content = document_file(doc)
    try:
        await reply.client.files_upload_v2(
            channel=channel,
            thread_ts=reply.thread_ts or intro_ts,
            content=content,
            filename=filename,
            title=doc.title or filename,
            request_file_info=False,
        )
        return True, "ok"
    except SLACK_CALL_FAILURES as exc:
        logger.warning("file upload failed (%s); showing the document in pages", _why(exc))
    # the intro says the document is attached: turn it into page 1, with its Next page button
    page_one = render_document_page(doc, FIRST_PAGE, pages=await _pages(deps, doc))
    try:
        await posting.update(reply.client, channel=channel, ts=intro_ts, msg=page_one)
    except SLACK_CALL_FAILURES as exc:
        logger.warning("could not replace the file intro (%s); posting page 1", _why(exc))
        return False, UPLOAD_FAILED
    return True, UPLOAD_FAILED


def _why(exc: Exception) -> str:
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error"))
    return type(exc).__name__
