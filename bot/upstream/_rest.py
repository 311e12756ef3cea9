"""Developer Knowledge's REST face (DEVELOPER_KNOWLEDGE_API=rest): plain JSON over the
service's httpx client, read with models that ignore what they do not use. Same key or
OAuth, retries, metrics and error mapping as the MCP client; unlike MCP it takes a `filter`
and says which spans of an answer each page backs, and when each page changed."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any
from urllib.parse import quote

import httpx

import bot
from bot.errors import GdocsError, NotFound
from bot.models import Citation, ServerStatus
from bot.observability.metrics import Metrics
from bot.settings import Settings
from bot.upstream._auth import Auth
from bot.upstream._calls import UpstreamCalls, retrying
from bot.upstream._client import read_limited
from bot.upstream._early import SearchUnits
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
    and `{url}/documents/…`; `units` counts each call that takes a search unit."""

    def __init__(
        self,
        server: ServerContext,
        http: Callable[[], httpx.AsyncClient],
        auth: Auth,
        settings: Settings,
        units: SearchUnits,
        *,
        backoff_base: float,
        metrics: Metrics,
    ) -> None:
        self.server = server
        self.url = str(settings.developer_knowledge_rest_url).rstrip("/")
        self._http = http
        self._auth = auth
        self._limit = settings.mcp_max_response_bytes
        self._retries = settings.mcp_max_retries
        self._backoff = (backoff_base, 8.0)
        self._metrics = metrics
        self._units = units
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

    async def status(self, calls: UpstreamCalls) -> ServerStatus:
        """One page's metadata (GET, BASIC view) proves key, API and route without a unit of
        the scarce search quota; a 404 naming the page is an answer too."""
        path = "/" + quote(PROBE_DOCUMENT, safe="/")
        view = {"view": "DOCUMENT_VIEW_BASIC"}
        try:
            await calls.run(
                self.server, partial(self._call, JOBS["get_one"], "GET", path, params=view)
            )
        except NotFound:
            pass
        except GdocsError as exc:
            return ServerStatus(
                server=self.server.key, url=self.url, ok=False, detail=str(exc), error=exc
            )
        tools = tuple(JOBS.values())
        return ServerStatus(
            server=self.server.key, url=self.url, ok=True, tools=tools, detail="REST v1"
        )

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
            await self._units.spend()  # each try takes a unit of Google's search quota
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
