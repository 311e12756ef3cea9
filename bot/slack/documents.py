"""Bringing a whole documentation page into Slack: paged messages with a Next page button,
or, for long documents, a short intro and the full Markdown as a file in the thread.

A file needs a visible conversation to go into. When there is none (the bot is not in the
channel, or the button was on a message only the clicker sees) or the upload fails, the
document is paged instead, so every part of it stays reachable and nothing claims a file
that is not there.
"""

from __future__ import annotations

import logging

from aiohttp import ClientError
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot.docs import Document
from bot.errors import NotFound
from bot.render import (
    document_file,
    document_pages,
    render_document_file_intro,
    render_document_page,
    wants_file,
)
from bot.slack import posting
from bot.slack.context import BotContext
from bot.slack.guard import RequestRecord
from bot.slack.posting import plain
from bot.slack.replies import Reply

logger = logging.getLogger(__name__)

FIRST_PAGE = 1
NO_LONGER_AVAILABLE = "That document is no longer available."
NO_MORE_PAGES = "That document has no more pages."
#: the request's outcome when the file could not be uploaded and the pages went instead
UPLOAD_FAILED = "upload_failed"
_SLACK_FAILURES = (SlackClientError, ClientError, OSError, TimeoutError)


async def fetch(ctx: BotContext, name: str, record: RequestRecord) -> Document:
    """One document by (validated) name; NotFound when the server has none."""
    record.server = "developer_knowledge"
    found = await ctx.service.docs([name])
    if not found:
        raise NotFound(NO_LONGER_AVAILABLE)
    record.tool = "get_documents"
    return found[0]


async def show(
    ctx: BotContext,
    client: AsyncWebClient,
    reply: Reply,
    doc: Document,
    *,
    page: int,
    record: RequestRecord,
) -> None:
    """Post page `page` of `doc` where `reply` delivers; a long document's first showing
    goes out as a file when it can."""
    long_doc = wants_file(doc, ctx.settings.doc_file_threshold_chars)
    if page == FIRST_PAGE and long_doc and await _show_as_file(client, reply, doc, record):
        return
    pages = document_pages(doc)
    if not FIRST_PAGE <= page < FIRST_PAGE + len(pages):
        await reply.notice(plain(NO_MORE_PAGES), private=True)
        return
    await reply.deliver(render_document_page(doc, page, pages=pages))


async def _show_as_file(
    client: AsyncWebClient, reply: Reply, doc: Document, record: RequestRecord
) -> bool:
    """Intro, then the file in its thread. False when nothing was shown, so the caller
    pages the document instead."""
    channel = reply.channel
    intro_ts = await reply.post_visibly(render_document_file_intro(doc))
    if not intro_ts or channel is None:
        return False  # no visible conversation to upload into: nothing was sent
    filename, content = document_file(doc)
    try:
        await client.files_upload_v2(
            channel=channel,
            thread_ts=reply.thread_ts or intro_ts,
            content=content,
            filename=filename,
            title=doc.title or filename,
            request_file_info=False,
        )
        return True
    except _SLACK_FAILURES as exc:
        record.outcome = UPLOAD_FAILED
        logger.warning("file upload failed (%s); showing the document in pages", _why(exc))
    # the intro says the document is attached: turn it into page 1, with its Next page button
    try:
        await posting.update(
            client, channel=channel, ts=intro_ts, msg=render_document_page(doc, FIRST_PAGE)
        )
    except _SLACK_FAILURES as exc:
        logger.warning("could not replace the file intro (%s); posting page 1", _why(exc))
        return False
    return True


def _why(exc: Exception) -> str:
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error"))
    return type(exc).__name__
