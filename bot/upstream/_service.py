"""GoogleDocsService: `bot.service.DocsService` over Developer Knowledge (its MCP server, or its
REST API with DEVELOPER_KNOWLEDGE_API=rest) and the Pay MCP server. A generated answer goes
out within answer_query's quota, else a search with a `Fallback`."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial
from typing import Literal
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

import httpx
from httpx_aiohttp import AiohttpTransport

from bot import keys, verify
from bot.errors import ErrorFacts, GdocsError, InvalidInput, QuotaExceeded, Reason, ServerKey
from bot.models import Answer, Document, Fallback, Scope, ServerStatus, Verification
from bot.names import MAX_NAMES_PER_CALL, normalize_doc_ref
from bot.observability.metrics import Metrics
from bot.quota import AnswerQuota, QuotaConfig, Refusal, Tally
from bot.redact import Redactor
from bot.service import OnSources
from bot.settings import Settings, reveal
from bot.store import MemoryStore, ModelCodec, SharedFlight, Store, StoreError
from bot.text import clean_language, clean_query
from bot.upstream._auth import ApiKeyAuth, Auth, OAuth
from bot.upstream._calls import UpstreamCalls
from bot.upstream._client import McpClient
from bot.upstream._documents import DocumentFetcher, name_for, normalise, pay_search
from bot.upstream._early import SearchUnits, with_early_sources
from bot.upstream._errors import ServerContext
from bot.upstream._question_key import question_key
from bot.upstream._rest import RestWire
from bot.upstream._wire import McpWire

logger = logging.getLogger(__name__)


def _key(family: keys.KeyFamily, text: str, scope: Scope) -> str:
    """A result's key: unscoped ones as ever, a scope a part of its own (never served to an
    unscoped question, nor the reverse)."""
    return family.key(text, "in=" + ",".join(scope)) if scope else family.key(text)


#: told how long the answer waits for a per-minute slot, before it waits
OnWait = Callable[[float], Awaitable[None]]
ANSWER = ModelCodec(Answer)
_SNIPPETS_HELP = (
    "Commands and code blocks of generated answers checked against their cited pages, by "
    "result (found, partly, not_found, unchecked)."
)


class GoogleDocsService:
    """Results are kept in the store; identical questions in flight on any replica share one
    upstream call; nothing is contacted before the first. `clock` (aware UTC) and `sleep` (the
    quota's wait) are for tests; `tally` counts answer_query calls for `gdocs-bot report`."""

    def __init__(
        self,
        settings: Settings,
        *,
        store: Store | None = None,
        metrics: Metrics | None = None,
        clock: Callable[[], datetime] | None = None,
        backoff_base: float = 0.5,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        tally: Tally | None = None,
    ) -> None:
        self._clock = clock = clock or (lambda: datetime.now(UTC))
        self._settings = settings
        self._timeout = timeout = settings.mcp_timeout_seconds
        self._metrics = metrics = Metrics() if metrics is None else metrics
        self._store = store = MemoryStore() if store is None else store
        self.pay_configured = settings.google_oauth_configured
        # never probe ADC/the metadata server unless OAuth is configured
        self._oauth = oauth = OAuth(settings, clock) if self.pay_configured else None
        api_key = reveal(settings.google_api_key)
        dk_auth: Auth = oauth if api_key is None and oauth else ApiKeyAuth(api_key)
        pay_auth: Auth = oauth or ApiKeyAuth(None)  # Pay takes OAuth only
        self._client: httpx.AsyncClient | None = None
        self._closed = False
        # the credentials the clients hold (an OAuth token changes): asked for on every use
        redact = Redactor(current=lambda: [*dk_auth.secrets(), *pay_auth.secrets()])

        def context(key: ServerKey, setting: str, url: str, auth: Auth) -> ServerContext:
            host = urlsplit(url).hostname or ""
            # the API's name for the gcloud hint (the default on other hosts)
            default = "developerknowledge" if key == "developer_knowledge" else "paydeveloper"
            service = host if host.endswith(".googleapis.com") else f"{default}.googleapis.com"
            return ServerContext(key, setting, service, auth.kind, timeout, redact)

        def client(key: ServerKey, setting: str, url: str, auth: Auth) -> McpClient:
            server = context(key, setting, url, auth)
            # self._http makes the httpx client at the first call: its TLS context costs ~35 ms
            return McpClient(
                server, url, self._http, auth, settings, backoff_base=backoff_base, metrics=metrics
            )

        dk_url = str(settings.developer_knowledge_mcp_url)
        self._dk = client("developer_knowledge", "DEVELOPER_KNOWLEDGE_MCP_URL", dk_url, dk_auth)
        self._pay = client("pay", "PAY_MCP_URL", str(settings.pay_mcp_url), pay_auth)
        self._units = SearchUnits(store, settings.search_quota_per_minute, clock)
        self._wire: McpWire | RestWire = McpWire(self._dk)
        if settings.developer_knowledge_api == "rest":
            rest = context(
                "developer_knowledge", "DEVELOPER_KNOWLEDGE_REST_URL", self._base_url, dk_auth
            )
            self._wire = RestWire(
                rest,
                self._http,
                dk_auth,
                settings,
                self._units,
                backoff_base=backoff_base,
                metrics=metrics,
            )
        limits = QuotaConfig(
            per_minute=settings.answer_quota_per_minute,
            per_day=settings.answer_quota_per_day,
            per_user_per_day=settings.answer_quota_per_user_per_day,
            wait_seconds=settings.answer_quota_wait_seconds,
            pause_check_seconds=settings.answer_quota_pause_check_seconds,
            skip_until_reset=settings.answer_quota_skip_until_reset,
        )
        self.quota = AnswerQuota(
            store, limits, clock=clock, metrics=metrics, sleep=sleep, tally=tally
        )
        # identical work in flight shares one call: in this process, and (answers) across
        # replicas; a replica dying while it computes holds the others back no longer
        self._flights = SharedFlight(store, lock_ttl=timeout)
        self.calls = UpstreamCalls(store, clock)
        self._documents = DocumentFetcher(
            self._wire, store, metrics, self._flights, ttl=settings.cache_document_ttl_seconds
        )

    def _http(self) -> httpx.AsyncClient:
        if self._closed:
            raise RuntimeError("the docs service is closed")
        if self._client is None:
            # httpx's API on aiohttp's connections: httpcore's pool cost ~3 ms of CPU a question
            # in the guard's burst (bench/FINDINGS.md); the semaphores bound the calls. httpx
            # reads HTTPS_PROXY, HTTP_PROXY and NO_PROXY itself only for its own transport
            url = urlsplit(self._base_url)
            found = getproxies().get(url.scheme)
            proxy = httpx.Proxy(found) if found and not proxy_bypass(url.hostname or "") else None
            limits = httpx.Limits(max_connections=None, max_keepalive_connections=20)
            transport = AiohttpTransport(limits=limits, proxy=proxy)
            self._client = httpx.AsyncClient(timeout=self._timeout, transport=transport)
        return self._client

    @property
    def _base_url(self) -> str:
        """Developer Knowledge's URL for the backend in use (the proxy is chosen for it)."""
        if self.backend == "rest":
            return str(self._settings.developer_knowledge_rest_url)
        return str(self._settings.developer_knowledge_mcp_url)

    @property
    def backend(self) -> Literal["mcp", "rest"]:
        return self._settings.developer_knowledge_api

    def _scoped(self, scope: Scope) -> None:
        if scope and self.backend == "mcp":
            facts = ErrorFacts(Reason.SCOPE_NEEDS_REST)
            raise InvalidInput(setting="DEVELOPER_KNOWLEDGE_API", facts=facts)

    async def ask(
        self,
        question: str,
        *,
        asker: str | None = None,
        on_wait: OnWait | None = None,
        scope: Scope = (),
        on_sources: OnSources | None = None,
    ) -> Answer:
        self._scoped(scope)
        query = clean_query(question, self._settings.max_query_chars)
        key = _key(keys.ANSWER, question_key(query), scope)
        if (cached := await self._cached(key, query)) is not None:
            return cached
        if (spent := await self.quota.user_spent(asker)) is not None:
            # this person's allowance, not the team's: not shared
            fallback = self._quota_fallback("user", spent.until, spent.limit_value)
            return (await self.search(query, scope=scope)).model_copy(update={"fallback": fallback})
        server = self._wire.server
        compute = partial(self.calls.run, server, self._answer, query, asker, on_wait, scope)
        answering = self._shared(key, query, compute)
        if on_sources is None or self.backend != "rest":
            return await answering
        return await with_early_sources(answering, self._early(query, scope), on_sources)

    async def _early(self, query: str, scope: Scope) -> Answer:
        """The search shown while the answer is written: one search unit more, spent only
        while the minute has room (it is cached, so a quota fallback reuses it)."""
        if not await self._units.room():
            return Answer(query=query, kind="search", scope=scope)
        return await self.search(query, scope=scope)

    async def verify(self, answer: Answer) -> Answer:
        """A generated `answer` with its `verification`, kept in the store and counted."""
        skip = answer.kind != "answer" or answer.verification or answer.fallback
        if skip or not self._settings.verify_answers:
            return answer
        result = await self._check(answer)
        for name in ("found", "partly", "not_found", "unchecked"):
            if count := result.count(name):
                self._metrics.count("gdocs_snippets_total", _SNIPPETS_HELP, count, result=name)
        checked = answer.model_copy(update={"verification": result})
        seconds = self._keep_for(checked)
        # a cached answer is not kept again: that would stretch its TTL
        if result.status == "checked" and seconds > 0 and not answer.cached:
            try:
                query = clean_query(answer.query, self._settings.max_query_chars)
                key = _key(keys.ANSWER, question_key(query), answer.scope)
                await self._store.set(key, checked, ANSWER, seconds)
            except (StoreError, InvalidInput) as exc:
                logger.info("checked answer not cached: %s", exc)
        return checked

    async def search(self, query: str, *, scope: Scope = ()) -> Answer:
        self._scoped(scope)
        text = clean_query(query, self._settings.max_query_chars)
        key = _key(keys.SEARCH, normalise(text), scope)
        search = partial(self._documents.search, text, None, scope)
        compute = partial(self.calls.run, self._wire.server, search)
        return await self._cached(key, text) or await self._shared(key, text, compute)

    async def pay(self, query: str, language: str | None = None) -> Answer:
        text = clean_query(query, self._settings.max_query_chars)
        tag = clean_language(language)
        if not self.pay_configured:
            answer = await self.search(text)
            return answer.model_copy(update={"fallback": Fallback(reason="pay_not_configured")})
        key = keys.PAY.key((tag or "").casefold(), normalise(text))
        search = partial(pay_search, self._pay, self._documents)
        compute = partial(self.calls.run, self._pay.server, search, text, tag)
        return await self._cached(key, text) or await self._shared(key, text, compute)

    async def docs(self, names: list[str]) -> list[Document]:
        wanted = [normalize_doc_ref(name) for name in names]
        if not wanted:
            return []
        found = await self.calls.run(
            self._wire.server, self._documents.get, [*dict.fromkeys(wanted)]
        )
        return [found[name] for name in wanted]

    async def status(self) -> list[ServerStatus]:
        wire = self._wire
        dk = wire.status(self.calls) if isinstance(wire, RestWire) else self._status(self._dk)
        if self.pay_configured:
            return list(await asyncio.gather(dk, self._status(self._pay)))
        # Pay takes OAuth only: without it nothing is worth a round trip to Google
        why = "not configured: tool calls need OAuth "
        why += "(GOOGLE_APPLICATION_CREDENTIALS or GOOGLE_CLOUD_PROJECT)"
        return [await dk, ServerStatus(server="pay", url=self._pay.url, ok=False, detail=why)]

    def recently_healthy(self, within_seconds: float = 300.0) -> bool:
        at = self._wire.answered_at
        return at is not None and time.monotonic() - at <= within_seconds

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        # first the work no caller waits for, which would otherwise go on calling upstream
        await self._flights.cancel()
        if self._client is not None:
            await self._client.aclose()
        if self._oauth is not None:
            self._oauth.close()

    async def _cached(self, key: str, query: str) -> Answer | None:
        cached = await self._store.get(key, ANSWER)
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

        # the caller read `key` just before (a miss): the flight need not read it again
        answer = await self._flights.run(key, computing, ANSWER, self._keep_for, checked=True)
        if not computed:  # another request's call (here or on another replica) answered it
            answer = answer.model_copy(update={"reuse": "shared"})
        # each asker sees their own wording (keys ignore case, spacing and filler words)
        return answer if answer.query == query else answer.model_copy(update={"query": query})

    async def _status(self, client: McpClient) -> ServerStatus:
        server, url = client.server.key, client.url
        try:
            listed = await self.calls.run(client.server, partial(client.list_tools, refresh=True))
        except GdocsError as exc:
            return ServerStatus(server=server, url=url, ok=False, detail=str(exc), error=exc)
        tools, detail = tuple(sorted(t.name for t in listed)), f"MCP {client.protocol_version}"
        return ServerStatus(server=server, url=url, ok=True, tools=tools, detail=detail)

    def _keep_for(self, answer: Answer) -> float:
        """Seconds a result is worth keeping (0: not at all). A quota fallback is kept no
        longer than the quota stays spent, and one person's allowance is theirs alone."""
        fallback = answer.fallback
        if answer.kind == "answer":
            return self._settings.cache_answer_ttl_seconds
        if fallback is None or fallback.reason != "answer_quota":
            return self._settings.cache_search_ttl_seconds
        if fallback.limit == "user" or fallback.until is None:
            return 0.0
        left = (fallback.until - self._clock()).total_seconds()
        return max(0.0, min(self._settings.cache_search_ttl_seconds, left))

    async def _answer(
        self, query: str, asker: str | None, on_wait: OnWait | None, scope: Scope = ()
    ) -> Answer:
        """answer_query when the quota allows it, else search with a fallback."""
        tool = (await self._documents.tools())["answer"]
        if tool is None:
            return await self._documents.search(query, Fallback(reason="no_answer_tool"))
        decision = await self.quota.acquire_waiting(asker, on_wait=on_wait)
        if isinstance(decision, Refusal):
            fallback = self._quota_fallback(decision.limit, decision.until, decision.limit_value)
            return await self._instead(query, fallback, scope)
        try:
            return await self._documents.answer(tool, query, scope)
        except QuotaExceeded as exc:
            logger.warning("answer_query is out of quota (%s); answering with search", exc)
            pause = await self.quota.refused(exc.signal, asker, decision)
            # the server's own number when it gave one: it may not be the bot's setting
            fallback = self._quota_fallback(pause.kind, pause.until, pause.limit_value)
            return await self._instead(query, fallback, scope)

    async def _instead(self, query: str, fallback: Fallback, scope: Scope) -> Answer:
        """The search answering for a refused answer. REST: the cached one, which the early
        search for the same question may have fetched already (MCP: a call of its own)."""
        if self.backend == "mcp":
            return await self._documents.search(query, fallback)
        found = await self.search(query, scope=scope)
        return found.model_copy(update={"fallback": fallback, "cached": False, "reuse": None})

    def _quota_fallback(self, limit: str, until: datetime, size: int | None) -> Fallback:
        """Search instead: which limit (of `size` answers) and until when."""
        self._metrics.quota_fallback()
        return Fallback(reason="answer_quota", limit=limit, until=until, limit_value=size or None)

    async def _check(self, answer: Answer) -> Verification:
        if verify.count_commands(answer.text) == 0:
            return Verification(status="checked")  # nothing to look up: no call
        names = [n for n in dict.fromkeys(name_for(r.name) for r in answer.references) if n]
        if not names:
            return verify.unchecked(answer.text)
        names, timeout = names[:MAX_NAMES_PER_CALL], self._settings.verify_timeout_seconds
        get = self._documents.get
        try:
            found = await self.calls.run(self._wire.server, get, names, timeout=timeout)
        except GdocsError as exc:
            # the answer is worth more than its marks: it goes out, marked "not checked"
            logger.info("answer not checked: %s", type(exc).__name__)
            return verify.unchecked(answer.text)
        pages = [found[name] for name in names]
        # CPU over up to 20 whole pages: in a worker thread, so the acks never wait for it
        return await asyncio.to_thread(verify.check_answer, answer.text, pages)
