"""Previews of links to Google's documentation (`link_shared` → `chat.unfurl`): a message's
links fetched in ONE `get_documents` call; on NOT_FOUND the names are halved and fetched
again (at most MAX_LOOKUPS calls), an unknown name remembered an hour (`nodoc:`). Nothing
here ever posts a message."""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot import keys
from bot.errors import GdocsError, NotFound
from bot.models import Document
from bot.names import MAX_NAMES_PER_CALL
from bot.render import doc_name_for_url, render_unfurl
from bot.service import DocsService
from bot.slack.boundary import DEVELOPER_KNOWLEDGE, Outcome
from bot.slack.delivery.posting import why
from bot.slack.failures import SLACK_CALL_FAILURES
from bot.store import TEXT, Store

logger = logging.getLogger(__name__)

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
