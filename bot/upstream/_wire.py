"""What Developer Knowledge is asked and what it says, whichever face it is reached by: `Wire`
is the three jobs (answer, search, get pages) that `DocumentFetcher` uses; `McpWire`
does them with the MCP tools (names have changed over time), `RestWire` (bot/upstream/_rest.py)
with the REST API, which also gives citations, page dates and sizes, and takes a filter."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Protocol

from pydantic import field_validator

from bot.errors import ErrorFacts, NotFound, ProtocolError, Reason
from bot.models import Citation, ServerStatus
from bot.upstream._calls import UpstreamCalls
from bot.upstream._client import McpClient
from bot.upstream._errors import Output, ServerContext


class WireRef(Output):
    """A page an answer or a search names, with what the wire knows of it."""

    name: str
    uri: str = ""
    title: str = ""
    updated: datetime | None = None
    size: int | None = None

    @field_validator("updated")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)


class WireChunk(WireRef):
    content: str = ""


class WireAnswer(Output):
    text: str
    #: as sent: repeats allowed (one per cited chunk)
    references: tuple[WireRef, ...] = ()
    #: byte spans; `references` index the list above, before it is deduplicated
    citations: tuple[Citation, ...] = ()


class DocumentOutput(Output):
    name: str
    uri: str = ""
    title: str = ""
    description: str = ""
    content: str = ""


class Wire(Protocol):
    server: ServerContext
    #: when the server last answered (time.monotonic()), even if to refuse
    answered_at: float | None

    async def status(self, calls: UpstreamCalls) -> ServerStatus:
        """Whether the server answers now, and what it offers."""

    async def jobs(self) -> dict[str, str | None]:
        """The call doing each job (search, get_many, get_one, answer); None: there is none."""

    async def answer(self, tool: str, query: str, filter: str) -> WireAnswer: ...
    async def search(self, tool: str, query: str, filter: str) -> tuple[WireChunk, ...]: ...
    async def get_many(self, names: list[str]) -> list[DocumentOutput]:
        """Up to MAX_NAMES_PER_CALL pages in request order; NotFound (naming it) when one is
        missing."""


def in_order(
    server: ServerContext, names: list[str], docs: list[DocumentOutput]
) -> list[DocumentOutput]:
    """`docs` in the order of `names`, or NotFound naming the first one missing."""
    by_name = {doc.name: doc for doc in docs}
    if all(name in by_name for name in names):
        return [by_name[name] for name in names]
    if len(docs) == len(names):
        return list(docs)  # canonical names differ from ours; order is the contract
    missing = next(name for name in names if name not in by_name)
    raise NotFound(facts=ErrorFacts(Reason.NOT_FOUND, server=server.key, name=missing))


class _Chunk(Output):
    parent: str
    content: str = ""


class _SearchDocumentsOutput(Output):
    results: tuple[_Chunk, ...] = ()


class _GetDocumentsOutput(Output):
    documents: list[DocumentOutput]


class _AnswerQueryOutput(Output):
    answerText: str
    references: tuple[str, ...] = ()


#: which tool does each job, by the names servers have used (the first is today's)
_JOBS = {
    "search": ("search_documents", "search_document_chunks"),
    "get_many": ("get_documents", "batch_get_documents"),
    "get_one": ("get_document",),
    "answer": ("answer_query",),
}


def find_tools(names: Sequence[str]) -> dict[str, str | None]:
    """The tool for each job among `names` (None: the server has none)."""
    return {job: next((n for n in tools if n in names), None) for job, tools in _JOBS.items()}


def missing_tools(names: Sequence[str]) -> tuple[str, ...]:
    """The jobs a Developer Knowledge server listing `names` cannot do, by today's tool name."""
    tools = find_tools(names)
    jobs = {"answer_query": tools["answer"], "search_documents": tools["search"]}
    jobs["get_documents"] = tools["get_many"] or tools["get_one"]
    return tuple(name for name, tool in jobs.items() if tool is None)


class McpWire(McpClient):
    """Developer Knowledge's MCP tools: no filter (the service refuses a scope first), plain
    names only."""

    async def jobs(self) -> dict[str, str | None]:
        return find_tools([t.name for t in await self.list_tools()])

    async def answer(self, tool: str, query: str, filter: str) -> WireAnswer:
        data = await self.call_tool(tool, {"query": query})
        out = self.server.parse(_AnswerQueryOutput, data, tool)
        refs = tuple(WireRef(name=name) for name in out.references)
        return WireAnswer(text=out.answerText, references=refs)

    async def search(self, tool: str, query: str, filter: str) -> tuple[WireChunk, ...]:
        data = await self.call_tool(tool, {"query": query})
        out = self.server.parse(_SearchDocumentsOutput, data, tool)
        return tuple(WireChunk(name=c.parent, content=c.content) for c in out.results)

    async def get_many(self, names: list[str]) -> list[DocumentOutput]:
        """With get_documents, else one get_document a page (servers that have only that)."""
        tools = await self.jobs()
        if (tool := tools["get_many"]) is not None:
            data = await self.call_tool(tool, {"names": names})
            documents = self.server.parse(_GetDocumentsOutput, data, tool).documents
            return in_order(self.server, names, documents)
        if (one := tools["get_one"]) is None:
            raise ProtocolError(facts=ErrorFacts(Reason.NO_FETCH_TOOL))
        return list(await asyncio.gather(*(self._get_one(one, name) for name in names)))

    async def _get_one(self, tool: str, name: str) -> DocumentOutput:
        data = await self.call_tool(tool, {"name": name})
        if isinstance(data, dict) and isinstance(data.get("document"), dict):
            data = data["document"]  # the document itself, or wrapped as {"document": …}
        return self.server.parse(DocumentOutput, data, tool)
