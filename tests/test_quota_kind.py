"""Telling Google's 429s apart: per minute, per day or unknown, with how long to wait, in each
of the three forms (HTTP error JSON, JSON-RPC error, isError text), and end to end through the
real MCP client against the `mcp` SDK fake enforcing the quota."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.errors import QuotaExceeded, QuotaSignal
from bot.render import error_sentence
from bot.upstream import McpClient, quota_signal
from tests.fakes.clock import TestClock
from tests.fakes.dk_client import dk_client, dk_context
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, Fault
from tests.fakes.quota import QuotaEnforcer

MINUTE_MESSAGE = (
    "Quota exceeded for quota metric 'Answer query requests' and limit 'Answer query requests "
    "per minute per project' of service 'developerknowledge.googleapis.com' for consumer "
    "'project_number:123456789'."
)
DAY_MESSAGE = MINUTE_MESSAGE.replace("per minute", "per day")


def _error_info(limit: str, value: object = "10") -> dict[str, Any]:
    return {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "RATE_LIMIT_EXCEEDED",
        "domain": "googleapis.com",
        "metadata": {
            "quota_limit": limit,
            "quota_limit_value": value,
            "quota_metric": "developerknowledge.googleapis.com/answer_query_requests",
            "service": "developerknowledge.googleapis.com",
        },
    }


def _retry_info(delay: object) -> dict[str, Any]:
    return {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}


HELP = {
    "@type": "type.googleapis.com/google.rpc.Help",
    "links": [{"description": "Request a higher quota limit.", "url": "https://x.example/q"}],
}


def _google(message: str, *details: dict[str, Any]) -> dict[str, Any]:
    error: dict[str, Any] = {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": message}
    if details:
        error["details"] = list(details)
    return {"error": error}


def _body(data: object) -> bytes:
    return json.dumps(data).encode()


MINUTE_FULL = _google(
    MINUTE_MESSAGE,
    _error_info("AnswerQueryRequestsPerMinutePerProject", "10"),
    HELP,
    _retry_info("37s"),
)
DAY_FULL = _google(DAY_MESSAGE, _error_info("AnswerQueryRequestsPerDayPerProject", "50"), HELP)


@pytest.mark.parametrize(
    ("body", "retry_after", "expected"),
    [
        (_body(MINUTE_FULL), None, QuotaSignal("minute", 37.0, 10)),
        (_body(DAY_FULL), None, QuotaSignal("day", None, 50)),
        (
            _body(_google("Quota exceeded", _error_info("X_PerMinute", 10), _retry_info("1.5s"))),
            None,
            QuotaSignal("minute", 1.5, 10),
        ),
        # details lost: the message still says which window
        (_body(_google(MINUTE_MESSAGE)), None, QuotaSignal("minute")),
        (_body(_google(DAY_MESSAGE)), None, QuotaSignal("day")),
        # a short window that is not a minute is still a short window
        (
            _body(_google("Quota exceeded", _error_info("ReadRequestsPer100SecondsPerUser"))),
            None,
            QuotaSignal("minute", None, 10),
        ),
        (
            _body(_google("Quota exceeded for 'requests per 100 seconds'")),
            None,
            QuotaSignal("minute"),
        ),
        (_body(_google("Daily limit exceeded")), None, QuotaSignal("day")),
        # the metadata wins over a message that says otherwise
        (
            _body(_google(DAY_MESSAGE, _error_info("AnswerQueryRequestsPerMinutePerProject"))),
            None,
            QuotaSignal("minute", None, 10),
        ),
        # no window, an hour, or two windows at once: unknown (a short pause, never a day)
        (_body(_google("Quota exceeded")), None, QuotaSignal("unknown")),
        (_body(_google("Quota exceeded for 'requests per hour'")), None, QuotaSignal("unknown")),
        (_body(_google("limits: 10 per minute, 50 per day")), None, QuotaSignal("unknown")),
        # unreadable RetryInfo and limit values
        (
            _body(_google("x", _error_info("PerMinute", "0"), _retry_info("soon"))),
            None,
            QuotaSignal("minute"),
        ),
        (
            _body(_google("x", _error_info("PerMinute", "ten"), _retry_info("-5s"))),
            None,
            QuotaSignal("minute"),
        ),
        # Google sometimes wraps the error in a list
        (_body([DAY_FULL]), None, QuotaSignal("day", None, 50)),
        # Retry-After: used when RetryInfo is absent, not over it
        (_body(_google("Quota exceeded")), "30", QuotaSignal("unknown", 30.0)),
        (_body(MINUTE_FULL), "5", QuotaSignal("minute", 37.0, 10)),
        (_body(_google(MINUTE_MESSAGE)), "12.5", QuotaSignal("minute", 12.5)),
        (_body(_google(MINUTE_MESSAGE)), "later", QuotaSignal("minute")),
        # HTML pages, garbage and empty bodies say nothing
        (
            b"<html><body>429 Too Many Requests per day</body></html>",
            "20",
            QuotaSignal("unknown", 20.0),
        ),
        (b"\xff\xfe\x00garbage", None, QuotaSignal("unknown")),
        (b"", None, QuotaSignal("unknown")),
        (b'{"error": "per minute"}', None, QuotaSignal("minute")),
        (b"null", None, QuotaSignal("unknown")),
        # a JSON-RPC error sent with status 429, Google's JSON in its data
        (
            _body(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "error": {"code": -32000, "message": "429", "data": DAY_FULL},
                }
            ),
            None,
            QuotaSignal("day", None, 50),
        ),
    ],
)
def test_http_429_bodies_name_their_limit(
    body: bytes, retry_after: str | None, expected: QuotaSignal
) -> None:
    """Each HTTP body (and Retry-After header) gives the limit, the wait and the limit's size."""
    assert expected == quota_signal(body.decode("utf-8", "replace"), retry_after)


