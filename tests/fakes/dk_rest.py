"""A loopback fake of Developer Knowledge's REST face, speaking Google's own schema.

Every response body is written by Google's generated types (`google.developer_knowledge_v1`,
test extra only), so field names, defaults left out, enums as names, timestamps in RFC 3339
are what the real service sends, not what the bot expects. Routes:

- `POST /v1:answerQuery` {query, filter?}
- `GET /v1/documents:searchDocumentChunks` ?query&pageSize&pageToken&filter
- `GET /v1/documents:batchGet` ?names=…&names=…&view
- `GET /v1/documents/{name=**}` ?view

The corpus is in memory (`add_document`); an answer is configured per query (`answers`) or
built from the corpus. `filter` is honoured for `data_source = "x" OR data_source = "y"`;
anything else is refused with 400 INVALID_ARGUMENT, as Google refuses a bad filter. Each
request is recorded (`requests`); faults are taken one request at a time (`faults`, with
`Fault.tool` naming a route: answerQuery, searchDocumentChunks, batchGet, get); `delays`
slows a route's served calls, after the quota counted them as Google does; `quota` enforces
the answer quota and `search_quota` the search units (each answer takes one too) with
Google's 429 JSON.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import web
from google.developer_knowledge_v1 import types

from tests.fakes.mcp_servers import Fault, google_error
from tests.fakes.quota import QuotaEnforcer
from tests.fakes.serving import ThreadedServer

ROUTES = ("answerQuery", "searchDocumentChunks", "batchGet", "get")
_TERM = re.compile(r'\s*data_source\s*=\s*"([^"\\]*)"\s*')
_DEFAULT_TIME = datetime(2026, 10, 12, 8, 30, tzinfo=UTC)


def to_json(message: Any) -> str:
    """A generated message as the service sends it: defaults left out, enums by name."""
    return str(
        type(message).to_json(
            message,
            use_integers_for_enums=False,
            always_print_fields_with_no_presence=False,
            indent=None,
        )
    )


@dataclass
class RestAnswer:
    """A configured answer: `citations` are (start, end, reference indexes), UTF-8 byte
    offsets of `text` as Google sends them; `references` are document names (repeats allowed,
    as Google sends one reference per chunk)."""

    text: str
    citations: list[tuple[int, int, list[int]]] = field(default_factory=list)
    references: list[str] = field(default_factory=list)


@dataclass
class RecordedRequest:
    route: str
    method: str
    path: str
    #: query parameters, each with all its values (`names` repeats)
    params: dict[str, list[str]]
    #: the JSON body of a POST
    body: dict[str, Any]
    #: lower-case names
    headers: dict[str, str]

    @property
    def filter(self) -> str | None:
        return self._field("filter")

    @property
    def query(self) -> str | None:
        return self._field("query")

    def _field(self, name: str) -> str | None:
        """From the POST body, else the first query parameter."""
        if name in self.body:
            return str(self.body[name])
        values = self.params.get(name)
        return values[0] if values else None


class BadFilter(ValueError):
    pass


def parse_filter(text: str) -> set[str] | None:
    """The data sources a filter admits (None: all); BadFilter for what the fake can't read."""
    if not text.strip():
        return None
    if len(text) > 500:
        raise BadFilter("filter is longer than 500 characters")
    hosts = set()
    for term in text.split(" OR "):
        match = _TERM.fullmatch(term)
        if match is None:
            raise BadFilter(f"Invalid filter: {text!r}")
        hosts.add(match.group(1))
    return hosts


