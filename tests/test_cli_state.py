"""`gdocs-bot check` reads the state STATE_URL names, as the installed console script: the
store (which, where, without its password, reachable or not) and answer_query's quota from
the ledger (left today, this minute, the reset), without an answer_query call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.redis_server import RedisServer
from tests.test_cli import gdocs

pytestmark = pytest.mark.timeout(90)


def _env(server: FakeDeveloperKnowledge, **more: str) -> dict[str, str]:
    return {"GOOGLE_API_KEY": "test-key", "DEVELOPER_KNOWLEDGE_MCP_URL": server.url, **more}


def _rows(stdout: str) -> dict[str, str]:
    return {line.split("  ")[0]: line for line in stdout.splitlines()}


def test_check_shows_the_default_sqlite_store_and_the_answers_left(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """After one `ask` in this directory, `check` (no STATE_URL: the default SQLite file)
    says the store is reachable and 49 of 50 answers are left, and calls no answer_query."""
    asked = gdocs(tmp_path, "ask", "how do I create a bucket?", **_env(dk_server))
    assert 0 == asked.returncode, asked.stderr
    assert 1 == len(dk_server.tool_calls("answer_query"))

    result = gdocs(tmp_path, "check", **_env(dk_server))
    rows = _rows(result.stdout)
    assert 0 == result.returncode, result.stdout + result.stderr
    assert "sqlite at sqlite:///gdocs-state.db: reachable" in rows["state store"]
    assert " ok " in rows["state store"]
    assert "49 of 50 left today, 9 of 10 free this minute" in rows["answer quota"]
    assert "resets at midnight PT" in rows["answer quota"]
    assert 1 == len(dk_server.tool_calls("answer_query"))


def test_check_json_has_the_store_and_the_quota(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """check --json: the store's state and the ledger's numbers, next to the checks."""
    dk_server.quota_exhausted = "http"  # a day 429: the day is spent until midnight Pacific
    gdocs(tmp_path, "ask", "how do I create a bucket?", **_env(dk_server))
    result = gdocs(tmp_path, "check", "--json", **_env(dk_server))
    data = json.loads(result.stdout)
    assert {"backend": "sqlite", "url": "sqlite:///gdocs-state.db", "ok": True} == {
        k: data["store"][k] for k in ("backend", "url", "ok")
    }
    assert (0, 50) == (data["quota"]["left_today"], data["quota"]["per_day"])
    assert "day" == data["quota"]["pause"]["kind"]
    assert data["quota"]["next_reset"] == data["quota"]["pause"]["until"]
    [row] = [c for c in data["checks"] if c["check"] == "answer quota"]
    assert "paused (Google says today's answers are used up)" in row["detail"]
    assert {"state store", "answer quota"} <= {c["check"] for c in data["checks"]}


def test_check_names_a_redis_store_without_its_password(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """STATE_URL with a password: the store row shows [redacted] in its place."""
    server = RedisServer(password="pw-for-check-7731").start()
    try:
        result = gdocs(tmp_path, "check", **_env(dk_server, STATE_URL=server.url))
    finally:
        server.kill()
    rows = _rows(result.stdout)
    assert 0 == result.returncode, result.stdout + result.stderr
    assert (
        f"redis at redis://:[redacted]@127.0.0.1:{server.port}/0: reachable" in rows["state store"]
    )
    assert "50 of 50 left today" in rows["answer quota"]
    assert "pw-for-check-7731" not in result.stdout + result.stderr


def test_check_fails_when_the_redis_store_does_not_answer(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """Nothing listens at STATE_URL: the store row is FAIL, the quota unknown, exit 1."""
    server = RedisServer()  # a free port, never started
    result = gdocs(tmp_path, "check", **_env(dk_server, STATE_URL=server.url))
    server.kill()
    rows = _rows(result.stdout)
    assert 1 == result.returncode
    assert "FAIL" in rows["state store"]
    assert "not answering" in rows["state store"]
    assert "FAIL" in rows["answer quota"]
    assert "unknown" in rows["answer quota"]


def test_check_and_search_in_an_empty_folder_create_no_state_file(
    dk_server: FakeDeveloperKnowledge, tmp_path: Path
) -> None:
    """`check` and `search` only look: no ./gdocs-state.db appears, and check says `serve`
    creates it (exit 0); `ask` then creates it, as before."""
    state = tmp_path / "gdocs-state.db"
    result = gdocs(tmp_path, "check", **_env(dk_server))
    assert 0 == result.returncode, result.stdout + result.stderr
    row = _rows(result.stdout)["state store"]
    assert "no state file yet — `serve` creates it" in row
    assert "FAIL" not in row
    searched = gdocs(tmp_path, "search", "buckets", **_env(dk_server))
    assert 0 == searched.returncode, searched.stderr
    assert not state.exists()
    asked = gdocs(tmp_path, "ask", "how do I create a bucket?", **_env(dk_server))
    assert 0 == asked.returncode, asked.stderr
    assert state.exists()


@pytest.mark.parametrize(
    ("tools", "missing"),
    [
        ((), "answer_query, search_documents, get_documents"),
        (("search_documents", "get_documents"), "answer_query"),
    ],
)
def test_check_fails_naming_the_tools_a_server_lacks(
    tmp_path: Path, tools: tuple[str, ...], missing: str
) -> None:
    """A server that answers but lacks answer_query, search_documents or get_documents is
    not OK: check names the missing tools and exits 1."""
    server = FakeDeveloperKnowledge(tool_names=tools)
    server.api_key = "test-key"
    server.start()
    try:
        result = gdocs(tmp_path, "check", **_env(server))
    finally:
        server.stop()
    assert 1 == result.returncode, result.stdout + result.stderr
    row = _rows(result.stdout)["developer knowledge"]
    assert "FAIL" in row
    assert f"missing tools: {missing} " in row
    assert "dk search" not in _rows(result.stdout)
