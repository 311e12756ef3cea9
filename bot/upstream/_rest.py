"""Developer Knowledge's REST face (DEVELOPER_KNOWLEDGE_API=rest): plain JSON over the
service's httpx client, read with models that ignore what they do not use. Same key or
OAuth, retries, metrics and error mapping as the MCP client; unlike MCP it takes a `filter`
and says which spans of an answer each page backs, and when each page changed.

Also here: the deployment's search units of the last minute (`SearchUnits`) and the early
search shown while an answer is written (`with_early_sources`), both REST only."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from functools import partial
from typing import Any
from urllib.parse import quote

import httpx

import bot
from bot import keys
from bot.errors import GdocsError
from bot.models import Answer, Citation
from bot.observability.metrics import Metrics
from bot.service import OnSources
from bot.settings import Settings
from bot.store import Store, StoreError
from bot.upstream._auth import Auth
from bot.upstream._calls import retrying
from bot.upstream._client import read_limited
from bot.upstream._errors import Output, ServerContext
from bot.upstream._wire import DocumentOutput, WireAnswer, WireChunk, in_order

logger = logging.getLogger(__name__)

#: the RPCs, by the names of Google's generated client (metrics and errors say these)
JOBS = {
    "search": "search_document_chunks",
    "get_many": "batch_get_documents",
    "get_one": "get_document",
    "answer": "answer_query",
}
#: chunks asked per search: several may come from one page, which is shown once
PAGE_SIZE = 10
_ERROR_BODY_LIMIT = 64 * 1024
#: the page `status()` asks about (Google's own example name)
PROBE_DOCUMENT = "documents/docs.cloud.google.com/storage/docs/creating-buckets"
_USER_AGENT = f"gdocs-bot/{bot.__version__}"


class _Document(Output):
    name: str = ""
    uri: str = ""
    title: str = ""
    description: str = ""
    content: str = ""
    updateTime: datetime | None = None
    #: int64 in proto3 JSON: a string, or a number from some encoders (pydantic reads both)
    contentLengthBytes: int | None = None


class _Chunk(Output):
    parent: str = ""
    content: str = ""
    document: _Document = _Document()


class _Search(Output):
    results: tuple[_Chunk, ...] = ()


class _Source(Output):
    referenceIndex: int = 0  # proto3 JSON leaves out zeros


class _Citation(Output):
    startIndex: int = 0
    endIndex: int = 0
    sources: tuple[_Source, ...] = ()


class _DocumentReference(Output):
    documentChunk: _Chunk = _Chunk()


class _Reference(Output):
    documentReference: _DocumentReference = _DocumentReference()


class _Answer(Output):
    answerText: str
    citations: tuple[_Citation, ...] = ()
    references: tuple[_Reference, ...] = ()


class _AnswerQuery(Output):
    answer: _Answer


class _BatchGet(Output):
    documents: tuple[_Document, ...] = ()


def _chunk(chunk: _Chunk) -> WireChunk:
    doc = chunk.document
    return WireChunk(
        name=chunk.parent or doc.name,
        uri=doc.uri,
        title=doc.title,
        updated=doc.updateTime,
        size=doc.contentLengthBytes,
        content=chunk.content,
    )


def _document(doc: _Document) -> DocumentOutput:
    return DocumentOutput(
        name=doc.name,
        uri=doc.uri,
        title=doc.title,
        description=doc.description,
        content=doc.content,
    )


class RestWire:
    """`Wire` over `{url}:answerQuery`, `{url}/documents:searchDocumentChunks`, `…:batchGet`
    and `{url}/documents/…`. `spend` is told of each call that takes a search unit."""

    def __init__(
        self,
        server: ServerContext,
        url: str,
        http: Callable[[], httpx.AsyncClient],
        auth: Auth,
        settings: Settings,
        *,
        backoff_base: float,
        metrics: Metrics,
        spend: Callable[[], Awaitable[None]],
    ) -> None:
        self.server = server
        self.url = url.rstrip("/")
        self._http = http
        self._auth = auth
        self._limit = settings.mcp_max_response_bytes
        self._retries = settings.mcp_max_retries
        self._backoff = (backoff_base, 8.0)
        self._metrics = metrics
        self._spend = spend
        self._semaphore = asyncio.Semaphore(settings.mcp_max_concurrency)
        self.answered_at: float | None = None

    async def jobs(self) -> dict[str, str | None]:
        return dict(JOBS)

    async def answer(self, tool: str, query: str, filter: str) -> WireAnswer:
        body = {"query": query} | ({"filter": filter} if filter else {})
        data = await self._call(tool, "POST", ":answerQuery", body=body)
        out = self.server.parse(_AnswerQuery, data, tool).answer
        refs = tuple(_chunk(r.documentReference.documentChunk) for r in out.references)
        cites = tuple(
            Citation(
                start=c.startIndex,
                end=c.endIndex,
                references=tuple(s.referenceIndex for s in c.sources),
            )
            for c in out.citations
        )
        return WireAnswer(text=out.answerText, references=refs, citations=cites)

    async def search(
        self, tool: str, query: str, filter: str, page_size: int = PAGE_SIZE
    ) -> tuple[WireChunk, ...]:
        params = {"query": query, "pageSize": str(page_size)}
        params |= {"filter": filter} if filter else {}
        data = await self._call(tool, "GET", "/documents:searchDocumentChunks", params=params)
        return tuple(_chunk(c) for c in self.server.parse(_Search, data, tool).results)

    async def get_many(self, tool: str, names: list[str]) -> list[DocumentOutput]:
        params = {"names": names, "view": "DOCUMENT_VIEW_CONTENT"}
        data = await self._call(tool, "GET", "/documents:batchGet", params=params)
        docs = [_document(d) for d in self.server.parse(_BatchGet, data, tool).documents]
        return in_order(self.server, names, docs)

    async def get_one(self, tool: str, name: str) -> DocumentOutput:
        params = {"view": "DOCUMENT_VIEW_CONTENT"}
        data = await self._call(tool, "GET", "/" + quote(name, safe="/"), params=params)
        return _document(self.server.parse(_Document, data, tool))

    async def probe(self, name: str = PROBE_DOCUMENT) -> None:
        """A page's metadata only: the cheapest call that proves key, API and route."""
        path = "/" + quote(name, safe="/")
        await self._call(JOBS["get_one"], "GET", path, params={"view": "DOCUMENT_VIEW_BASIC"})

    async def _call(
        self, rpc: str, method: str, path: str, *, params: Any = None, body: Any = None
    ) -> Any:
        """One RPC's JSON, retried while it fails transiently, measured like a tool call."""
        started, outcome = time.perf_counter(), "cancelled"
        attempt = partial(self._attempt, rpc, method, self.url + path, params, body)
        try:
            data = await retrying(self.server, self._retries, self._backoff, attempt)
            outcome = "ok"
            return data
        except GdocsError as exc:
            outcome = exc.code.value
            raise
        finally:
            self._metrics.upstream(self.server.key, rpc, outcome, time.perf_counter() - started)

    async def _attempt(self, rpc: str, method: str, url: str, params: Any, body: Any) -> Any:
        if rpc in (JOBS["answer"], JOBS["search"]):
            await self._spend()  # each try takes a unit of Google's search quota
        headers = {"Accept": "application/json", "User-Agent": _USER_AGENT}
        headers |= await self._auth.headers()
        async with self._semaphore:
            try:
                request = self._http().stream(
                    method, url, params=params, json=body, headers=headers
                )
                async with request as response:
                    if response.status_code < 500:  # it answered, even if to refuse: it is up
                        self.answered_at = time.monotonic()
                    ok = response.is_success
                    raw = await read_limited(response, self._limit if ok else _ERROR_BODY_LIMIT)
            except httpx.HTTPError as exc:
                raise self.server.from_transport(exc) from None
        if not ok:
            wait = response.headers.get("retry-after")
            raise self.server.from_http(response.status_code, raw, tool=rpc, retry_after=wait)
        if len(raw) > self._limit:
            raise self.server.protocol(f"the answer is larger than {self._limit:,} bytes")
        try:
            return json.loads(raw)
        except ValueError:
            raise self.server.protocol("malformed JSON") from None