class FakeDeveloperKnowledgeRest:
    def __init__(self) -> None:
        #: name -> Document fields (snake_case, as the generated type takes them)
        self.documents: dict[str, dict[str, Any]] = {}
        #: query -> answer; other queries get one built from the corpus
        self.answers: dict[str, RestAnswer] = {}
        self.requests: list[RecordedRequest] = []
        self.faults: deque[Fault] = deque()
        #: seconds each route takes (e.g. a slow answerQuery beside a fast search)
        self.delays: dict[str, float] = {}
        #: answerQuery waits until this is set (a held answer)
        self.answer_gate: threading.Event | None = None
        self.api_key: str | None = None
        self.bearer: str | None = None
        #: answer generation quota (answerQuery), and search units (search and answerQuery)
        self.quota: QuotaEnforcer | None = None
        self.search_quota: QuotaEnforcer | None = None
        app = web.Application()
        app.router.add_post("/v1:answerQuery", self._route("answerQuery", self._answer_body))
        search = self._route("searchDocumentChunks", self._search_body)
        app.router.add_get("/v1/documents:searchDocumentChunks", search)
        app.router.add_get("/v1/documents:batchGet", self._route("batchGet", self._batch_get_body))
        app.router.add_get("/v1/{name:documents/.+}", self._route("get", self._get_body))
        self._server = ThreadedServer(app)

    # --- setting it up ---------------------------------------------------------------------
    def add_document(
        self,
        name: str,
        title: str,
        content: str,
        *,
        data_source: str | None = None,
        update_time: datetime = _DEFAULT_TIME,
        description: str = "",
    ) -> None:
        """A page; its uri, data source (the host) and size follow from the name and content."""
        path = name.removeprefix("documents/")
        self.documents[name] = {
            "name": name,
            "uri": "https://" + path,
            "title": title,
            "content": content,
            "description": description,
            "data_source": data_source or path.split("/", 1)[0],
            "update_time": update_time,
            "content_length_bytes": len(content.encode()),
        }

    def start(self) -> FakeDeveloperKnowledgeRest:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    @property
    def url(self) -> str:
        """The base, as DEVELOPER_KNOWLEDGE_REST_URL takes it."""
        return f"{self._server.base_url}/v1"

    # --- what tests ask ----------------------------------------------------------------------
    def requests_for(self, route: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.route == route]

    # --- serving -----------------------------------------------------------------------------
    def _route(
        self, route: str, build: Callable[[RecordedRequest], str]
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def serve(request: web.Request) -> web.StreamResponse:
            return await self._serve(route, request, build)

        return serve

    async def _serve(
        self, route: str, request: web.Request, build: Callable[[RecordedRequest], str]
    ) -> web.StreamResponse:
        body: Any = {}
        if request.method == "POST":
            try:
                body = await request.json()
            except ValueError:
                body = {}
        params: dict[str, list[str]] = {}
        for key, value in request.query.items():
            params.setdefault(key, []).append(value)
        headers = {k.lower(): v for k, v in request.headers.items()}
        body = body if isinstance(body, dict) else {}
        record = RecordedRequest(route, request.method, request.path, params, body, headers)
        self.requests.append(record)
        # Google counts a call against its quota when it arrives, before working on it
        fault = self._take_fault(route) or self._refused(route, headers)
        if fault is not None:
            if fault.delay:
                await asyncio.sleep(fault.delay)
            return _error_response(fault)
        if delay := self.delays.get(route, 0.0):
            await asyncio.sleep(delay)
        if route == "answerQuery" and self.answer_gate is not None:
            await asyncio.to_thread(self.answer_gate.wait, 30.0)
        try:
            text = build(record)
        except _Refusal as refusal:
            return _error_response(refusal.fault)
        return web.Response(text=text, content_type="application/json")

    def _take_fault(self, route: str) -> Fault | None:
        for i, fault in enumerate(self.faults):
            if fault.tool is None or fault.tool == route:
                del self.faults[i]
                return fault
        return None

    def _refused(self, route: str, headers: dict[str, str]) -> Fault | None:
        key_ok = self.api_key is None or headers.get("x-goog-api-key") == self.api_key
        bearer_ok = self.bearer is not None and headers.get("authorization") == (
            f"Bearer {self.bearer}"
        )
        if not key_ok and not bearer_ok:
            return google_error(
                400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."
            )
        if self.bearer is not None and self.api_key is None and not bearer_ok:
            return google_error(
                401, "UNAUTHENTICATED", "Request had invalid authentication credentials."
            )
        if route == "answerQuery" and self.quota is not None:
            refusal = self.quota.admit()
            if refusal is not None:
                return Fault(status=429, body=self.quota.http_body(refusal))
        if route in ("answerQuery", "searchDocumentChunks") and self.search_quota is not None:
            refusal = self.search_quota.admit()
            if refusal is not None:
                error = self.search_quota.google_error(refusal)
                error["error"]["message"] = error["error"]["message"].replace(
                    "Answer query", "Search"
                )
                error["error"]["details"][0]["metadata"]["quota_limit"] = (
                    "SearchRequestsPerMinutePerProject"
                )
                return Fault(status=429, body=json.dumps(error).encode())
        return None

    # --- bodies ------------------------------------------------------------------------------
    def _document(self, name: str, view: str = "DOCUMENT_VIEW_CONTENT") -> types.Document:
        fields = dict(self.documents[name])
        if view == "DOCUMENT_VIEW_BASIC":
            fields.pop("content")
        return types.Document(**fields, view=types.DocumentView[view])

    def _chunk(self, name: str, score: float = 0.0) -> types.DocumentChunk:
        return types.DocumentChunk(
            parent=name,
            content=self.documents[name]["content"][:300],
            document=self._document(name, "DOCUMENT_VIEW_BASIC"),
            relevance_score=score,
        )

    def _matching(self, query: str, filter_text: str | None) -> list[str]:
        try:
            hosts = parse_filter(filter_text or "")
        except BadFilter as exc:
            raise _Refusal(google_error(400, "INVALID_ARGUMENT", str(exc))) from None
        words = [w for w in query.lower().split() if w]
        found = []
        for name, doc in self.documents.items():
            if hosts is not None and doc["data_source"] not in hosts:
                continue
            text = (doc["title"] + " " + doc["content"]).lower()
            if not words or any(w in text for w in words):
                found.append(name)
        return found

    def _answer_body(self, record: RecordedRequest) -> str:
        query = record.query or ""
        if not query:
            raise _Refusal(google_error(400, "INVALID_ARGUMENT", "query is required"))
        names = self._matching(query, record.filter)
        configured = self.answers.get(query)
        if configured is None:
            configured = _built_answer(query, names[:2])
        answer = types.Answer(
            answer_text=configured.text,
            citations=[
                types.Answer.AnswerCitation(
                    start_index=start,
                    end_index=end,
                    sources=[types.Answer.CitationSource(reference_index=i) for i in refs],
                )
                for start, end, refs in configured.citations
            ],
            references=[
                types.Answer.AnswerReference(
                    document_reference=types.Answer.DocumentReference(
                        document_chunk=self._chunk(name)
                    )
                )
                for name in configured.references
                if name in self.documents
            ],
        )
        return to_json(types.AnswerQueryResponse(answer=answer))

    def _search_body(self, record: RecordedRequest) -> str:
        query = record.query or ""
        if not query or len(query) > 500:
            raise _Refusal(google_error(400, "INVALID_ARGUMENT", "query must be 1-500 chars"))
        size = int(record.params.get("pageSize", ["5"])[0] or 5)
        if not 0 <= size <= 100:
            raise _Refusal(google_error(400, "INVALID_ARGUMENT", "page_size must be <= 100"))
        names = self._matching(query, record.filter)[: size or 5]
        results = [self._chunk(n, round(1.0 - i / 10, 2)) for i, n in enumerate(names)]
        return to_json(types.SearchDocumentChunksResponse(results=results))

    def _view(self, record: RecordedRequest) -> str:
        view = record.params.get("view", ["DOCUMENT_VIEW_CONTENT"])[0]
        if view not in types.DocumentView.__members__ or view == "DOCUMENT_VIEW_UNSPECIFIED":
            view = "DOCUMENT_VIEW_CONTENT"
        return view

    def _batch_get_body(self, record: RecordedRequest) -> str:
        names = record.params.get("names", [])
        if not names or len(names) > 20:
            raise _Refusal(google_error(400, "INVALID_ARGUMENT", "give 1 to 20 names"))
        for name in names:
            if name not in self.documents:
                raise _Refusal(google_error(404, "NOT_FOUND", f"Document {name} not found."))
        view = self._view(record)
        documents = [self._document(n, view) for n in names]
        return to_json(types.BatchGetDocumentsResponse(documents=documents))

    def _get_body(self, record: RecordedRequest) -> str:
        name = record.path.removeprefix("/v1/")
        if name not in self.documents:
            raise _Refusal(google_error(404, "NOT_FOUND", f"Document {name} not found."))
        return to_json(self._document(name, self._view(record)))


class _Refusal(Exception):
    def __init__(self, fault: Fault) -> None:
        super().__init__(fault.status)
        self.fault = fault


def _error_response(fault: Fault) -> web.Response:
    return web.Response(
        status=fault.status, body=fault.body, content_type=fault.content_type, headers=fault.headers
    )


def _built_answer(query: str, names: list[str]) -> RestAnswer:
    """One sentence per page, each cited to its page (byte offsets of the UTF-8 text)."""
    if not names:
        return RestAnswer("I could not find that in the documentation.")
    text, citations = "", []
    for i in range(len(names)):
        sentence = f"Step {i + 1} for {query} is on this page."
        start = len((text + (" " if text else "")).encode())
        text += (" " if text else "") + sentence
        citations.append((start, len(text.encode()), [i]))
    return RestAnswer(text, citations, list(names))
