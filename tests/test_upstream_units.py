"""The pure parts of the MCP client: retry backoff, and the text helpers (cache keys, titles
from URLs, snippets)."""

from __future__ import annotations

import asyncio
import random

import httpx
import pytest

from bot.errors import AuthError, Unavailable
from bot.redact import Redactor
from bot.settings import Settings
from bot.upstream import (
    ApiKeyAuth,
    McpClient,
    ServerContext,
    normalise,
    snippet,
    title_from_uri,
)


# --- retry backoff ---------------------------------------------------------------------
class _Timeline:
    """What `_request` did, in order: ("call",), ("jitter", low, high), ("sleep", seconds).

    Stands in for `random.uniform` (answering the window's upper bound, so the delays are
    the windows themselves) and for `asyncio.sleep` (recording instead of waiting)."""

    def __init__(self) -> None:
        self.events: list[tuple[object, ...]] = []

    def uniform(self, low: float, high: float) -> float:
        self.events.append(("jitter", low, high))
        return high

    async def sleep(self, seconds: float) -> None:
        self.events.append(("sleep", seconds))

    @property
    def sleeps(self) -> list[float]:
        return [float(e[1]) for e in self.events if e[0] == "sleep"]  # type: ignore[arg-type]


@pytest.fixture
def timeline(monkeypatch: pytest.MonkeyPatch) -> _Timeline:
    recorded = _Timeline()
    monkeypatch.setattr(random, "uniform", recorded.uniform)
    monkeypatch.setattr(asyncio, "sleep", recorded.sleep)
    return recorded


_CTX = ServerContext(
    key="developer_knowledge",
    url_setting="DEVELOPER_KNOWLEDGE_MCP_URL",
    api_service="developerknowledge.googleapis.com",
    auth="api_key",
    timeout=30.0,
    redact=Redactor(),
)


async def _retry(outcomes: list[Exception | str], *, retries: int, timeline: _Timeline) -> str:
    """Run `McpClient._request` (base 0.5 s, cap 8 s) over attempts that raise or return each
    of `outcomes` in turn."""
    pending = list(outcomes)

    async def attempt(*_: object) -> str:
        timeline.events.append(("call",))
        outcome = pending.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    async with httpx.AsyncClient() as http:
        client = McpClient(
            _CTX,
            "http://127.0.0.1:9/mcp",
            lambda: http,
            ApiKeyAuth(None),
            Settings(mcp_max_response_bytes=10_000, mcp_max_concurrency=1, mcp_max_retries=retries),
            backoff_base=0.5,
        )
        client._attempt = attempt  # type: ignore[method-assign,assignment]
        return await client._request("tools/list", {}, "")  # type: ignore[return-value]


def _transient() -> Exception:
    return _CTX.unavailable("HTTP 503", transient=True)


async def test_backoff_doubles_from_the_base_up_to_the_cap_with_full_jitter(
    timeline: _Timeline,
) -> None:
    """Windows of 0.5·2ⁿ s capped at 8 s, jitter drawn from [0, window], and no sleep after
    the last attempt: the error is raised at once."""
    with pytest.raises(Unavailable):
        await _retry([_transient() for _ in range(7)], retries=6, timeline=timeline)
    expected: list[tuple[object, ...]] = [("call",)]
    for window in (0.5, 1.0, 2.0, 4.0, 8.0, 8.0):
        expected += [("jitter", 0, window), ("sleep", window), ("call",)]
    assert expected == timeline.events


async def test_backoff_stops_at_the_first_success(timeline: _Timeline) -> None:
    """Two transient failures, then an answer: two sleeps, and the answer is returned."""
    answer = await _retry([_transient(), _transient(), "answer"], retries=5, timeline=timeline)
    assert "answer" == answer
    assert [0.5, 1.0] == timeline.sleeps
    assert 3 == timeline.events.count(("call",))


async def test_errors_another_try_cannot_fix_are_not_slept_on(timeline: _Timeline) -> None:
    """A non-transient error (auth) is raised after one call, without any backoff."""
    refused = AuthError("refused", setting="GOOGLE_API_KEY")
    with pytest.raises(AuthError):
        await _retry([refused, "never"], retries=5, timeline=timeline)
    assert [("call",)] == timeline.events


def test_normalise_folds_case_and_whitespace() -> None:
    """Cache keys ignore case and spacing."""
    assert normalise("  Straße\tIS  big ") == normalise("strasse is big")


@pytest.mark.parametrize(
    ("uri", "title"),
    [
        ("https://docs.cloud.google.com/storage/docs/creating-buckets", "Creating buckets"),
        ("https://developer.android.com/guide/topics/ui_overview.html", "Ui overview"),
        ("https://web.dev/", "web.dev"),
        ("https://go.dev/doc/effective%20go", "Effective go"),
    ],
)
def test_title_from_uri_reads_the_last_path_segment(uri: str, title: str) -> None:
    """A readable stand-in title when the real one is unknown."""
    assert title == title_from_uri(uri)


def test_snippet_drops_headings() -> None:
    """A heading read inline runs into the text ("IAM Grant roles…") and mostly repeats the
    page's title: it goes whole; `#` elsewhere stays."""
    assert "Use C# or gs://x#y" == snippet("# Create buckets\n\nUse C# or gs://x#y\n## IAM")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("Deploy:\n\n```sh\ngcloud run deploy\n```", "Deploy: gcloud run deploy"),
        ("~~~yaml\nrun: x\n~~~\n- one\n* two\n1. three", "run: x one two three"),
        ("> quoted\n> > deeper\n\n---\nafter", "quoted deeper after"),
        ("| a | b |\n|---|:-:|\n| 1 | 2 |\n\n`ls | wc`", "a b 1 2 `ls | wc`"),
    ],
)
def test_snippet_reads_as_plain_words(content: str, expected: str) -> None:
    """A snippet is read as words: no fence or its language tag (`sh gcloud…`), no list,
    quote, rule or table marks — a pipe inside the text stays."""
    assert expected == snippet(content)


def test_snippet_cuts_at_a_word() -> None:
    """Long chunks are shortened at a word boundary with an ellipsis."""
    assert "alpha beta…" == snippet("alpha beta gamma", limit=12)