#: this deployment's search units of the rolling minute (shared by replicas)
UNITS_KEY = keys.QUOTA.key("search_minute")
_MINUTE = 60.0


class SearchUnits:
    """Google's search quota counts every search and every answer (100 a minute by default).
    The calls users ask for are counted, never held back; the early search is the one extra,
    made only while the minute has room to spare: a fifth of the limit stays for the rest."""

    def __init__(self, store: Store, per_minute: int, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._per_minute = per_minute
        self._clock = clock

    async def spend(self) -> None:
        if not self._per_minute:
            return
        try:
            await self._store.hit(UNITS_KEY, 1 << 30, _MINUTE, self._clock().timestamp())
        except StoreError as exc:
            logger.info("search unit not counted: %s", exc.message)

    async def room(self) -> bool:
        """Whether an early search fits: used + 1 stays within the limit less its reserve."""
        if not self._per_minute:
            return True
        now = self._clock().timestamp()
        try:
            used = len(await self._store.window_events(UNITS_KEY, _MINUTE, now))
        except StoreError:
            return False  # unknown: the answer alone is worth more than early pages
        return used + 1 <= self._per_minute - max(1, self._per_minute // 5)


async def with_early_sources(
    answering: Awaitable[Answer], searching: Awaitable[Answer], on_sources: OnSources
) -> Answer:
    """The answer; the search's pages go to `on_sources` first if they come before it. The
    search never fails nor delays the answer: its failure is logged, and when the answer comes
    first the wait for it ends (its single flight still finishes into the cache)."""
    answer = asyncio.ensure_future(answering)
    early = asyncio.ensure_future(searching)
    try:
        done, _ = await asyncio.wait({answer, early}, return_when=asyncio.FIRST_COMPLETED)
        if early in done and not answer.done():
            await _show(early, on_sources)
        return await answer
    finally:
        for task in (early, answer):  # a Stop ends the answer's wait as it did before
            if not task.done():
                task.cancel()
        await asyncio.wait({early, answer})
        if not early.cancelled():
            early.exception()  # retrieved: a failed early search is no error of the answer


async def _show(early: asyncio.Future[Answer], on_sources: OnSources) -> None:
    try:
        hits = early.result().hits
    except GdocsError as exc:
        logger.info("early sources unavailable: %s", type(exc).__name__)
        return
    try:
        if hits:
            await on_sources(hits)
    except Exception:  # a nicety: showing them must not cost the answer
        logger.warning("early sources not shown", exc_info=True)
