"""Answers and searches with titled references (and, from REST, cited spans, page dates and
sizes), pages fetched 20 at a time and kept in the store (`doc:<name>`, `title:<name>`) over
either wire (bot/upstream/_wire.py), and the Pay search."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping
from typing import TypeVar
from urllib.parse import unquote, urlsplit

from bot import keys
from bot.errors import GdocsError, InvalidInput, NotFound
from bot.models import Answer, Citation, Document, Fallback, Reference, Scope, SearchHit
from bot.names import MAX_NAMES_PER_CALL, normalize_doc_ref, uri_for_name
from bot.observability.metrics import Metrics
from bot.products import filter_for
from bot.store import TEXT, Codec, ModelCodec, Op, SharedFlight, Store
from bot.text import collapse_whitespace, markdown_lines, truncate
from bot.upstream._calls import deadline
from bot.upstream._client import McpClient
from bot.upstream._errors import Output
from bot.upstream._wire import Wire, WireAnswer, WireChunk, WireRef

logger = logging.getLogger(__name__)

_DOCUMENT = ModelCodec(Document)
_V = TypeVar("_V")


class PayResult(Output):
    uri: str
    title: str = ""
    content: str = ""


class SearchDocumentationOutput(Output):
    results: tuple[PayResult, ...] = ()


def normalise(text: str) -> str:
    """Cache-key form of a query: case-folded, whitespace collapsed."""
    return collapse_whitespace(text.casefold())


def title_from_uri(uri: str) -> str:
    """A readable title when the real one is unknown: `…/creating-buckets` -> `Creating buckets`."""
    parts = urlsplit(uri)
    segments = [s for s in parts.path.split("/") if s]
    last = unquote(segments[-1]) if segments else ""
    for suffix in (".html", ".htm", ".md"):
        last = last.removesuffix(suffix)
    words = collapse_whitespace(re.sub(r"[-_]+", " ", last))
    return words[0].upper() + words[1:] if words else parts.hostname or uri


def snippet(text: str, limit: int = 500) -> str:
    """One paragraph of at most `limit` characters cut at a word, read as plain words."""
    return truncate(collapse_whitespace(" ".join(markdown_lines(text))), limit, at_word=True)


def name_for(ref: str) -> str | None:
    try:
        return normalize_doc_ref(ref)
    except InvalidInput:
        return None


class DocumentFetcher:
    """Answers, searches and pages over a `Wire` (MCP or REST), with titles and pages kept."""

    def __init__(
        self, wire: Wire, store: Store, metrics: Metrics, flight: SharedFlight, *, ttl: float
    ) -> None:
        self._wire = wire
        self._store = store
        self._metrics = metrics
        self._flight = flight
        self._ttl = ttl

    async def get(self, names: list[str]) -> dict[str, Document]:
        """Documents by name (valid, unique), from the store or fetched."""
        found = await self._kept(keys.DOC, _DOCUMENT, "document", names)
        missing = [n for n in names if n not in found]
        if missing:
            found.update(await self._flight.run("\n".join(missing), lambda: self._fetch(missing)))
        return found

    async def answer(self, tool: str, query: str, scope: Scope = ()) -> Answer:
        out = await self._wire.answer(tool, query, filter_for(scope))
        firsts: dict[str, WireRef] = {}  # each page once, where it is first named
        index: dict[int, int] = {}  # a sent reference's place -> its page's place
        places: dict[str, int] = {}
        for i, ref in enumerate(out.references):
            if (name := name_for(ref.name)) is not None:
                index[i] = places.setdefault(name, len(places))
                firsts.setdefault(name, ref)
        refs = tuple(
            Reference(name=n, uri=u, title=t, updated=r.updated, size=r.size)
            for (n, u, t), r in zip(await self._titled(firsts), firsts.values(), strict=True)
        )
        cited = cited_spans(out, index)
        return Answer(
            query=query,
            kind="answer",
            text=out.text,
            references=refs,
            tool=tool,
            citations=cited,
            scope=scope,
        )

    async def search(
        self, query: str, fallback: Fallback | None = None, scope: Scope = ()
    ) -> Answer:
        tool = (await self._wire.jobs())["search"] or "search_documents"
        chunks: dict[str, WireChunk] = {}
        for chunk in await self._wire.search(tool, query, filter_for(scope)):
            name = name_for(chunk.name)
            if name is not None and name not in chunks:
                chunks[name] = chunk  # the best-ranked chunk of each document
        hits = tuple(
            SearchHit(
                title=t, uri=u, snippet=snippet(c.content), name=n, updated=c.updated, size=c.size
            )
            for (n, u, t), c in zip(await self._titled(chunks), chunks.values(), strict=True)
        )
        return Answer(
            query=query, kind="search", hits=hits, fallback=fallback, tool=tool, scope=scope
        )

    async def _titled(self, refs: Mapping[str, WireRef]) -> list[tuple[str, str, str]]:
        """(name, URI, title) of each page: as the wire gave them (REST), else the title
        fetched, or made from the URI when unknown."""
        titles = await self.titles([n for n, ref in refs.items() if not ref.title])
        pairs = [(n, ref.uri or uri_for_name(n), ref.title) for n, ref in refs.items()]
        return [(n, u, t or titles.get(n) or title_from_uri(u)) for n, u, t in pairs]

    async def titles(self, names: list[str]) -> dict[str, str]:
        """Titles of the documents that could be had in time; never fails the caller."""
        known = await self._kept(keys.TITLE, TEXT, "title", names)
        titles = {n: t for n, t in known.items() if t}  # "": the page is known to have no title
        missing = [n for n in names if n not in known]
        if not missing:
            return titles
        try:
            async with asyncio.timeout(self._budget()):
                documents = await self.get(missing)
        except (GdocsError, TimeoutError) as exc:
            # titles are a nicety: the answer goes out with titles made from the URLs
            logger.info("titles unavailable (%s); deriving them from URLs", exc or "timeout")
            return titles
        titles.update({name: doc.title for name, doc in documents.items() if doc.title})
        return titles

    async def _kept(
        self, family: keys.KeyFamily, codec: Codec[_V], cache: str, names: list[str]
    ) -> dict[str, _V]:
        """What the store keeps of `names`, each look-up counted as a hit or a miss."""
        values = await self._store.get_many([family.key(n) for n in names], codec) if names else []
        for value in values:
            self._metrics.cache(cache, value is not None)
        return {n: v for n, v in zip(names, values, strict=True) if v is not None}

    def _budget(self) -> float:
        """Seconds for optional work: a fifth of what is left stays, so this timeout fires
        before the operation's own."""
        end = deadline.get()
        loop = asyncio.get_running_loop()
        return self._wire.server.timeout if end is None else max(0.0, (end - loop.time()) * 0.8)

    async def served(self, names: list[str]) -> set[str]:
        """Which of `names` get_documents serves (fetched now, so a click finds them cached):
        not every Pay page is in the corpus. All of them when that cannot be told in time."""
        if not names:
            return set()
        try:
            async with asyncio.timeout(self._budget()):
                return set(await self.get(names))
        except NotFound:
            if len(names) == 1:
                return set()
        except (GdocsError, TimeoutError):
            return set(names)
        halves = await asyncio.gather(*(self.served([name]) for name in names))
        return set().union(*halves)

    async def _fetch(self, names: list[str]) -> dict[str, Document]:
        step = MAX_NAMES_PER_CALL
        batches = [names[i : i + step] for i in range(0, len(names), step)]
        parts = await asyncio.gather(*(self._wire.get_many(batch) for batch in batches))
        outs = [doc for part in parts for doc in part]
        result = {}
        writes: list[Op] = []  # the documents and their titles: one store write
        for name, out in zip(names, outs, strict=True):
            uri = out.uri or uri_for_name(name)
            title = out.title or title_from_uri(uri)
            doc = Document(
                name=name, uri=uri, title=title, description=out.description, content=out.content
            )
            result[name] = doc
            writes.append(Op.set(keys.DOC.key(name), doc, _DOCUMENT, self._ttl))
            writes.append(Op.set(keys.TITLE.key(name), doc.title, TEXT, self._ttl))
        await self._store.batch(writes)
        return result


