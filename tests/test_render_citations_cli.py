"""`gdocs-bot ask` over REST (issue 41, item 2): the printed answer ends each cited sentence
with `[n]`, the numbered Sources below; `--json` carries Google's byte spans as they came."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.dk_rest import FakeDeveloperKnowledgeRest, RestAnswer
from tests.test_cli import gdocs

pytestmark = pytest.mark.timeout(60)

CLOUD = "documents/docs.cloud.google.com/storage/docs/creating-buckets"
AUTH = "documents/firebase.google.com/docs/auth"
QUESTION = "comment créer un bucket ?"
TEXT = "Créez le bucket avec gcloud 🪣. バケット名は一意です。Voilà."


def _span(part: str) -> tuple[int, int]:
    start = len(TEXT[: TEXT.index(part)].encode())
    return start, start + len(part.encode())


@pytest.fixture
def rest() -> Iterator[FakeDeveloperKnowledgeRest]:
    server = FakeDeveloperKnowledgeRest()
    server.api_key = "test-key"
    server.add_document(CLOUD, "Create buckets", "# Create buckets\n\nRun gcloud.")
    server.add_document(AUTH, "Firebase Auth", "# Firebase Auth\n\nUsers sign in.")
    server.answers[QUESTION] = RestAnswer(
        TEXT, [(*_span("Créez le"), [1]), (*_span("バケット"), [0, 1])], [CLOUD, AUTH]
    )
    server.start()
    yield server
    server.stop()


def _env(server: FakeDeveloperKnowledgeRest) -> dict[str, str]:
    return {
        "GOOGLE_API_KEY": "test-key",
        "DEVELOPER_KNOWLEDGE_API": "rest",
        "DEVELOPER_KNOWLEDGE_REST_URL": server.url,
    }


def test_ask_over_rest_prints_markers_and_the_spans_in_json(
    rest: FakeDeveloperKnowledgeRest, tmp_path: Path
) -> None:
    printed = gdocs(tmp_path, "ask", QUESTION, **_env(rest))
    assert printed.returncode == 0, printed.stderr
    out = printed.stdout
    assert "Créez le bucket avec gcloud 🪣.[2] バケット名は一意です。[1][2]Voilà." in out
    assert "Sources:\n1. [Create buckets](https://docs.cloud.google.com/" in out
    assert "\n2. [Firebase Auth](https://firebase.google.com/docs/auth)" in out

    as_json = gdocs(tmp_path, "ask", QUESTION, "--json", **_env(rest))
    assert as_json.returncode == 0, as_json.stderr
    answer = json.loads(as_json.stdout)
    assert answer["text"] == TEXT
    spans = [(c["start"], c["end"], c["references"]) for c in answer["citations"]]
    assert spans == [(*_span("Créez le"), [1]), (*_span("バケット"), [0, 1])]
