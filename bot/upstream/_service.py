"""GoogleDocsService: the `bot.service.DocsService` operations over the two MCP servers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from functools import partial
from typing import TypeVar

import httpx

from bot import keys
from bot.errors import GdocsError
from bot.models import Answer, Document, Fallback, ServerStatus
from bot.names import normalize_doc_ref
from bot.observability.metrics import Metrics
from bot.quota import AnswerQuota
from bot.store import ModelCodec, SharedFlight, Store, WriteBehind, shared_by_replicas
from bot.text import clean_language, clean_query
from bot.upstream._answering import Answering, OnWait
from bot.upstream._auth import Auth
from bot.upstream._config import UpstreamConfig
from bot.upstream._errors import ServerContext
from bot.upstream._question_key import question_key
from bot.upstream._retrieval import DocumentFetcher
from bot.upstream._text import normalise
from bot.upstream._tools import Heartbeat, deadline
from bot.upstream._transport import McpClient
from bot.upstream._verifying import Verifier

logger = logging.getLogger(__name__)

_T = TypeVar("_T")
_ANSWER = ModelCodec(Answer)


class GoogleDocsService:
    """`bot.service.DocsService` over the Developer Knowledge and Pay MCP clients. Results are
    kept in the store (`answer:`, `search:`, `pay:`, `doc:`, `title:` keys); identical
    questions in flight on any replica share one upstream call; answer_query goes out only
    within its quota (`AnswerQuota`)."""

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
        quota: AnswerQuota,
        metrics: Metrics,
        clock: Callable[[], datetime],
        behind: WriteBehind | None = None,
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
        self.quota = quota
        self._timeout = config.timeout
        self._documents = DocumentFetcher(
            dk, store, metrics, ttl=config.document_ttl, timeout=self._timeout, behind=behind
        )
        self._work = Answering(
            config,
            dk=dk,
            pay=pay,
            documents=self._documents,
            quota=quota,
            metrics=metrics,
            clock=clock,
        )
        self._verifier = Verifier(
            self._documents,
            store,
            metrics,
            timeout=config.verify_timeout,
            max_query_chars=config.max_query_chars,
            keep_for=self._work.keep_for,
            behind=behind,
        )
        # a replica that dies while computing holds the others back no longer than this
        self._flights = SharedFlight(
            store, lock_ttl=self._timeout, shared=shared_by_replicas(store)
        )
        self._closed = False

    @property
    def pay_configured(self) -> bool:
        return self._pay_configured

    # --- operations --------------------------------------------------------------------
    async def ask(
        self, question: str, *, asker: str | None = None, on_wait: OnWait | None = None
    ) -> Answer:
        query = clean_query(question, self._config.max_query_chars)
        key = keys.ANSWER.key(question_key(query))
        cached = await self._cached(key, query)
        if cached is not None:
            return cached
        spent = await self.quota.user_spent(asker)
        if spent is not None:  # this person's allowance, not the team's: not shared
            self._metrics.quota_fallback()
            answer = await self.search(query)
            fallback = Fallback(
                reason="answer_quota",
                limit="user",
                until=spent.until,
                limit_value=spent.limit_value or None,
            )
            return answer.model_copy(update={"fallback": fallback})
        compute = partial(self._bounded, self._dk.server, self._work.answer, query, asker, on_wait)
        return await self._shared(key, query, compute)

    async def verify(self, answer: Answer) -> Answer:
        """A generated answer with its commands checked against the pages it cites (one
        get_documents call, none when they are cached; the result is cached with the
        answer). Within VERIFY_TIMEOUT_SECONDS; never fails: "unchecked" instead. With
        VERIFY_ANSWERS=false, or for search results, the answer as it is."""
        if not self._config.verify_answers:
            return answer
        return await self._verifier.verify(answer)

    async def search(self, query: str) -> Answer:
        text = clean_query(query, self._config.max_query_chars)
        key = keys.SEARCH.key(normalise(text))
        cached = await self._cached(key, text)
        if cached is not None:
            return cached
        compute = partial(self._bounded, self._dk.server, self._work.search, text)
        return await self._shared(key, text, compute)

    async def pay(self, query: str, language: str | None = None) -> Answer:
        text = clean_query(query, self._config.max_query_chars)
        tag = clean_language(language)
        if not self._pay_configured:
            answer = await self.search(text)
            return answer.model_copy(update={"fallback": Fallback(reason="pay_not_configured")})
        key = keys.PAY.key((tag or "").casefold(), normalise(text))
        cached = await self._cached(key, text)
        if cached is not None:
            return cached
        compute = partial(self._bounded, self._pay.server, self._work.pay_search, text, tag)
        return await self._shared(key, text, compute)

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
        # first the work no caller waits for, which would otherwise go on calling upstream
        await self._flights.cancel()
        await self._documents.aclose()
        await self._transport.aclose()
        for auth in self._auths:
            auth.close()

    # --- the work behind them -----------------------------------------------------------------
    async def _cached(self, key: str, query: str) -> Answer | None:
        cached = await self._store.get(key, _ANSWER)
        self._metrics.cache(key.split(":", 1)[0], cached is not None)
        if cached is None:
            return None
        reuse = "exact" if cached.query == query else "normalised"
        return cached.model_copy(update={"cached": True, "query": query, "reuse": reuse})

    async def _shared(
        self, key: str, query: str, compute: Callable[[], Awaitable[Answer]]
    ) -> Answer:
        computed = False

        async def computing() -> Answer:
            nonlocal computed
            computed = True
            return await compute()

        # identical requests in flight (on any replica) share one computation
        # the caller read `key` just before (a miss): the flight need not read it again
        answer = await self._flights.run(key, computing, _ANSWER, self._work.keep_for, checked=True)
        if not computed:  # another request's call (here or on another replica) answered it
            answer = answer.model_copy(update={"reuse": "shared"})
        # each asker sees their own wording (keys ignore case, spacing and filler words)
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

    async def _status(self, server: str, client: McpClient) -> ServerStatus:
        detail = ""
        tools: tuple[str, ...] = ()
        error: GdocsError | None = None
        try:
            async with asyncio.timeout(self._timeout):
                tools = tuple(sorted(t.name for t in await client.list_tools(refresh=True)))
            detail = f"MCP {client.protocol_version}"
        except GdocsError as exc:
            error = exc
        except TimeoutError:
            error = client.server.timeout_error()
        return ServerStatus(
            server="pay" if server == "pay" else "developer_knowledge",
            url=client.url,
            ok=error is None,
            tools=tools,
            detail=str(error) if error else detail,
            error=error,
        )
