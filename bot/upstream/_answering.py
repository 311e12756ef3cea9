"""The computations behind the docs service: a generated answer (within answer_query's quota,
else search with a `Fallback` saying why and until when), a search, a Pay search."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from bot.errors import InvalidInput, QuotaExceeded
from bot.models import Answer, Fallback, Reference, SearchHit
from bot.names import normalize_doc_ref, uri_for_name
from bot.observability.metrics import Metrics
from bot.quota import UNKNOWN_SIGNAL, AnswerQuota, Pause, Permit, Refusal
from bot.upstream._client import McpClient
from bot.upstream._config import UpstreamConfig
from bot.upstream._documents import DocumentFetcher
from bot.upstream._models import (
    AnswerQueryOutput,
    SearchDocumentationOutput,
    SearchDocumentsOutput,
    parse_output,
)
from bot.upstream._text import snippet, title_from_uri

logger = logging.getLogger(__name__)

#: told how long the answer waits for a per-minute slot, before it waits
OnWait = Callable[[float], Awaitable[None]]


def name_for(ref: str) -> str | None:
    try:
        return normalize_doc_ref(ref)
    except InvalidInput:
        return None


class Answering:
    def __init__(
        self,
        config: UpstreamConfig,
        dk: McpClient,
        pay: McpClient,
        documents: DocumentFetcher,
        quota: AnswerQuota,
        metrics: Metrics,
        clock: Callable[[], datetime],
    ) -> None:
        self._config = config
        self._dk = dk
        self._pay = pay
        self._documents = documents
        self._quota = quota
        self._metrics = metrics
        self._clock = clock

    def keep_for(self, answer: Answer) -> float:
        """Seconds a result is worth keeping (0: not at all). A quota fallback is kept no
        longer than the quota stays spent, and one person's allowance is theirs alone."""
        fallback = answer.fallback
        if answer.kind == "answer":
            return self._config.answer_ttl
        if fallback is None or fallback.reason != "answer_quota":
            return self._config.search_ttl
        if fallback.limit == "user" or fallback.until is None:
            return 0.0
        left = (fallback.until - self._clock()).total_seconds()
        return max(0.0, min(self._config.search_ttl, left))

    async def answer(self, query: str, asker: str | None, on_wait: OnWait | None) -> Answer:
        """answer_query when the quota allows it, else search with a fallback."""
        tools = await self._documents.tools()
        if tools.answer is None:
            return await self.search(query, Fallback(reason="no_answer_tool"))

        async def waiting(refusal: Refusal) -> None:
            if on_wait is not None and refusal.wait is not None:
                await on_wait(refusal.wait)

        decision = await self._quota.acquire_waiting(asker, on_wait=waiting)
        if isinstance(decision, Refusal):
            return await self._instead(query, decision.limit, decision.until, decision.limit_value)
        try:
            data = await self._dk.call_tool(tools.answer, {"query": query})
        except QuotaExceeded as exc:
            logger.warning("answer_query is out of quota (%s); answering with search", exc)
            pause = await self._refused(exc, asker, decision)
            # the server's own number when it gave one: it may not be the bot's setting
            return await self._instead(query, pause.kind, pause.until, pause.limit_value)
        out = parse_output(AnswerQueryOutput, data, server=self._dk.server.key, tool=tools.answer)
        references = await self._references(out.references)
        return Answer(
            query=query,
            kind="answer",
            text=out.answerText,
            references=references,
            tool=tools.answer,
        )

    async def _refused(self, exc: QuotaExceeded, asker: str | None, permit: Permit) -> Pause:
        signal = exc.signal or UNKNOWN_SIGNAL
        if not self._config.skip_until_reset:  # told not to pause: the next question tries
            await self._quota.tally_refused()
            until = signal.retry_after or self._config.quota.unknown_pause_seconds
            return Pause(signal.limit, self._clock() + timedelta(seconds=until), signal.limit_value)
        return await self._quota.refused(signal, asker, permit)

    async def _instead(self, query: str, limit: str, until: datetime, size: int | None) -> Answer:
        """Search, with a note saying which limit (of `size` answers) and until when."""
        self._metrics.quota_fallback()
        fallback = Fallback(
            reason="answer_quota", limit=limit, until=until, limit_value=size or None
        )
        return await self.search(query, fallback)

    async def _references(self, raw: list[str]) -> tuple[Reference, ...]:
        names = [name for name in dict.fromkeys(name_for(r) for r in raw) if name is not None]
        titles = await self._documents.titles(names)
        return tuple(
            Reference(name=name, uri=uri, title=titles.get(name) or title_from_uri(uri))
            for name in names
            for uri in [uri_for_name(name)]
        )

    async def search(self, query: str, fallback: Fallback | None = None) -> Answer:
        tools = await self._documents.tools()
        tool = tools.search or "search_documents"
        data = await self._dk.call_tool(tool, {"query": query})
        out = parse_output(SearchDocumentsOutput, data, server=self._dk.server.key, tool=tool)
        chunks = {}
        for chunk in out.results:
            name = name_for(chunk.parent)
            if name is not None and name not in chunks:
                chunks[name] = chunk  # the best-ranked chunk of each document
        titles = await self._documents.titles(list(chunks))
        hits = []
        for name, chunk in chunks.items():
            uri = uri_for_name(name)
            title = titles.get(name) or title_from_uri(uri)
            hits.append(SearchHit(title=title, uri=uri, snippet=snippet(chunk.content), name=name))
        return Answer(query=query, kind="search", hits=tuple(hits), fallback=fallback, tool=tool)

    async def pay_search(self, query: str, language: str | None) -> Answer:
        tool = "search_documentation"
        arguments = {"userQuery": query} | ({"languageCode": language} if language else {})
        data = await self._pay.call_tool(tool, arguments)
        out = parse_output(SearchDocumentationOutput, data, server=self._pay.server.key, tool=tool)
        hits: dict[str, SearchHit] = {}
        for result in out.results:
            if result.uri in hits or not result.uri.startswith(("https://", "http://")):
                continue
            hits[result.uri] = SearchHit(
                title=result.title or title_from_uri(result.uri),
                uri=result.uri,
                snippet=snippet(result.content),
                # Pay pages are in the Developer Knowledge corpus too: "Show full doc" works
                name=name_for(result.uri),
            )
        return Answer(query=query, kind="pay", hits=tuple(hits.values()), tool=tool)
