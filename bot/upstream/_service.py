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

from bot import keys, verify
from bot.errors import ErrorFacts, GdocsError, InvalidInput, QuotaExceeded, Reason, ServerKey
from bot.models import Answer, Document, Fallback, Scope, ServerStatus, Verification
from bot.names import MAX_NAMES_PER_CALL, normalize_doc_ref
from bot.observability.metrics import Metrics
from bot.quota import AnswerQuota, QuotaConfig, Refusal, Tally
from bot.redact import Redactor
from bot.service import OnSources
from bot.settings import Settings, reveal
from bot.store import MemoryStore, SharedFlight, Store, StoreError
from bot.text import clean_language, clean_query
from bot.upstream._auth import ApiKeyAuth, Auth, OAuth
from bot.upstream._calls import UpstreamCalls
from bot.upstream._client import McpClient
from bot.upstream._documents import DocumentFetcher, name_for, normalise, pay_search
from bot.upstream._early import SearchUnits, with_early_sources
from bot.upstream._errors import ServerContext
from bot.upstream._http import SharedHttp
from bot.upstream._question_key import question_key
from bot.upstream._rest import RestWire
from bot.upstream._results import ANSWER, Results, result_key
from bot.upstream._wire import McpWire

logger = logging.getLogger(__name__)

