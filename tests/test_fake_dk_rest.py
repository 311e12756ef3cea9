"""The REST fake speaks Google's schema: its JSON parses back with Google's generated types."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest
from google.developer_knowledge_v1 import types

from tests.fakes.dk_rest import FakeDeveloperKnowledgeRest, RestAnswer
from tests.fakes.mcp_servers import google_error
from tests.fakes.quota import QuotaEnforcer


@pytest.fixture
def fake() -> Iterator[FakeDeveloperKnowledgeRest]:
    server = FakeDeveloperKnowledgeRest()
    server.add_document(
        "documents/firebase.google.com/docs/auth",
        "Firebase Auth",
        "Sign in users with Firebase.",
        update_time=datetime(2026, 10, 12, tzinfo=UTC),
    )
    server.add_document(
        "documents/developer.android.com/guide", "Android guide", "Build apps for Android users."
    )
    server.start()
    yield server
    server.stop()


def test_answer_parses_back_with_googles_types_and_keeps_byte_spans(
    fake: FakeDeveloperKnowledgeRest,
) -> None:
    text = "Café users sign in. 日本語 too."
    fake.answers["sign in"] = RestAnswer(
        text,
        [(0, len("Café users sign in.".encode()), [0])],
        ["documents/firebase.google.com/docs/auth"],
    )
    response = httpx.post(f"{fake.url}:answerQuery", json={"query": "sign in"})
    assert response.status_code == 200
    parsed = types.AnswerQueryResponse.from_json(response.text)
    assert parsed.answer.answer_text == text
    assert parsed.answer.citations[0].end_index == 20  # bytes: é is two
    chunk = parsed.answer.references[0].document_reference.document_chunk
    assert chunk.parent == "documents/firebase.google.com/docs/auth"
    assert chunk.document.title == "Firebase Auth"
    assert chunk.document.data_source == "firebase.google.com"
    raw = json.loads(response.text)["answer"]["references"][0]["documentReference"]
    assert raw["documentChunk"]["document"]["updateTime"] == "2026-10-12T00:00:00Z"


def test_search_filters_by_data_source_and_records_it(fake: FakeDeveloperKnowledgeRest) -> None:
    flt = 'data_source = "firebase.google.com"'
    response = httpx.get(
        f"{fake.url}/documents:searchDocumentChunks",
        params={"query": "users", "pageSize": 5, "filter": flt},
        headers={"X-Goog-Api-Key": "k"},
    )
    parsed = types.SearchDocumentChunksResponse.from_json(response.text)
    assert [r.parent for r in parsed.results] == ["documents/firebase.google.com/docs/auth"]
    assert parsed.results[0].document.content_length_bytes == len(b"Sign in users with Firebase.")
    assert not parsed.results[0].document.content  # BASIC view
    (recorded,) = fake.requests_for("searchDocumentChunks")
    assert recorded.filter == flt
    assert recorded.headers["x-goog-api-key"] == "k"


def test_an_unreadable_filter_is_a_400_like_googles(fake: FakeDeveloperKnowledgeRest) -> None:
    response = httpx.post(
        f"{fake.url}:answerQuery", json={"query": "users", "filter": "product = firebase"}
    )
    assert response.status_code == 400
    assert response.json()["error"]["status"] == "INVALID_ARGUMENT"


def test_batch_get_and_get_give_documents_and_404_for_a_missing_one(
    fake: FakeDeveloperKnowledgeRest,
) -> None:
    names = ["documents/developer.android.com/guide", "documents/firebase.google.com/docs/auth"]
    response = httpx.get(f"{fake.url}/documents:batchGet", params={"names": names})
    parsed = types.BatchGetDocumentsResponse.from_json(response.text)
    assert [d.name for d in parsed.documents] == names
    assert parsed.documents[0].content == "Build apps for Android users."
    one = httpx.get(f"{fake.url}/{names[1]}")
    assert types.Document.from_json(one.text).uri == "https://firebase.google.com/docs/auth"
    missing = httpx.get(f"{fake.url}/documents:batchGet", params={"names": ["documents/x/y"]})
    assert missing.status_code == 404


def test_faults_quota_and_delays_per_route(fake: FakeDeveloperKnowledgeRest) -> None:
    fake.faults.append(google_error(503, "UNAVAILABLE", "try again"))
    assert httpx.post(f"{fake.url}:answerQuery", json={"query": "x"}).status_code == 503
    fake.quota = QuotaEnforcer(per_minute=1)
    assert httpx.post(f"{fake.url}:answerQuery", json={"query": "x"}).status_code == 200
    refused = httpx.post(f"{fake.url}:answerQuery", json={"query": "x"})
    assert refused.status_code == 429
    assert refused.json()["error"]["status"] == "RESOURCE_EXHAUSTED"
    search = httpx.get(f"{fake.url}/documents:searchDocumentChunks", params={"query": "x"})
    assert search.status_code == 200
