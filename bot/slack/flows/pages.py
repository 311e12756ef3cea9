"""A whole documentation page: paged messages with a Next page button, or a long one as an
intro and a Markdown file. Page cuts are kept (`pages:`); big renders run in a worker
thread, so acknowledgements never wait behind them."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from pydantic import TypeAdapter

from bot import keys
from bot.models import Document
from bot.render import (
    Message,
    PageSpan,
    document_file,
    document_page_spans,
    notice,
    render_document_file_intro,
    render_document_page,
)
from bot.service import DocsService
from bot.slack.delivery.posting import payload, why
from bot.slack.delivery.replies import Reply
from bot.slack.failures import SLACK_CALL_FAILURES
from bot.store import AdapterCodec, Store

logger = logging.getLogger(__name__)

FIRST_PAGE = 1
UPLOAD_FAILED = "upload_failed"
_SPANS = AdapterCodec(TypeAdapter(list[PageSpan]))
OFF_LOOP_CHARS = 8_000
_P = ParamSpec("_P")
_T = TypeVar("_T")


async def render_off_loop(
    size: int, render: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs
) -> _T:
    if size < OFF_LOOP_CHARS:
        return render(*args, **kwargs)
    return await asyncio.to_thread(render, *args, **kwargs)


@dataclass(frozen=True)
class Pages:
    service: DocsService
    store: Store
    file_threshold_chars: int
    ttl_seconds: float

    async def fetch(self, name: str) -> Document:
        return (await self.service.docs([name]))[0]

    async def show(self, reply: Reply, doc: Document, *, page: int) -> str:
        """Post page `page` (a long document's first showing as a file when it can); "ok",
        or "upload_failed" (the pages went instead)."""
        outcome = "ok"
        if page == FIRST_PAGE and len(doc.content) > self.file_threshold_chars:
            shown, outcome = await self._show_as_file(reply, doc)
            if shown:
                return outcome
        pages = await self._pages(doc)
        if not FIRST_PAGE <= page < FIRST_PAGE + len(pages):
            await reply.notify_asker(notice("no_more_pages"))
            return outcome
        await reply.deliver(await _page_message(doc, page, pages))
        return outcome

    async def _pages(self, doc: Document) -> list[str]:
        digest = hashlib.sha256(doc.content.encode()).hexdigest()[:16]
        key = keys.PAGES.key(doc.name, digest)
        spans = await self.store.get(key, _SPANS)
        if spans is None:  # cutting renders every page to measure it
            spans = await render_off_loop(len(doc.content), document_page_spans, doc)
            await self.store.set(key, spans, _SPANS, self.ttl_seconds)
        return [span.text(doc.content) for span in spans]

    async def _show_as_file(self, reply: Reply, doc: Document) -> tuple[bool, str]:
        channel = reply.channel
        intro = await render_off_loop(len(doc.content), render_document_file_intro, doc)
        intro_ts = await reply.post_visibly(intro)
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
            logger.warning("file upload failed (%s); showing the document in pages", why(exc))
        # the intro says the document is attached: it becomes page 1, with its Next button
        page_one = await _page_message(doc, FIRST_PAGE, await self._pages(doc))
        try:
            await reply.client.chat_update(channel=channel, ts=intro_ts, **payload(page_one))
        except SLACK_CALL_FAILURES as exc:
            logger.warning("could not replace the file intro (%s); posting page 1", why(exc))
            return False, UPLOAD_FAILED
        return True, UPLOAD_FAILED


async def _page_message(doc: Document, page: int, pages: list[str]) -> Message:
    size = len(pages[page - 1]) if 1 <= page <= len(pages) else 0
    return await render_off_loop(size, render_document_page, doc, page, pages=pages)
