"""Developer Knowledge documents: fetching in batches of 20 (or one by one where only
`get_document` exists), kept in the store (`doc:<name>`, `title:<name>`), and titles for
references and search hits.

The pages fetched or read lately are also kept in this process (the last `RECENT_PAGES`,
at most `RECENT_CHARS` characters in all, for `RECENT_SECONDS`): an answer's titles and
then its check read the same pages a moment apart, and the second read should cost neither
a store call nor decoding a page again. The store writes of fetched pages are deferred
(`WriteBehind`) when the bot defers writes: the next question's batch takes them along.
"""

from __future__ import annotations

import asyncio
import logging
import time

from bot import keys
from bot.errors import ErrorFacts, GdocsError, NotFound, ProtocolError, Reason
from bot.lru import SizedLru
from bot.models import Document
from bot.names import MAX_NAMES_PER_CALL, uri_for_name
from bot.observability.metrics import Metrics
from bot.store import TEXT, ModelCodec, Op, Store, WriteBehind
from bot.upstream._models import (
    DocumentOutput,
    GetDocumentInput,
    GetDocumentsInput,
    GetDocumentsOutput,
    parse_document,
    parse_output,
)
from bot.upstream._single_flight import SingleFlight
from bot.upstream._text import title_from_uri
from bot.upstream._tools import DkTools, deadline, timed_call
from bot.upstream._transport import McpClient

logger = logging.getLogger(__name__)

_DOCUMENT = ModelCodec(Document)
#: pages kept in this process after a fetch or a read (see the module's docstring)
RECENT_PAGES = 32
RECENT_CHARS = 2_000_000
RECENT_SECONDS = 60.0