@pytest.mark.parametrize(
    ("message", "data", "expected"),
    [
        ("429 RESOURCE_EXHAUSTED: quota exceeded", MINUTE_FULL, QuotaSignal("minute", 37.0, 10)),
        ("429 RESOURCE_EXHAUSTED", json.dumps(DAY_FULL), QuotaSignal("day", None, 50)),
        ("RESOURCE_EXHAUSTED", MINUTE_FULL["error"], QuotaSignal("minute", 37.0, 10)),
        (f"429 RESOURCE_EXHAUSTED: {DAY_MESSAGE}", None, QuotaSignal("day")),
        ("429 RESOURCE_EXHAUSTED: quota exceeded", None, QuotaSignal("unknown")),
        ("quota exceeded", {"limit": "requests per minute"}, QuotaSignal("minute")),
        ("quota exceeded", "not json {", QuotaSignal("unknown")),
        ("quota exceeded", [1, 2], QuotaSignal("unknown")),
    ],
)
def test_json_rpc_errors_name_their_limit(
    message: str, data: object, expected: QuotaSignal
) -> None:
    """A JSON-RPC error's message and data (Google's JSON as an object or a string)."""
    error = dk_context().from_rpc_error(
        {"code": -32000, "message": message, "data": data}, tool="answer_query", modern=True
    )
    assert isinstance(error, QuotaExceeded)
    assert expected == error.signal


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            f"Error executing tool answer_query: 429 RESOURCE_EXHAUSTED: {MINUTE_MESSAGE}",
            QuotaSignal("minute"),
        ),
        (f"429 RESOURCE_EXHAUSTED: {DAY_MESSAGE}", QuotaSignal("day")),
        ("limit 'Answer query requests per minute per project'", QuotaSignal("minute")),
        ("429 RESOURCE_EXHAUSTED", QuotaSignal("unknown")),
        ("quota exceeded per minute. Please retry in 37.5s.", QuotaSignal("minute", 37.5)),
        ("quota exceeded; retry after 15 seconds", QuotaSignal("unknown", 15.0)),
        (f"429: {json.dumps(MINUTE_FULL)}", QuotaSignal("minute", 37.0, 10)),
        ("429 {not json} then {also not}", QuotaSignal("unknown")),
        ("", QuotaSignal("unknown")),
    ],
)
def test_tool_error_texts_name_their_limit(text: str, expected: QuotaSignal) -> None:
    """An isError result keeps only its text: the limit is read from the words."""
    assert expected == quota_signal(text)


