"""`gdocs-bot check` and /readyz with DEVELOPER_KNOWLEDGE_API=rest: they say which backend is in
use, whether it answers, and name DEVELOPER_KNOWLEDGE_REST_URL when it cannot be reached."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.serving.health import Readiness
from tests.fakes.dk_rest import FakeDeveloperKnowledgeRest
from tests.fakes.upstream import service_for, settings_for
from tests.test_cli import gdocs

CLOSED_REST_URL = "http://127.0.0.1:9/v1"


@pytest.fixture
def rest() -> Iterator[FakeDeveloperKnowledgeRest]:
    server = FakeDeveloperKnowledgeRest()
    server.api_key = "test-key"
    server.add_document(
        "documents/docs.cloud.google.com/storage/docs/creating-buckets",
        "Create buckets",
        "Cloud Storage buckets hold objects.",
    )
    server.start()
    yield server
    server.stop()


def _rest_env(url: str) -> dict[str, str]:
    return {
        "GOOGLE_API_KEY": "test-key",
        "DEVELOPER_KNOWLEDGE_API": "rest",
        "DEVELOPER_KNOWLEDGE_REST_URL": url,
    }


def test_check_says_the_rest_backend_answers(
    rest: FakeDeveloperKnowledgeRest, tmp_path: Path
) -> None:
    result = gdocs(tmp_path, "check", **_rest_env(rest.url))
    rows = {line.split("  ")[0]: line for line in result.stdout.splitlines()}
    assert "ok" in rows["developer knowledge"], result.stdout + result.stderr
    assert "DEVELOPER_KNOWLEDGE_API=rest" in rows["developer knowledge"]
    assert rest.url in rows["developer knowledge"]
    assert "ok" in rows["dk search"]
    assert "1 result for" in rows["dk search"]  # one page in the fake's corpus
    assert [r.route for r in rest.requests] == ["get", "searchDocumentChunks"]
    data = json.loads(gdocs(tmp_path, "check", "--json", **_rest_env(rest.url)).stdout)
    assert data["backend"] == "rest"


def test_check_names_the_rest_url_setting_it_cannot_reach(tmp_path: Path) -> None:
    result = gdocs(tmp_path, "check", **_rest_env(CLOSED_REST_URL))
    assert result.returncode == 1
    row = {line.split("  ")[0]: line for line in result.stdout.splitlines()}["developer knowledge"]
    assert "FAIL" in row
    assert f"cannot connect to {CLOSED_REST_URL} — check DEVELOPER_KNOWLEDGE_REST_URL" in row


async def test_readyz_names_the_rest_url_setting_when_it_cannot_be_reached() -> None:
    settings = settings_for(
        developer_knowledge_api="rest",
        developer_knowledge_rest_url=CLOSED_REST_URL,
        mcp_max_retries=0,
    )
    async with service_for(settings) as service:
        readiness = Readiness(service, mode="http", probe_timeout=10)
        readiness.slack_authenticated = True
        await readiness.probe()
        report = await readiness.report()
    detail = report["developer_knowledge"]["detail"]
    assert report["ready"] is False
    assert f"cannot connect to {CLOSED_REST_URL} — check DEVELOPER_KNOWLEDGE_REST_URL" in detail


async def test_readyz_is_ready_when_rest_answers(rest: FakeDeveloperKnowledgeRest) -> None:
    async with service_for(settings_for(rest=rest)) as service:
        readiness = Readiness(service, mode="http", probe_timeout=10)
        readiness.slack_authenticated = True
        await readiness.probe()
        report = await readiness.report()
    assert report["ready"] is True
    assert "answer_query" in report["developer_knowledge"]["tools"]