def cited_spans(out: WireAnswer, index: dict[int, int]) -> tuple[Citation, ...]:
    """Google's spans whose bytes lie within the text, pointing at the deduplicated pages
    (`index`); a source pointing nowhere is dropped, and a span left with none."""
    size, spans = len(out.text.encode()), []
    for cite in out.citations:
        refs = tuple(dict.fromkeys(index[i] for i in cite.references if i in index))
        if refs and 0 <= cite.start < cite.end <= size:
            spans.append(Citation(start=cite.start, end=cite.end, references=refs))
    return tuple(spans)


async def pay_search(
    pay: McpClient, documents: DocumentFetcher, query: str, language: str | None
) -> Answer:
    tool = "search_documentation"
    arguments = {"userQuery": query} | ({"languageCode": language} if language else {})
    data = await pay.call_tool(tool, arguments)
    out = pay.server.parse(SearchDocumentationOutput, data, tool)
    hits: dict[str, SearchHit] = {}
    for result in out.results:
        uri = result.uri
        if uri in hits or not uri.startswith(("https://", "http://")):
            continue
        title = result.title or title_from_uri(uri)
        hits[uri] = SearchHit(
            title=title, uri=uri, snippet=snippet(result.content), name=name_for(uri)
        )
    # a page gets Show full doc only when Developer Knowledge serves it
    served = await documents.served([n for hit in hits.values() if (n := hit.name)])
    found = [h if h.name in served else h.model_copy(update={"name": None}) for h in hits.values()]
    return Answer(query=query, kind="pay", hits=tuple(found), tool=tool)