def test_quota_errors_carry_their_signal_and_say_today_only_for_the_day() -> None:
    """Each form's QuotaExceeded carries the signal; only a daily limit says "for today"."""
    ctx = dk_context()
    minute = ctx.from_http(429, _body(MINUTE_FULL), tool="answer_query", modern=True)
    day = ctx.from_rpc_error(
        {"code": -32000, "message": "RESOURCE_EXHAUSTED", "data": DAY_FULL},
        tool="answer_query",
        modern=True,
    )
    unknown = ctx.from_tool_error("429 RESOURCE_EXHAUSTED", tool="answer_query")
    header = ctx.from_http(
        429, _body(_google("Quota exceeded")), tool="search_documents", modern=True, retry_after="9"
    )
    assert isinstance(minute, QuotaExceeded)
    assert isinstance(day, QuotaExceeded)
    assert isinstance(unknown, QuotaExceeded)
    assert isinstance(header, QuotaExceeded)
    assert QuotaSignal("minute", 37.0, 10) == minute.signal
    assert QuotaSignal("day", None, 50) == day.signal
    assert QuotaSignal("unknown") == unknown.signal
    assert QuotaSignal("unknown", 9.0) == header.signal
    assert "today" in error_sentence(day)
    assert "today" not in error_sentence(minute)
    assert "today" not in error_sentence(unknown)


def test_quota_exceeded_still_builds_from_a_message_alone() -> None:
    """Older callers' `QuotaExceeded("…")` works and has no signal."""
    error = QuotaExceeded("Daily answer quota exhausted.")
    assert error.signal is None
    assert "Daily answer quota exhausted." == error.message


# --- end to end: the real client against the mcp SDK fake ----------------------------------
@pytest.fixture
async def client(dk_server: FakeDeveloperKnowledge) -> AsyncIterator[McpClient]:
    async with dk_client(dk_server) as mcp:
        yield mcp


async def _refusal(client: McpClient) -> QuotaExceeded:
    with pytest.raises(QuotaExceeded) as caught:
        await client.call_tool("answer_query", {"query": "How do I create a bucket?"})
    return caught.value


@pytest.mark.parametrize("form", ["http", "jsonrpc", "result"])
async def test_the_real_client_tells_a_minute_limit_from_the_fake(
    dk_server: FakeDeveloperKnowledge, client: McpClient, form: str
) -> None:
    """Two per minute: the third call is refused as "minute"; HTTP and JSON-RPC keep
    Google's retryDelay (until the first call leaves the window), the text form cannot."""
    clock = TestClock(datetime(2026, 11, 2, 17, 0, tzinfo=UTC))
    dk_server.quota = QuotaEnforcer(per_minute=2, form=form, clock=clock)  # type: ignore[arg-type]
    await client.call_tool("answer_query", {"query": "one"})
    clock.now += timedelta(seconds=20)
    await client.call_tool("answer_query", {"query": "two"})
    error = await _refusal(client)
    expected_wait = 40.0 if form != "result" else None
    assert QuotaSignal("minute", expected_wait, 2 if form != "result" else None) == error.signal
    assert 1 == len(dk_server.quota.refused)


@pytest.mark.parametrize("form", ["http", "jsonrpc", "result"])
async def test_the_real_client_tells_a_day_limit_from_the_fake(
    dk_server: FakeDeveloperKnowledge, client: McpClient, form: str
) -> None:
    """One a day: the second call that Pacific day is refused as "day", with no wait given."""
    clock = TestClock(datetime(2026, 11, 2, 17, 0, tzinfo=UTC))
    dk_server.quota = QuotaEnforcer(per_day=1, form=form, clock=clock)  # type: ignore[arg-type]
    await client.call_tool("answer_query", {"query": "one"})
    error = await _refusal(client)
    assert QuotaSignal("day", None, 1 if form != "result" else None) == error.signal
    assert "today" in error_sentence(error)


async def test_a_retry_after_header_reaches_the_signal(
    dk_server: FakeDeveloperKnowledge, client: McpClient
) -> None:
    """A 429 without RetryInfo but with `Retry-After: 17` says to wait 17 s."""
    dk_server.faults.append(
        Fault(status=429, body=_body(_google(MINUTE_MESSAGE)), headers={"Retry-After": "17"})
    )
    error = await _refusal(client)
    assert QuotaSignal("minute", 17.0) == error.signal
