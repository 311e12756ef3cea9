"""Previews of links to Google's documentation: `link_shared` → `chat.unfurl`.

The links of one message become document names (`doc_name_for_url`; other links are left
alone) and are fetched together in ONE `get_documents` call (at most 20 names: one batch;
documents, with their titles and descriptions, are cached by the docs service). The
retrieval quota is spent, never answer_query's.

A name the corpus does not know fails the whole `get_documents` call (NOT_FOUND). Then the
names are split in halves and each half fetched again, down to single names, so the known
ones still get their previews: with one unknown link among n, that is about 2·log2(n)
more calls, and never more than `MAX_LOOKUPS` in all. An unknown name is remembered for an
hour (`nodoc:<name>`), so pasting it again costs no call. Any other upstream failure means
no preview. Previews never shout: nothing here ever posts a message.

Posted messages are unfurled by `channel` + `ts`; links typed into the message box
(`source: "composer"`) by `unfurl_id` + `source`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import keys
from bot.errors import GdocsError, NotFound
from bot.models import Document
from bot.names import MAX_NAMES_PER_CALL
from bot.render import doc_name_for_url, render_unfurl
from bot.slack.boundary import DEVELOPER_KNOWLEDGE, Outcome, say_nothing
from bot.slack.deps import SlackDeps
from bot.slack.failures import SLACK_CALL_FAILURES
from bot.store import TEXT

logger = logging.getLogger(__name__)

#: distinct documents previewed per message: one get_documents batch
MAX_PREVIEWS = MAX_NAMES_PER_CALL
#: get_documents calls one message may cost while unknown names are narrowed down
MAX_LOOKUPS = 8
UNKNOWN_TTL_SECONDS = 3600.0
MAX_URL_CHARS = 3000


def register(app: AsyncApp, deps: SlackDeps) -> None:
    async def on_link_shared(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        event = body.get("event")
        deps.inflight.spawn(unfurl(deps, client, event if isinstance(event, dict) else {}))

    app.event("link_shared")(on_link_shared)


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


@dataclass(frozen=True)
class UnfurlTarget:
    """chat.unfurl's address: `channel` + `ts`, or `unfurl_id` + `source`."""

    channel: str | None = None
    ts: str | None = None
    unfurl_id: str | None = None
    source: str | None = None


def unfurl_target(event: dict[str, Any]) -> UnfurlTarget | None:
    """`unfurl_id` + `source` for a composer preview, `channel` + `ts` for a posted message;
    None when the event has neither."""
    source, unfurl_id = event.get("source"), event.get("unfurl_id")
    by_id = None
    if isinstance(unfurl_id, str) and unfurl_id and isinstance(source, str) and source:
        by_id = UnfurlTarget(unfurl_id=unfurl_id, source=source)
    if source == "composer":
        return by_id
    channel, ts = event.get("channel"), event.get("message_ts")
    if isinstance(channel, str) and channel and isinstance(ts, str) and ts:
        return UnfurlTarget(channel=channel, ts=ts)
    return by_id


class KnownDocuments:
    """The documents among some names, in as few get_documents calls as NOT_FOUND allows."""

    def __init__(self, deps: SlackDeps) -> None:
        self._deps = deps
        self.calls_left = MAX_LOOKUPS

    async def among(self, names: list[str]) -> dict[str, Document]:
        store = self._deps.store
        unknown = await store.get_many([keys.NODOC.key(name) for name in names], TEXT)
        return await self._fetch([n for n, gone in zip(names, unknown, strict=True) if not gone])

    async def _fetch(self, names: list[str]) -> dict[str, Document]:
        if not names or self.calls_left <= 0:
            return {}
        self.calls_left -= 1
        try:
            documents = await self._deps.service.docs(names)
        except NotFound:
            if len(names) == 1:
                await self._deps.store.set(keys.NODOC.key(names[0]), "1", TEXT, UNKNOWN_TTL_SECONDS)
                return {}
            half = (len(names) + 1) // 2
            found = await self._fetch(names[:half])
            return found | await self._fetch(names[half:])
        return dict(zip(names, documents, strict=True))


async def unfurl(deps: SlackDeps, client: AsyncWebClient, event: dict[str, Any]) -> None:
    async def job() -> Outcome:
        links, target = wanted_links(event), unfurl_target(event)
        if not links or target is None:
            return Outcome(route="unfurl", outcome="no_docs")
        try:
            known = await KnownDocuments(deps).among(list(dict.fromkeys(links.values())))
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
            await client.chat_unfurl(
                channel=target.channel,
                ts=target.ts,
                unfurl_id=target.unfurl_id,
                source=target.source,
                unfurls=unfurls,
            )
        except SLACK_CALL_FAILURES as exc:
            why = (
                exc.response.get("error") if isinstance(exc, SlackApiError) else type(exc).__name__
            )
            logger.info("chat.unfurl failed: %s", why)
            return Outcome("unfurl", "unfurl_failed", DEVELOPER_KNOWLEDGE, "get_documents")
        return Outcome("unfurl", "ok", DEVELOPER_KNOWLEDGE, "get_documents")

    await deps.boundary("unfurl", job, say_nothing)
