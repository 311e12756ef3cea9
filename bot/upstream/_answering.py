"""The computations behind the docs service: a generated answer (within answer_query's quota,
else search with a `Fallback` saying why and until when), a search, a Pay search, and the check
of a generated answer's commands against its cited pages (`bot.verify`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

from bot import keys, verify
from bot.errors import GdocsError, InvalidInput, QuotaExceeded
from bot.models import Answer, Fallback, Reference, SearchHit, Verification
from bot.names import MAX_NAMES_PER_CALL, normalize_doc_ref, uri_for_name
from bot.observability.metrics import Metrics
from bot.quota import AnswerQuota, Refusal
from bot.settings import Settings
from bot.store import ModelCodec, Store, StoreError
from bot.text import clean_query
from bot.upstream._client import McpClient
from bot.upstream._documents import (
    AnswerQueryOutput,
    DocumentFetcher,
    SearchDocumentationOutput,
    SearchDocumentsOutput,
    deadline,
    snippet,
    title_from_uri,
)
from bot.upstream._errors import parse_output
from bot.upstream._question_key import question_key

logger = logging.getLogger(__name__)

#: told how long the answer waits for a per-minute slot, before it waits
OnWait = Callable[[float], Awaitable[None]]
ANSWER = ModelCodec(Answer)
_SNIPPETS_HELP = (
    "Commands and code blocks of generated answers checked against their cited pages, by "
    "result (found, partly, not_found, unchecked)."
)


def name_for(ref: str) -> str | None:
    try:
        return normalize_doc_ref(ref)
    except InvalidInput:
        return None


class Answering:
    def __init__(
        self,
        settings: Settings,
        dk: McpClient,
        pay: McpClient,
        documents: DocumentFetcher,
        quota: AnswerQuota,
        store: Store,
        metrics: Metrics,
        clock: Callable[[], datetime],
    ) -> None:
        self._settings = settings
        self._dk = dk
        self._pay = pay
        self._documents = documents
        self._quota = quota
        self._store = store
        self._metrics = metrics
        self._clock = clock

    def keep_for(self, answer: Answer) -> float:
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

    async def answer(self, query: str, asker: str | None, on_wait: OnWait | None) -> Answer:
        """answer_query when the quota allows it, else search with a fallback."""
        tool = (await self._documents.tools())["answer"]
        if tool is None:
            return await self.search(query, Fallback(reason="no_answer_tool"))
        decision = await self._quota.acquire_waiting(asker, on_wait=on_wait)
        if isinstance(decision, Refusal):
            return await self._instead(query, decision.limit, decision.until, decision.limit_value)
        try:
            data = await self._dk.call_tool(tool, {"query": query})
        except QuotaExceeded as exc:
            logger.warning("answer_query is out of quota (%s); answering with search", exc)
            pause = await self._quota.refused(exc.signal, asker, decision)
            # the server's own number when it gave one: it may not be the bot's setting
            return await self._instead(query, pause.kind, pause.until, pause.limit_value)
        out = parse_output(AnswerQueryOutput, data, server=self._dk.server.key, tool=tool)
        names = [n for n in dict.fromkeys(map(name_for, out.references)) if n is not None]
        titles = await self._documents.titles(names)
        references = tuple(
            Reference(name=name, uri=uri, title=titles.get(name) or title_from_uri(uri))
            for name in names
            for uri in [uri_for_name(name)]
        )
        return Answer(
            query=query,
            kind="answer",
            text=out.answerText,
            references=references,
            tool=tool,
        )

    async def _instead(self, query: str, limit: str, until: datetime, size: int | None) -> Answer:
        """Search, with a note saying which limit (of `size` answers) and until when."""
        self._metrics.quota_fallback()
        fallback = Fallback(
            reason="answer_quota", limit=limit, until=until, limit_value=size or None
        )
        return await self.search(query, fallback)

    async def search(self, query: str, fallback: Fallback | None = None) -> Answer:
        tool = (await self._documents.tools())["search"] or "search_documents"
        data = await self._dk.call_tool(tool, {"query": query})
        out = parse_output(SearchDocumentsOutput, data, server=self._dk.server.key, tool=tool)
        chunks = {}
        for chunk in out.results:
            name = name_for(chunk.parent)
            if name is not None and name not in chunks:
                chunks[name] = chunk  # the best-ranked chunk of each document
        titles = await self._documents.titles(list(chunks))
        hits = tuple(
            SearchHit(
                title=titles.get(name) or title_from_uri(uri),
                uri=uri,
                snippet=snippet(chunk.content),
                name=name,
            )
            for name, chunk in chunks.items()
            for uri in [uri_for_name(name)]
        )
        return Answer(query=query, kind="search", hits=hits, fallback=fallback, tool=tool)

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

    async def verify(self, answer: Answer) -> Answer:
        """`answer` with its `verification` (unchanged when it has one, or is no generated
        answer); kept with the answer in the store and counted in `gdocs_snippets_total`."""
        if answer.kind != "answer" or answer.verification is not None or answer.fallback:
            return answer
        if verify.count_commands(answer.text) == 0:
            result = Verification(status="checked")  # nothing to look up: no call
        else:
            result = await self._check(answer)
        for name in ("found", "partly", "not_found", "unchecked"):
            if count := result.count(name):
                self._metrics.count("gdocs_snippets_total", _SNIPPETS_HELP, count, result=name)
        checked = answer.model_copy(update={"verification": result})
        seconds = self.keep_for(checked)
        # a cached answer is not kept again: that would stretch its TTL
        if result.status == "checked" and seconds > 0 and not answer.cached:
            try:
                query = clean_query(answer.query, self._settings.max_query_chars)
                await self._store.set(
                    keys.ANSWER.key(question_key(query)), checked, ANSWER, seconds
                )
            except (StoreError, InvalidInput) as exc:
                logger.info("checked answer not cached: %s", exc)
        return checked

    async def _check(self, answer: Answer) -> Verification:
        names = [n for n in dict.fromkeys(name_for(r.name) for r in answer.references) if n]
        if not names:
            return verify.unchecked(answer.text)
        timeout = self._settings.verify_timeout_seconds
        token = deadline.set(asyncio.get_running_loop().time() + timeout)
        try:
            async with asyncio.timeout(timeout):
                found = await self._documents.get(names[:MAX_NAMES_PER_CALL])
        except (GdocsError, TimeoutError) as exc:
            # the answer is worth more than its marks: it goes out, marked "not checked"
            logger.info("answer not checked: %s", type(exc).__name__)
            return verify.unchecked(answer.text)
        finally:
            deadline.reset(token)
        pages = [found[name] for name in names[:MAX_NAMES_PER_CALL]]
        # CPU over up to 20 whole pages: in a worker thread, so the acks never wait for it
        return await asyncio.to_thread(verify.check_answer, answer.text, pages)