class DocumentFetcher:
    def __init__(
        self,
        dk: McpClient,
        store: Store,
        metrics: Metrics,
        *,
        ttl: float,
        timeout: float,
        behind: WriteBehind | None = None,
    ) -> None:
        self._dk = dk
        self._behind = behind
        #: name -> (until when, page); the quarter rule keeps one huge page from pushing
        #: every other one out
        self._recent: SizedLru[str, tuple[float, Document]] = SizedLru(
            max_entries=RECENT_PAGES,
            max_size=RECENT_CHARS,
            size_of=lambda kept: len(kept[1].content),
        )
        self._now = time.monotonic
        self._store = store
        self._metrics = metrics
        self._ttl = ttl
        self._timeout = timeout
        self._flights: SingleFlight[dict[str, Document]] = SingleFlight()
        self._assumed: DkTools | None = None

    async def aclose(self) -> None:
        """Stops the fetches no caller waits for any more (see `SingleFlight.cancel`)."""
        await self._flights.cancel()

    async def tools(self) -> DkTools:
        if self._assumed is not None:
            return self._assumed
        try:
            return DkTools.from_names([t.name for t in await self._dk.list_tools()])
        except ProtocolError:
            # a server that cannot list its tools may still answer calls: assume today's
            # names, and do not ask again on every call
            logger.warning("tools/list failed on %s; assuming the usual tool names", self._dk.url)
            self._assumed = DkTools()
            return self._assumed

    async def get(self, names: list[str], *, read_store: bool = True) -> dict[str, Document]:
        """Documents by name (names valid and unique), from the cache or fetched.
        `read_store=False`: the store was just found not to have them (their titles were
        missing, and a page and its title are kept together): fetch without looking."""
        found = self._from_recent(names)
        for _ in found:
            self._metrics.cache("document", True)
        unread = [name for name in names if name not in found]
        if unread and read_store:
            cached_docs = await self._store.get_many(
                [keys.DOC.key(name) for name in unread], _DOCUMENT
            )
            for name, cached in zip(unread, cached_docs, strict=True):
                self._metrics.cache("document", cached is not None)
                if cached is not None:
                    found[name] = cached
                    self._keep_recent(name, cached)
        missing = [n for n in names if n not in found]
        if missing:
            key = "\n".join(missing)
            found.update(await self._flights.run(key, lambda: self._fetch(missing)))
        return found

    async def titles(self, names: list[str]) -> dict[str, str]:
        """Titles of the documents that could be had in time; never fails the caller."""
        titles = {name: doc.title for name, doc in self._from_recent(names).items() if doc.title}
        missing = []
        unread = [name for name in names if name not in titles]
        cached_titles = (
            await self._store.get_many([keys.TITLE.key(name) for name in unread], TEXT)
            if unread
            else []
        )
        for name, title in zip(unread, cached_titles, strict=True):
            self._metrics.cache("title", title is not None)
            if title is None:
                missing.append(name)
            elif title:  # "": the page is known to have no title
                titles[name] = title
        if not missing:
            return titles
        try:
            async with asyncio.timeout(self._budget()):
                documents = await self.get(missing, read_store=False)
        except (GdocsError, TimeoutError) as exc:
            # titles are a nicety: the answer goes out with titles made from the URLs
            logger.info("titles unavailable (%s); deriving them from URLs", exc or "timeout")
            return titles
        titles.update({name: doc.title for name, doc in documents.items() if doc.title})
        return titles

    def _budget(self) -> float:
        end = deadline.get()
        if end is None:
            return self._timeout
        # leave a fifth of what is left so this timeout fires before the operation's own
        return max(0.0, (end - asyncio.get_running_loop().time()) * 0.8)

    async def _fetch(self, names: list[str]) -> dict[str, Document]:
        tools = await self.tools()
        if tools.get_many is not None:
            batches = [
                names[i : i + MAX_NAMES_PER_CALL] for i in range(0, len(names), MAX_NAMES_PER_CALL)
            ]
            parts = await asyncio.gather(*(self._get_batch(tools.get_many, b) for b in batches))
            documents = [doc for part in parts for doc in part]
        elif tools.get_one is not None:
            documents = list(
                await asyncio.gather(*(self._get_one(tools.get_one, n) for n in names))
            )
        else:
            raise ProtocolError(facts=ErrorFacts(Reason.NO_FETCH_TOOL))
        result = {
            name: self._document(name, out) for name, out in zip(names, documents, strict=True)
        }
        writes: list[Op] = []  # the documents and their titles: one store write
        for name, doc in result.items():
            self._keep_recent(name, doc)
            writes.append(Op.set(keys.DOC.key(name), doc, _DOCUMENT, self._ttl))
            # kept even when empty: a title that is missing means the page is not kept
            writes.append(Op.set(keys.TITLE.key(name), doc.title, TEXT, self._ttl))
        if self._behind is not None:
            self._behind.add(writes)
        elif writes:
            await self._store.batch(writes)
        return result

    def _from_recent(self, names: list[str]) -> dict[str, Document]:
        now, found = self._now(), {}
        for name in names:
            kept = self._recent.get(name, refresh=False)  # pages go in the order they came
            if kept is not None and kept[0] > now:
                found[name] = kept[1]
        return found

    def _keep_recent(self, name: str, doc: Document) -> None:
        self._recent.put(name, (self._now() + min(RECENT_SECONDS, self._ttl), doc))

    async def _get_batch(self, tool: str, names: list[str]) -> list[DocumentOutput]:
        data = await timed_call(
            self._dk, self._metrics, tool, GetDocumentsInput(names=names).arguments()
        )
        out = parse_output(GetDocumentsOutput, data, server=self._dk.server.key, tool=tool)
        by_name = {doc.name: doc for doc in out.documents}
        if all(name in by_name for name in names):
            return [by_name[name] for name in names]
        if len(out.documents) == len(names):
            return list(out.documents)  # canonical names differ from ours; order is the contract
        missing = next(name for name in names if name not in by_name)
        raise NotFound(facts=ErrorFacts(Reason.NOT_FOUND, server=self._dk.server.key, name=missing))

    async def _get_one(self, tool: str, name: str) -> DocumentOutput:
        data = await timed_call(
            self._dk, self._metrics, tool, GetDocumentInput(name=name).arguments()
        )
        return parse_document(data, server=self._dk.server.key, tool=tool)

    @staticmethod
    def _document(name: str, out: DocumentOutput) -> Document:
        uri = out.uri or uri_for_name(name)
        return Document(
            name=name,
            uri=uri,
            title=out.title or title_from_uri(uri),
            description=out.description,
            content=out.content,
        )
