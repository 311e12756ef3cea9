"""Bringing a whole documentation page into Slack: paged messages with a Next page button,
or, for long documents, a short intro and the full Markdown as a file in the thread.
"""

from __future__ import annotations

import logging

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
from bot.slack.context import BotContext
from bot.slack.posting import plain
from bot.slack.replies import Reply

logger = logging.getLogger(__name__)

FIRST_PAGE = 1
NO_LONGER_AVAILABLE = "That document is no longer available."
NO_MORE_PAGES = "That document has no more pages."


async def fetch(ctx: BotContext, name: str) -> Document:
    """One document by (validated) name; NotFound when the server has none."""
    found = await ctx.service.docs([name])
    if not found:
        raise NotFound(NO_LONGER_AVAILABLE)
    return found[0]


async def show(
    ctx: BotContext, client: AsyncWebClient, reply: Reply, doc: Document, *, page: int
) -> None:
    """Post page `page` of `doc` where `reply` delivers, or the whole doc as a file."""
    if wants_file(doc, ctx.settings.doc_file_threshold_chars):
        intro_ts = await reply.deliver(render_document_file_intro(doc))
        if intro_ts is None or reply.channel is None:
            return  # delivered ephemerally: there is no conversation to upload into
        filename, content = document_file(doc)
        await client.files_upload_v2(
            channel=reply.channel,
            thread_ts=reply.thread_ts or intro_ts,
            content=content,
            filename=filename,
            title=doc.title or filename,
            request_file_info=False,
        )
        return
    pages = document_pages(doc)
    if not FIRST_PAGE <= page < FIRST_PAGE + len(pages):
        await reply.notice(plain(NO_MORE_PAGES), private=True)
        return
    await reply.deliver(render_document_page(doc, page, pages=pages))
