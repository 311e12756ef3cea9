"""Developer Knowledge's REST face (DEVELOPER_KNOWLEDGE_API=rest): plain JSON over the
service's httpx client, read with models that ignore what they do not use. Same key or
OAuth, retries, metrics and error mapping as the MCP client; unlike MCP it takes a `filter`
and says which spans of an answer each page backs, and when each page changed."""

from __future__ import annotations

import json
from datetime import datetime
from functools import partial
from typing import Any
from urllib.parse import quote

from bot.errors import GdocsError, NotFound
from bot.models import Citation, ServerStatus
from bot.upstream._calls import UpstreamCalls
from bot.upstream._early import SearchUnits
from bot.upstream._errors import Output
from bot.upstream._http import ERROR_BODY_LIMIT, HttpFace, read_limited
from bot.upstream._wire import DocumentOutput, WireAnswer, WireChunk, in_order

#: the RPCs, by the names of Google's generated client (metrics and errors say these);
#: get_document only proves the API answers (`status`): batchGet fetches every page
JOBS = {
    "search": "search_document_chunks",
    "get_many": "batch_get_documents",
    "get_one": "get_document",
    "answer": "answer_query",
}
#: chunks asked per search: several may come from one page, which is shown once
PAGE_SIZE = 10
#: the page `status()` asks about (Google's own example name)
PROBE_DOCUMENT = "documents/docs.cloud.google.com/storage/docs/creating-buckets"


class _Document(DocumentOutput):
    name: str = ""  # a search chunk's document may leave it to the chunk's `parent`
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


class RestWire(HttpFace):
    """`Wire` over `{url}:answerQuery`, `{url}/documents:searchDocumentChunks`, `…:batchGet`
    and `{url}/documents/…`; `units` counts each call that takes a search unit."""

    def __init__(self, *args: Any, units: SearchUnits, **kwargs: Any) -> None:  # HttpFace's
        super().__init__(*args, **kwargs)
        self.url = self.url.rstrip("/")
        self._units = units

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

    async def search(self, tool: str, query: str, filter: str) -> tuple[WireChunk, ...]:
        params = {"query": query, "pageSize": str(PAGE_SIZE)}
        params |= {"filter": filter} if filter else {}
        data = await self._call(tool, "GET", "/documents:searchDocumentChunks", params=params)
        return tuple(_chunk(c) for c in self.server.parse(_Search, data, tool).results)

    async def get_many(self, names: list[str]) -> list[DocumentOutput]:
        tool = JOBS["get_many"]
        params = {"names": names, "view": "DOCUMENT_VIEW_CONTENT"}
        data = await self._call(tool, "GET", "/documents:batchGet", params=params)
        return in_order(
            self.server, names, list(self.server.parse(_BatchGet, data, tool).documents)
        )

    async def status(self, calls: UpstreamCalls) -> ServerStatus:
        """One page's metadata (GET, BASIC view) proves key, API and route without a unit of
        the scarce search quota; a 404 naming the page is an answer too."""
        server, url, path = self.server.key, self.url, "/" + quote(PROBE_DOCUMENT, safe="/")
        probe = partial(
            self._call, JOBS["get_one"], "GET", path, params={"view": "DOCUMENT_VIEW_BASIC"}
        )
        try:
            await calls.run(self.server, probe)
        except NotFound:
            pass
        except GdocsError as exc:
            return ServerStatus(server=server, url=url, ok=False, detail=str(exc), error=exc)
        tools = tuple(JOBS.values())
        return ServerStatus(server=server, url=url, ok=True, tools=tools, detail="REST v1")

    async def _call(
        self, rpc: str, method: str, path: str, *, params: Any = None, body: Any = None
    ) -> Any:
        """One RPC's JSON, retried while it fails transiently, measured like a tool call."""
        attempt = partial(self._attempt, rpc, method, self.url + path, params, body)
        return await self._measured(rpc, self._retrying(attempt))

    async def _attempt(self, rpc: str, method: str, url: str, params: Any, body: Any) -> Any:
        if rpc in (JOBS["answer"], JOBS["search"]):
            await self._units.spend()  # each try takes a unit of Google's search quota
        headers = await self._headers("application/json")
        async with self._semaphore:
            request = self._stream(method, url, params=params, json=body, headers=headers)
            async with request as response:
                ok = response.is_success
                raw = await read_limited(response, self._limit if ok else ERROR_BODY_LIMIT)
        if not ok:
            wait = response.headers.get("retry-after")
            raise self.server.from_http(response.status_code, raw, tool=rpc, retry_after=wait)
        if len(raw) > self._limit:
            raise self._too_large()
        try:
            return json.loads(raw)
        except ValueError:
            raise self.server.protocol("malformed JSON") from None
