"""Whole documentation pages: paged messages with a Next page button, or a long one as an
intro and a Markdown file (page cuts kept as `pages:`; big renders in a worker thread); and
link previews (`link_shared` → `chat.unfurl`), a message's links in ONE `get_documents` call,
halved on NOT_FOUND (at most MAX_LOOKUPS calls), an unknown name remembered an hour."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from slack_sdk.web.async_client import AsyncWebClient

from bot import keys
from bot.errors import GdocsError, NotFound
from bot.models import Document
from bot.names import MAX_NAMES_PER_CALL
from bot.render import (
    Message,
    PageSpan,
    doc_name_for_url,
    document_file,
    document_page_spans,
    notice,
    render_document_file_intro,
    render_document_page,
    render_unfurl,
)
from bot.service import DocsService
from bot.settings import Settings
from bot.slack import SLACK_CALL_FAILURES
from bot.slack.boundary import DEVELOPER_KNOWLEDGE, Outcome
from bot.slack.delivery.posting import payload, why
from bot.slack.work.worklog import Reply
from bot.store import TEXT, AdapterCodec, Store

logger = logging.getLogger(__name__)

FIRST_PAGE = 1
UPLOAD_FAILED = "upload_failed"
_SPANS = AdapterCodec(list[PageSpan])
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
    settings: Settings

    async def fetch(self, name: str) -> Document:
        return (await self.service.docs([name]))[0]

    async def show(self, reply: Reply, doc: Document, *, page: int) -> str:
        """Post page `page` (a long document's first showing as a file when it can); "ok",
        or "upload_failed" (the pages went instead)."""
        outcome = "ok"
        if page == FIRST_PAGE and len(doc.content) > self.settings.doc_file_threshold_chars:
            shown, outcome = await self._show_as_file(reply, doc)
            if shown:
                return outcome
        pages = await self._pages(doc)
        if not FIRST_PAGE <= page < FIRST_PAGE + len(pages):
            await reply.notify_asker(notice("no_more_pages"))
            return outcome
        await reply.deliver(await _page_message(doc, page, pages, _asker(reply)))
        return outcome

    async def _pages(self, doc: Document) -> list[str]:
        digest = hashlib.sha256(doc.content.encode()).hexdigest()[:16]
        key = keys.PAGES.key(doc.name, digest)
        spans = await self.store.get(key, _SPANS)
        if spans is None:  # cutting renders every page to measure it
            spans = await render_off_loop(len(doc.content), document_page_spans, doc)
            await self.store.set(key, spans, _SPANS, self.settings.cache_document_ttl_seconds)
        return [span.text(doc.content) for span in spans]

    async def _show_as_file(self, reply: Reply, doc: Document) -> tuple[bool, str]:
        channel = reply.channel
        intro = await render_off_loop(
            len(doc.content), render_document_file_intro, doc, _asker(reply)
        )
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
        page_one = await _page_message(doc, FIRST_PAGE, await self._pages(doc), _asker(reply))
        try:
            await reply.client.chat_update(channel=channel, ts=intro_ts, **payload(page_one))
        except SLACK_CALL_FAILURES as exc:
            logger.warning("could not replace the file intro (%s); posting page 1", why(exc))
            return False, UPLOAD_FAILED
        return True, UPLOAD_FAILED


async def _page_message(doc: Document, page: int, pages: list[str], asker: str | None) -> Message:
    size = len(pages[page - 1]) if 1 <= page <= len(pages) else 0
    return await render_off_loop(size, render_document_page, doc, page, pages=pages, asker=asker)


def _asker(reply: Reply) -> str | None:
    """Who asked for a page, said where others see it (a channel, not a DM with the bot)."""
    channel = reply.channel
    return reply.user if channel and not channel.startswith("D") else None


#: distinct documents previewed per message: one get_documents batch
MAX_PREVIEWS = MAX_NAMES_PER_CALL
#: get_documents calls one message may cost while unknown names are narrowed down
MAX_LOOKUPS = 8
UNKNOWN_TTL_SECONDS = 3600.0
MAX_URL_CHARS = 3000


def wanted_links(event: dict[str, Any]) -> dict[str, str]:
    """URL (as Slack sent it) -> document name, for the links that are documentation pages;
    at most `MAX_PREVIEWS` distinct documents."""
    found: dict[str, str] = {}
    links = event.get("links")
    for link in links if isinstance(links, list) else []:
        url = link.get("url") if isinstance(link, dict) else None
        if not isinstance(url, str) or len(url) > MAX_URL_CHARS or url in found:
            continue
        name = doc_name_for_url(url)
        names = set(found.values())
        if name is not None and (name in names or len(names) < MAX_PREVIEWS):
            found[url] = name
    return found


def unfurl_target(event: dict[str, Any]) -> dict[str, str] | None:
    """chat.unfurl's address: `unfurl_id` + `source` for a composer preview, `channel` + `ts`
    for a posted message; None when the event has neither."""
    source, unfurl_id = event.get("source"), event.get("unfurl_id")
    by_id = None
    if isinstance(unfurl_id, str) and unfurl_id and isinstance(source, str) and source:
        by_id = {"unfurl_id": unfurl_id, "source": source}
    if source == "composer":
        return by_id
    channel, ts = event.get("channel"), event.get("message_ts")
    if isinstance(channel, str) and channel and isinstance(ts, str) and ts:
        return {"channel": channel, "ts": ts}
    return by_id


class KnownDocuments:
    """The documents among some names, in as few get_documents calls as NOT_FOUND allows."""

    def __init__(self, service: DocsService, store: Store) -> None:
        self._service = service
        self._store = store
        self.calls_left = MAX_LOOKUPS

    async def among(self, names: list[str]) -> dict[str, Document]:
        unknown = await self._store.get_many([keys.NODOC.key(name) for name in names], TEXT)
        return await self._fetch([n for n, gone in zip(names, unknown, strict=True) if not gone])

    async def _fetch(self, names: list[str]) -> dict[str, Document]:
        if not names or self.calls_left <= 0:
            return {}
        self.calls_left -= 1
        try:
            documents = await self._service.docs(names)
        except NotFound:
            if len(names) == 1:
                await self._store.set(keys.NODOC.key(names[0]), "1", TEXT, UNKNOWN_TTL_SECONDS)
                return {}
            half = (len(names) + 1) // 2
            found = await self._fetch(names[:half])
            return found | await self._fetch(names[half:])
        return dict(zip(names, documents, strict=True))


async def unfurl(
    service: DocsService, store: Store, client: AsyncWebClient, event: dict[str, Any]
) -> Outcome:
    links, target = wanted_links(event), unfurl_target(event)
    if not links or target is None:
        return Outcome(route="unfurl", outcome="no_docs")
    try:
        names = list(dict.fromkeys(links.values()))
        known = await KnownDocuments(service, store).among(names)
    except GdocsError as error:
        logger.info("no link previews: %s", error.code.value)
        return Outcome("unfurl", error.code.value, DEVELOPER_KNOWLEDGE, "get_documents")
    unfurls = {
        url: render_unfurl(doc.title, doc.description, url, name)
        for url, name in links.items()
        if (doc := known.get(name)) is not None
    }
    if not unfurls:
        return Outcome("unfurl", "not_found", DEVELOPER_KNOWLEDGE, "get_documents")
    try:
        await client.chat_unfurl(**target, unfurls=unfurls)  # type: ignore[arg-type]
    except SLACK_CALL_FAILURES as exc:
        logger.info("chat.unfurl failed: %s", why(exc))
        return Outcome("unfurl", "unfurl_failed", DEVELOPER_KNOWLEDGE, "get_documents")
    return Outcome("unfurl", "ok", DEVELOPER_KNOWLEDGE, "get_documents")
