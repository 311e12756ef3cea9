"""The REST backend (DEVELOPER_KNOWLEDGE_API=rest) against the loopback fake that speaks
Google's schema: cited byte spans, page dates and sizes, product scope as `filter`, the quota
fallback, retries, credentials kept out of errors and logs, and early sources."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import pytest

from bot.errors import AuthError, InvalidInput, NotFound, Unavailable
from bot.models import Citation, SearchHit
from bot.store import Codec, MemoryStore, StoreError
from tests.fakes.dk_rest import FakeDeveloperKnowledgeRest, RestAnswer
from tests.fakes.mcp_servers import Fault, google_error
from tests.fakes.oauth_token import FakeTokenServer
from tests.fakes.quota import QuotaEnforcer
from tests.fakes.upstream import service_for, settings_for

BUCKETS = "documents/docs.cloud.google.com/storage/docs/creating-buckets"
AUTH = "documents/firebase.google.com/docs/auth"
RULES = "documents/firebase.google.com/docs/rules"
CHANGED = datetime(2026, 10, 12, 8, 30, tzinfo=UTC)
_V = TypeVar("_V")


@pytest.fixture
def rest() -> Iterator[FakeDeveloperKnowledgeRest]:
    server = FakeDeveloperKnowledgeRest()
    server.api_key = "test-key"
    server.add_document(
        BUCKETS, "Create buckets", "# Create buckets\n\nUse `gcloud storage buckets create`."
    )
    server.add_document(AUTH, "Firebase Authentication", "Sign in users with Firebase buckets.")
    server.add_document(
        RULES, "Security Rules", "Rules guard buckets and users.", update_time=CHANGED
    )
    server.start()
    yield server
    server.stop()


async def test_answer_keeps_googles_byte_spans_on_multibyte_text_and_remaps_references(
    rest: FakeDeveloperKnowledgeRest,
) -> None:
    """Accents, CJK and emoji: the spans stay Google's UTF-8 byte offsets; repeated references
    collapse to one page each and the spans point at the deduplicated list; a span past the
    text or at a reference that is not there is dropped."""
    first, second = "Créez un bucket 日本語.", " Then deploy 🚀."
    text = first + second
    a, b = len(first.encode()), len(text.encode())
    rest.answers["how do I make a bucket?"] = RestAnswer(
        text,
        citations=[(0, a, [2]), (a, b, [1, 0, 2]), (0, b + 5, [0]), (0, a, [7])],
        references=[BUCKETS, AUTH, BUCKETS],
    )
    async with service_for(settings_for(rest=rest, verify_answers=False)) as service:
        answer = await service.ask("how do I make a bucket?")
    assert answer.text == text
    assert [r.name for r in answer.references] == [BUCKETS, AUTH]
    assert answer.references[1].title == "Firebase Authentication"
    assert answer.citations == (
        Citation(start=0, end=a, references=(0,)),
        Citation(start=a, end=b, references=(1, 0)),
    )
    assert answer.tool == "answer_query"
    assert not rest.requests_for("batchGet")  # titles came with the references


async def test_search_gives_each_page_its_update_time_and_size(
    rest: FakeDeveloperKnowledgeRest,
) -> None:
    async with service_for(settings_for(rest=rest)) as service:
        found = await service.search("rules")
    (hit,) = found.hits
    assert hit == SearchHit(
        title="Security Rules",
        uri="https://firebase.google.com/docs/rules",
        snippet="Rules guard buckets and users.",
        name=RULES,
        updated=CHANGED,
        size=len(b"Rules guard buckets and users."),
    )
    assert not rest.requests_for("batchGet")  # no title fetch


async def test_a_scope_is_the_filter_of_answer_and_search_and_keys_the_cache_apart(
    rest: FakeDeveloperKnowledgeRest,
) -> None:
    firebase = ("firebase.google.com",)
    question = "how do I protect buckets for users?"
    async with service_for(settings_for(rest=rest, verify_answers=False)) as service:
        scoped = await service.ask(question, scope=firebase)
        hits = await service.search("buckets", scope=firebase)
        unscoped = await service.ask(question)
        again = await service.ask(question, scope=firebase)
    flt = 'data_source = "firebase.google.com"'
    assert [r.filter for r in rest.requests_for("answerQuery")] == [flt, None]
    assert [r.filter for r in rest.requests_for("searchDocumentChunks")] == [flt]
    assert {r.name for r in scoped.references} == {AUTH, RULES}
    assert {h.name for h in hits.hits} == {AUTH, RULES}
    assert scoped.scope == firebase
    assert hits.scope == firebase
    assert unscoped.scope == ()
    assert not unscoped.cached
    assert BUCKETS in {r.name for r in unscoped.references}
    assert again.cached
    assert again.scope == firebase


async def test_a_429_with_googles_json_falls_back_to_search_and_pauses_the_ledger(
    rest: FakeDeveloperKnowledgeRest,
) -> None:
    rest.quota = QuotaEnforcer(per_minute=1)
    rest.quota.admit(who="another app")  # the project's minute is spent elsewhere
    async with service_for(settings_for(rest=rest)) as service:
        answer = await service.ask("how do I create a bucket?")
        state = await service.quota.state(None)
    assert answer.kind == "search"
    assert answer.fallback is not None
    assert answer.fallback.reason == "answer_quota"
    assert answer.fallback.limit == "minute"
    assert answer.fallback.limit_value == 1  # Google's number, from its ErrorInfo
    assert state.pause is not None
    assert state.pause.kind == "minute"
    assert len(rest.requests_for("searchDocumentChunks")) == 1


async def test_503_is_retried(rest: FakeDeveloperKnowledgeRest) -> None:
    rest.faults.append(google_error(503, "UNAVAILABLE", "try again"))
    rest.faults.append(Fault(status=504, body=b"gateway"))
    async with service_for(settings_for(rest=rest)) as service:
        found = await service.search("buckets")
    assert found.hits
    assert len(rest.requests_for("searchDocumentChunks")) == 3


async def test_unreachable_rest_names_its_url_setting() -> None:
    settings = settings_for(
        developer_knowledge_api="rest", developer_knowledge_rest_url="http://127.0.0.1:9/v1"
    )
    async with service_for(settings) as service:
        with pytest.raises(Unavailable) as raised:
            await service.search("buckets")
        (status, _) = await service.status()
    assert raised.value.facts is not None
    assert raised.value.facts.url_setting == "DEVELOPER_KNOWLEDGE_REST_URL"
    assert not status.ok
    assert status.url == "http://127.0.0.1:9/v1"


async def test_the_api_key_is_sent_as_a_header_and_never_said(
    rest: FakeDeveloperKnowledgeRest, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with service_for(settings_for(rest=rest)) as service:
        await service.search("buckets")
    assert rest.requests[-1].headers["x-goog-api-key"] == "test-key"
    secret = "wrong-key-0123456789"
    rest.faults.append(
        google_error(400, "INVALID_ARGUMENT", f"API key not valid: {secret}. Pass a valid key.")
    )
    async with service_for(settings_for(rest=rest, google_api_key=secret)) as service:
        with pytest.raises(AuthError) as raised:
            await service.search("rules")
    assert "GOOGLE_API_KEY" in str(raised.value) or raised.value.setting == "GOOGLE_API_KEY"
    assert secret not in str(raised.value)
    assert secret not in repr(raised.value.facts)
    assert secret not in caplog.text
    assert all(secret not in r.params.get("key", [""])[0] for r in rest.requests)


async def test_documents_come_twenty_at_a_time_and_a_missing_one_is_not_found(
    rest: FakeDeveloperKnowledgeRest,
) -> None:
    for i in range(23):
        rest.add_document(f"documents/web.dev/p{i}", f"Page {i}", f"content {i}")
    names = [f"documents/web.dev/p{i}" for i in range(23)]
    async with service_for(settings_for(rest=rest)) as service:
        docs = await service.docs(names)
        with pytest.raises(NotFound):
            await service.docs(["documents/web.dev/none"])
    assert [d.title for d in docs] == [f"Page {i}" for i in range(23)]
    sizes = sorted(len(r.params["names"]) for r in rest.requests_for("batchGet")[:2])
    assert sizes == [3, 20]


async def test_status_says_rest_and_asks_one_page_not_the_search_quota(
    rest: FakeDeveloperKnowledgeRest,
) -> None:
    async with service_for(settings_for(rest=rest)) as service:
        (status, _) = await service.status()
        assert service.backend == "rest"
        assert service.recently_healthy()
    assert status.ok
    assert status.detail == "REST v1"
    assert status.url == rest.url
    (probe,) = rest.requests
    assert probe.route == "get"
    assert probe.params["view"] == ["DOCUMENT_VIEW_BASIC"]


async def test_on_mcp_a_scope_is_refused_with_the_setting_to_change() -> None:
    async with service_for(settings_for()) as service:
        assert service.backend == "mcp"
        with pytest.raises(InvalidInput) as raised:
            await service.search("buckets", scope=("firebase.google.com",))
    assert raised.value.setting == "DEVELOPER_KNOWLEDGE_API"


# --- early sources -------------------------------------------------------------------------
async def test_early_sources_come_before_a_slow_answer(rest: FakeDeveloperKnowledgeRest) -> None:
    rest.delays["answerQuery"] = 0.5
    shown: list[tuple[tuple[SearchHit, ...], bool]] = []
    async with service_for(settings_for(rest=rest, verify_answers=False)) as service:
        asking = asyncio.ensure_future(
            service.ask("how do I guard buckets?", on_sources=lambda h: _record(shown, h, asking))
        )
        answer = await asking
    assert answer.kind == "answer"
    ((hits, answered_then),) = shown
    assert {h.name for h in hits} >= {RULES}
    assert not answered_then


async def _record(
    shown: list[tuple[tuple[SearchHit, ...], bool]],
    hits: tuple[SearchHit, ...],
    asking: asyncio.Future[object],
) -> None:
    shown.append((hits, asking.done()))


async def test_no_early_sources_for_a_cached_answer(rest: FakeDeveloperKnowledgeRest) -> None:
    shown: list[object] = []

    async def on_sources(hits: tuple[SearchHit, ...]) -> None:
        shown.append(hits)

    async with service_for(settings_for(rest=rest, verify_answers=False)) as service:
        await service.ask("how do I guard buckets?")
        searched = len(rest.requests_for("searchDocumentChunks"))
        again = await service.ask("how do I guard buckets?", on_sources=on_sources)
    assert again.cached
    assert not shown
    assert len(rest.requests_for("searchDocumentChunks")) == searched == 0


async def test_a_failed_early_search_neither_fails_nor_shows(
    rest: FakeDeveloperKnowledgeRest,
) -> None:
    refused = google_error(400, "INVALID_ARGUMENT", "Request contains an invalid argument.")
    rest.faults.append(dataclasses.replace(refused, tool="searchDocumentChunks"))
    shown: list[object] = []

    async def on_sources(hits: tuple[SearchHit, ...]) -> None:
        shown.append(hits)

    rest.delays["answerQuery"] = 0.2
    async with service_for(settings_for(rest=rest, verify_answers=False)) as service:
        answer = await service.ask("how do I guard buckets?", on_sources=on_sources)
    assert answer.kind == "answer"
    assert not shown


class _SearchesUnreadable(MemoryStore):
    """A store that fails reading kept searches (a hiccup only the early search meets)."""

    async def get(self, key: str, codec: Codec[_V]) -> _V | None:
        if key.startswith("search:"):
            raise StoreError("search keys unreadable")
        return await super().get(key, codec)


async def test_an_early_search_the_store_fails_neither_fails_nor_shows(
    rest: FakeDeveloperKnowledgeRest,
) -> None:
    """The early search is a nicety: a store error in it (not a GdocsError) costs the answer
    nothing either."""
    shown: list[object] = []

    async def on_sources(hits: tuple[SearchHit, ...]) -> None:
        shown.append(hits)

    rest.delays["answerQuery"] = 0.2
    settings = settings_for(rest=rest, verify_answers=False)
    async with service_for(settings, store=_SearchesUnreadable()) as service:
        answer = await service.ask("how do I guard buckets?", on_sources=on_sources)
    assert answer.kind == "answer"
    assert not shown


async def test_a_quota_fallback_reuses_the_early_search(rest: FakeDeveloperKnowledgeRest) -> None:
    """The early search ran while answerQuery waited to refuse: the fallback search is it."""
    body = QuotaEnforcer(per_minute=1)
    body.admit(who="another app")
    refusal = body.admit()
    assert refusal is not None
    rest.faults.append(
        Fault(status=429, body=body.http_body(refusal), delay=0.3, tool="answerQuery")
    )
    shown: list[object] = []

    async def on_sources(hits: tuple[SearchHit, ...]) -> None:
        shown.append(hits)

    async with service_for(settings_for(rest=rest)) as service:
        answer = await service.ask("how do I guard buckets?", on_sources=on_sources)
    assert answer.fallback is not None
    assert answer.hits
    assert len(shown) == 1
    assert len(rest.requests_for("searchDocumentChunks")) == 1


async def test_the_early_search_never_takes_the_last_search_units_of_the_minute(
    rest: FakeDeveloperKnowledgeRest,
) -> None:
    """5 units a minute (a fifth kept back): two questions take an answer and an early search
    each; the third gets no early search, so Google never refuses a search."""
    rest.search_quota = QuotaEnforcer(per_minute=5)
    rest.delays["answerQuery"] = 0.2
    settings = settings_for(rest=rest, verify_answers=False, search_quota_per_minute=5)
    async with service_for(settings) as service:
        for question in ("how do I guard buckets?", "how do users sign in?", "how do I rule?"):
            await service.ask(question, on_sources=_ignore)
    assert len(rest.requests_for("searchDocumentChunks")) == 2
    assert len(rest.requests_for("answerQuery")) == 3
    assert not rest.search_quota.refused


async def _ignore(hits: tuple[SearchHit, ...]) -> None:
    pass


async def test_int64_as_a_string_offsets_and_unknown_fields_are_read(
    rest: FakeDeveloperKnowledgeRest,
) -> None:
    """proto3 JSON sends int64 as a string and times with any offset; fields the bot does
    not know (Google adds them) are ignored, never a failure."""
    doc = {
        "name": RULES,
        "uri": "https://firebase.google.com/docs/rules",
        "title": "Security Rules",
        "updateTime": "2026-10-12T10:30:00.123456+02:00",
        "contentLengthBytes": "123456789012",
        "newField": {"x": 1},
    }
    chunk = {"parent": RULES, "content": "Rules.", "document": doc, "relevanceScore": 0.9}
    body = json.dumps({"results": [chunk], "nextPageToken": "t", "extra": True}).encode()
    rest.faults.append(Fault(status=200, body=body, tool="searchDocumentChunks"))
    async with service_for(settings_for(rest=rest)) as service:
        (hit,) = (await service.search("rules")).hits
    assert hit.size == 123456789012
    assert hit.updated == datetime(2026, 10, 12, 8, 30, 0, 123456, tzinfo=UTC)
    assert hit.updated.tzinfo == UTC


async def test_without_a_key_rest_calls_carry_the_oauth_token_and_quota_project(
    rest: FakeDeveloperKnowledgeRest, tmp_path: Path
) -> None:
    tokens = FakeTokenServer().start()
    tokens.tokens.append("dk-token")
    rest.api_key, rest.bearer = None, "dk-token"
    settings = settings_for(
        rest=rest,
        google_api_key=None,
        google_application_credentials=tokens.service_account_file(tmp_path),
        google_cloud_project="test-project",
    )
    try:
        async with service_for(settings) as service:
            found = await service.search("rules")
    finally:
        tokens.stop()
    assert found.hits
    (request,) = rest.requests
    assert request.headers["authorization"] == "Bearer dk-token"
    assert request.headers["x-goog-user-project"] == "test-project"
    assert "x-goog-api-key" not in request.headers


async def test_replicas_share_the_minutes_search_units(rest: FakeDeveloperKnowledgeRest) -> None:
    """One replica's searches count on another's: with 5 a minute, after four units spent
    elsewhere this replica's question goes without its early search."""
    store = MemoryStore()
    settings = settings_for(rest=rest, verify_answers=False, search_quota_per_minute=5)
    async with service_for(settings, store=store) as other:
        for query in ("buckets", "rules", "users", "guard"):
            await other.search(query)
    async with service_for(settings, store=store) as service:
        await service.ask("how do I sign in users?", on_sources=_ignore)
    assert len(rest.requests_for("searchDocumentChunks")) == 4
