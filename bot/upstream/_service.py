"""GoogleDocsService: the `bot.service.DocsService` operations over the two MCP servers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TypeVar

import httpx

from bot.errors import GdocsError, InvalidInput, QuotaExceeded
from bot.models import Answer, Document, Fallback, Reference, SearchHit, ServerStatus
from bot.names import normalize_doc_ref, uri_for_name
from bot.observability.metrics import Metrics
from bot.store import ModelCodec, Store
from bot.text import clean_language, clean_query
from bot.upstream._auth import Auth
from bot.upstream._config import UpstreamConfig
from bot.upstream._errors import ServerContext
from bot.upstream._models import (
    AnswerQueryInput,
    AnswerQueryOutput,
    SearchDocumentationInput,
    SearchDocumentationOutput,
    SearchDocumentsInput,
    SearchDocumentsOutput,
    parse_output,
)
from bot.upstream._retrieval import DocumentFetcher
from bot.upstream._single_flight import SingleFlight
from bot.upstream._text import next_utc_midnight, normalise, snippet, title_from_uri
from bot.upstream._tools import Heartbeat, deadline, timed_call
from bot.upstream._transport import McpClient

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

_ANSWER = ModelCodec(Answer)


def _name_for(ref: str) -> str | None:
    try:
        return normalize_doc_ref(ref)
    except InvalidInput:
        return None


class GoogleDocsService:
    """`bot.service.DocsService` over the Developer Knowledge and Pay MCP clients; results are
    kept in the store (`answer:`, `search:`, `pay:`, `doc:`, `title:` keys)."""

    def __init__(
        self,
        config: UpstreamConfig,
        *,
        transport: httpx.AsyncBaseTransport,
        dk: McpClient,
        pay: McpClient,
        auths: list[Auth],
        heartbeat: Heartbeat,
        store: Store,
        metrics: Metrics,
        clock: Callable[[], datetime],
    ) -> None:
        self._config = config
        self._transport = transport
        self._dk = dk
        self._pay = pay
        self._auths = auths
        self._heartbeat = heartbeat
        self._pay_configured = config.oauth_configured
        self._metrics = metrics
        self._store = store
        self._clock = clock
        self._timeout = config.timeout
        self._documents = DocumentFetcher(
            dk, store, metrics, ttl=config.document_ttl, timeout=self._timeout
        )
        self._flights: SingleFlight[Answer] = SingleFlight()
        #: answer_query said its daily quota is spent: search instead until then
        self._answers_paused_until: datetime | None = None
        self._closed = False

    @property
    def pay_configured(self) -> bool:
        return self._pay_configured

    # --- operations --------------------------------------------------------------------
    async def ask(self, question: str, *, asker: str | None = None) -> Answer:
        query = clean_query(question, self._config.max_query_chars)
        return await self._cached_answer(
            "answer:" + normalise(query), self._dk.server, self._ask, query
        )

    async def search(self, query: str) -> Answer:
        text = clean_query(query, self._config.max_query_chars)
        return await self._cached_answer(
            "search:" + normalise(text), self._dk.server, self._search, text
        )

    async def pay(self, query: str, language: str | None = None) -> Answer:
        text = clean_query(query, self._config.max_query_chars)
        tag = clean_language(language)
        if not self._pay_configured:
            answer = await self.search(text)
            return answer.model_copy(update={"fallback": Fallback(reason="pay_not_configured")})
        key = f"pay:{(tag or '').casefold()}:{normalise(text)}"
        return await self._cached_answer(key, self._pay.server, self._pay_search, text, tag)

    async def docs(self, names: list[str]) -> list[Document]:
        wanted = [normalize_doc_ref(name) for name in names]
        if not wanted:
            return []
        found = await self._bounded(
            self._dk.server, self._documents.get, list(dict.fromkeys(wanted))
        )
        return [found[name] for name in wanted]

    async def status(self) -> list[ServerStatus]:
        if not self._pay_configured:
            # Pay takes OAuth only: without it there is nothing worth a network round trip
            # (and a default-configured test or start-up must not reach out to Google)
            dk = await self._status("developer_knowledge", self._dk)
            pay = ServerStatus(
                server="pay",
                url=self._pay.url,
                ok=False,
                detail="not configured: tool calls need OAuth "
                "(GOOGLE_APPLICATION_CREDENTIALS or GOOGLE_CLOUD_PROJECT)",
            )
            return [dk, pay]
        checks = [self._status("developer_knowledge", self._dk), self._status("pay", self._pay)]
        return list(await asyncio.gather(*checks))

    def recently_healthy(self, within_seconds: float = 300.0) -> bool:
        return self._heartbeat.within(within_seconds)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._transport.aclose()
        for auth in self._auths:
            auth.close()

    # --- the work behind them -----------------------------------------------------------------
    async def _cached_answer(
        self,
        key: str,
        server: ServerContext,
        compute: Callable[..., Awaitable[tuple[Answer, float]]],
        *args: object,
    ) -> Answer:
        kind = key.split(":", 1)[0]
        query = str(args[0])
        cached = await self._store.get(key, _ANSWER)
        self._metrics.cache(kind, cached is not None)
        if cached is not None:
            return cached.model_copy(update={"cached": True, "query": query})

        async def once() -> Answer:
            answer, ttl = await self._bounded(server, compute, *args)
            if ttl > 0:
                await self._store.set(key, answer, _ANSWER, ttl)
            return answer

        # identical requests in flight share this one computation and its upstream calls
        answer = await self._flights.run(key, once)
        # each asker sees their own wording (keys ignore case and spacing)
        return answer if answer.query == query else answer.model_copy(update={"query": query})

    async def _bounded(
        self, server: ServerContext, work: Callable[..., Awaitable[_T]], *args: object
    ) -> _T:
        """`work` within MCP_TIMEOUT_SECONDS end to end, retries included."""
        loop = asyncio.get_running_loop()
        token = deadline.set(loop.time() + self._timeout)
        try:
            async with asyncio.timeout(self._timeout):
                return await work(*args)
        except TimeoutError:
            raise server.timeout_error() from None
        finally:
            deadline.reset(token)

    async def _ask(self, query: str) -> tuple[Answer, float]:
        tools = await self._documents.tools()
        now = self._clock()
        if tools.answer is None:
            return await self._search(query, fallback=Fallback(reason="no_answer_tool"))
        paused = self._answers_paused_until
        if paused is None or now >= paused:
            try:
                data = await timed_call(
                    self._dk, self._metrics, tools.answer, AnswerQueryInput(query=query).arguments()
                )
            except QuotaExceeded:
                logger.warning("answer_query is out of quota; answering with search")
                if self._config.skip_until_reset:
                    self._answers_paused_until = next_utc_midnight(now)
            else:
                out = parse_output(
                    AnswerQueryOutput, data, server=self._dk.server.display, tool=tools.answer
                )
                references = await self._references(out.references)
                answer = Answer(
                    query=query,
                    kind="answer",
                    text=out.answerText,
                    references=references,
                    tool=tools.answer,
                )
                return answer, self._config.answer_ttl
        self._metrics.quota_fallback()
        answer, ttl = await self._search(query, fallback=Fallback(reason="answer_quota"))
        # keep a fallback no longer than the quota stays spent, so real answers come back
        until_reset = (next_utc_midnight(now) - now).total_seconds()
        return answer, min(ttl, until_reset)

    async def _references(self, raw: list[str]) -> tuple[Reference, ...]:
        names = [name for name in dict.fromkeys(_name_for(r) for r in raw) if name is not None]
        titles = await self._documents.titles(names)
        return tuple(
            Reference(name=name, uri=uri, title=titles.get(name) or title_from_uri(uri))
            for name in names
            for uri in [uri_for_name(name)]
        )

    async def _search(self, query: str, fallback: Fallback | None = None) -> tuple[Answer, float]:
        tools = await self._documents.tools()
        tool = tools.search or "search_documents"
        data = await timed_call(
            self._dk, self._metrics, tool, SearchDocumentsInput(query=query).arguments()
        )
        out = parse_output(SearchDocumentsOutput, data, server=self._dk.server.display, tool=tool)
        chunks = {}
        for chunk in out.results:
            name = _name_for(chunk.parent)
            if name is not None and name not in chunks:
                chunks[name] = chunk  # the best-ranked chunk of each document
        titles = await self._documents.titles(list(chunks))
        hits = []
        for name, chunk in chunks.items():
            uri = uri_for_name(name)
            title = titles.get(name) or title_from_uri(uri)
            hits.append(SearchHit(title=title, uri=uri, snippet=snippet(chunk.content), name=name))
        answer = Answer(query=query, kind="search", hits=tuple(hits), fallback=fallback, tool=tool)
        return answer, self._config.search_ttl

    async def _pay_search(self, query: str, language: str | None) -> tuple[Answer, float]:
        tool = "search_documentation"
        arguments = SearchDocumentationInput(userQuery=query, languageCode=language).arguments()
        data = await timed_call(self._pay, self._metrics, tool, arguments)
        out = parse_output(
            SearchDocumentationOutput, data, server=self._pay.server.display, tool=tool
        )
        hits: dict[str, SearchHit] = {}
        for result in out.results:
            if result.uri in hits or not result.uri.startswith(("https://", "http://")):
                continue
            hits[result.uri] = SearchHit(
                title=result.title or title_from_uri(result.uri),
                uri=result.uri,
                snippet=snippet(result.content),
                # Pay pages are in the Developer Knowledge corpus too: "Show full doc" works
                name=_name_for(result.uri),
            )
        answer = Answer(query=query, kind="pay", hits=tuple(hits.values()), tool=tool)
        return answer, self._config.search_ttl

    async def _status(self, server: str, client: McpClient) -> ServerStatus:
        detail = ""
        tools: tuple[str, ...] = ()
        ok = False
        try:
            async with asyncio.timeout(self._timeout):
                tools = tuple(sorted(t.name for t in await client.list_tools(refresh=True)))
            ok = True
            detail = f"MCP {client.protocol_version}"
        except GdocsError as exc:
            detail = exc.message
        except TimeoutError:
            detail = client.server.timeout_error().message
        return ServerStatus(
            server="pay" if server == "pay" else "developer_knowledge",
            url=client.url,
            ok=ok,
            tools=tools,
            detail=detail,
        )