#: told how long the answer waits for a per-minute slot, before it waits
OnWait = Callable[[float], Awaitable[None]]
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
        clock = clock or (lambda: datetime.now(UTC))
        self._settings = settings
        timeout = settings.mcp_timeout_seconds
        self._metrics = metrics = Metrics() if metrics is None else metrics
        self._store = store = MemoryStore() if store is None else store
        self.pay_configured = settings.google_oauth_configured
        # never probe ADC/the metadata server unless OAuth is configured
        self._oauth = oauth = OAuth(settings, clock) if self.pay_configured else None
        api_key = reveal(settings.google_api_key)
        dk_auth: Auth = oauth if api_key is None and oauth else ApiKeyAuth(api_key)
        pay_auth: Auth = oauth or ApiKeyAuth(None)  # Pay takes OAuth only
        self._closed = False
        # the credentials the clients hold (an OAuth token changes): asked for on every use
        redact = Redactor(current=lambda: [*dk_auth.secrets(), *pay_auth.secrets()])

        def context(key: ServerKey, setting: str, url: str, auth: Auth) -> ServerContext:
            host = urlsplit(url).hostname or ""
            # the API's name for the gcloud hint (the default on other hosts)
            default = "developerknowledge" if key == "developer_knowledge" else "paydeveloper"
            service = host if host.endswith(".googleapis.com") else f"{default}.googleapis.com"
            return ServerContext(key, setting, service, auth.kind, timeout, redact)

        dk_url = str(settings.developer_knowledge_mcp_url)
        rest_url = str(settings.developer_knowledge_rest_url)
        # the proxy is chosen for Developer Knowledge's URL of the backend in use
        self._http = SharedHttp(rest_url if self.backend == "rest" else dk_url, timeout)
        face = {"backoff_base": backoff_base, "metrics": metrics}
        pay_url = str(settings.pay_mcp_url)
        pay = context("pay", "PAY_MCP_URL", pay_url, pay_auth)
        self._pay = McpClient(pay, pay_url, self._http, pay_auth, settings, **face)
        self._units = SearchUnits(store, settings.search_quota_per_minute, clock)
        self._wire: McpWire | RestWire
        if self.backend == "rest":
            dk = context("developer_knowledge", "DEVELOPER_KNOWLEDGE_REST_URL", rest_url, dk_auth)
            self._wire = RestWire(
                dk, rest_url, self._http, dk_auth, settings, units=self._units, **face
            )
        else:
            dk = context("developer_knowledge", "DEVELOPER_KNOWLEDGE_MCP_URL", dk_url, dk_auth)
            self._wire = McpWire(dk, dk_url, self._http, dk_auth, settings, **face)
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
        self._results = Results(store, self._flights, metrics, settings, clock)
        self._documents = DocumentFetcher(
            self._wire, store, metrics, self._flights, ttl=settings.cache_document_ttl_seconds
        )

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
        key = result_key(keys.ANSWER, question_key(query), scope)
        if (cached := await self._results.cached(key, query)) is not None:
            return cached
        if (spent := await self.quota.user_spent(asker)) is not None:
            # this person's allowance, not the team's: not shared
            fallback = self._quota_fallback("user", spent.until, spent.limit_value)
            return (await self.search(query, scope=scope)).model_copy(update={"fallback": fallback})
        server = self._wire.server
        compute = partial(self.calls.run, server, self._answer, query, asker, on_wait, scope)
        answering = self._results.shared(key, query, compute)
        if on_sources is None or self.backend != "rest":
            return await answering
        # the search shown while the answer is written
        early = partial(self.search, query, scope=scope)
        return await with_early_sources(answering, early, self._units, on_sources)

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
        # a cached answer is not kept again: that would stretch its TTL; a team answer is
        # not Google's: kept under the question's key it would be served as Google's next time
        if result.status == "checked" and not answer.cached and answer.team is None:
            try:
                query = clean_query(answer.query, self._settings.max_query_chars)
                key = result_key(keys.ANSWER, question_key(query), answer.scope)
                await self._results.keep(key, checked)
            except (StoreError, InvalidInput) as exc:
                logger.info("checked answer not cached: %s", exc)
        return checked

    async def has_answer(self, question: str, *, scope: Scope = ()) -> bool:
        """Whether a generated answer to `question` is kept (a team answer given instead of
        it saved no answer_query call); True when that cannot be told: no saving claimed."""
        try:
            query = clean_query(question, self._settings.max_query_chars)
            key = result_key(keys.ANSWER, question_key(query), scope)
            kept = await self._store.get(key, ANSWER)
        except (StoreError, InvalidInput):
            return True
        return kept is not None and kept.kind == "answer"

    async def search(self, query: str, *, scope: Scope = ()) -> Answer:
        self._scoped(scope)
        text = clean_query(query, self._settings.max_query_chars)
        key = result_key(keys.SEARCH, normalise(text), scope)
        search = partial(self._documents.search, text, None, scope)
        compute = partial(self.calls.run, self._wire.server, search)
        return await self._results.cached(key, text) or await self._results.shared(
            key, text, compute
        )

    async def pay(self, query: str, language: str | None = None) -> Answer:
        text = clean_query(query, self._settings.max_query_chars)
        tag = clean_language(language)
        if not self.pay_configured:
            answer = await self.search(text)
            return answer.model_copy(update={"fallback": Fallback(reason="pay_not_configured")})
        key = keys.PAY.key((tag or "").casefold(), normalise(text))
        search = partial(pay_search, self._pay, self._documents)
        compute = partial(self.calls.run, self._pay.server, search, text, tag)
        return await self._results.cached(key, text) or await self._results.shared(
            key, text, compute
        )

    async def docs(self, names: list[str]) -> list[Document]:
        wanted = [normalize_doc_ref(name) for name in names]
        if not wanted:
            return []
        found = await self.calls.run(
            self._wire.server, self._documents.get, [*dict.fromkeys(wanted)]
        )
        return [found[name] for name in wanted]

    async def status(self) -> list[ServerStatus]:
        dk = self._wire.status(self.calls)
        if self.pay_configured:
            return list(await asyncio.gather(dk, self._pay.status(self.calls)))
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
        self._http.refuse()
        # first the work no caller waits for, which would otherwise go on calling upstream
        await self._flights.cancel()
        await self._http.aclose()
        if self._oauth is not None:
            self._oauth.close()

    async def _answer(
        self, query: str, asker: str | None, on_wait: OnWait | None, scope: Scope
    ) -> Answer:
        """answer_query when the quota allows it, else search with a fallback."""
        tool = (await self._wire.jobs())["answer"]
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
