"""What goes wrong upstream becomes one typed error with a safe one-line message: retried
when it is transient, bounded in time and in bytes, never leaking a credential."""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest

from bot.errors import (
    AuthError,
    GdocsError,
    InvalidInput,
    NotFound,
    ProtocolError,
    QuotaExceeded,
    Unavailable,
    UpstreamTimeout,
)
from bot.render import error_sentence
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, Fault, google_error
from tests.fakes.upstream import CLOSED_URL, service_for, settings_for, until

MISSING = "documents/docs.cloud.google.com/storage/docs/no-such-page"


def _assert_one_safe_line(error: GdocsError, *secrets: str) -> None:
    sentence = error_sentence(error)
    assert "\n" not in sentence
    assert sentence.strip() == sentence
    assert 0 < len(sentence) < 300
    for secret in secrets:
        assert secret not in str(error)
        assert secret not in sentence


async def test_retries_503_then_succeeds(dk_server: FakeDeveloperKnowledge) -> None:
    """Two 503s, then an answer: the user gets the answer."""
    dk_server.faults.extend([Fault(status=503, tool="search_documents")] * 2)
    async with service_for(settings_for(dk_server, mcp_max_retries=2)) as service:
        answer = await service.search("buckets")
    assert answer.hits
    assert 3 == len(dk_server.tool_calls("search_documents"))


async def test_gives_up_after_the_configured_retries(dk_server: FakeDeveloperKnowledge) -> None:
    """504 every time: MCP_MAX_RETRIES retries, then Unavailable."""
    dk_server.faults.extend([Fault(status=504, tool="search_documents")] * 5)
    async with service_for(settings_for(dk_server, mcp_max_retries=2)) as service:
        with pytest.raises(Unavailable) as caught:
            await service.search("buckets")
        assert re.search("try again", error_sentence(caught.value))
    assert 3 == len(dk_server.tool_calls("search_documents"))
    _assert_one_safe_line(caught.value)


@pytest.mark.parametrize(
    ("fault", "error", "setting"),
    [
        (
            google_error(400, "INVALID_ARGUMENT", "Request contains an invalid argument."),
            InvalidInput,
            None,
        ),
        (
            google_error(401, "UNAUTHENTICATED", "Request had invalid credentials."),
            AuthError,
            "GOOGLE_API_KEY",
        ),
        (
            google_error(403, "PERMISSION_DENIED", "The caller does not have permission"),
            AuthError,
            "GOOGLE_API_KEY",
        ),
        (
            google_error(404, "NOT_FOUND", "Requested entity was not found."),
            AuthError,
            "DEVELOPER_KNOWLEDGE_MCP_URL",
        ),
        (google_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded"), QuotaExceeded, None),
        (google_error(500, "INTERNAL", "Internal error encountered."), Unavailable, None),
    ],
    ids=["400", "401", "403", "404", "429", "500"],
)
async def test_does_not_retry_what_another_try_cannot_fix(
    dk_server: FakeDeveloperKnowledge,
    fault: Fault,
    error: type[GdocsError],
    setting: str | None,
) -> None:
    """400/401/403/404/429/500 fail after exactly one call, as the right error; the auth
    errors name the setting to fix (the API key in use), in `.setting` and in the message."""
    fault.tool = "search_documents"
    dk_server.faults.append(fault)
    async with service_for(settings_for(dk_server, mcp_max_retries=3)) as service:
        with pytest.raises(error) as caught:
            await service.search("buckets")
    assert 1 == len(dk_server.tool_calls("search_documents"))
    _assert_one_safe_line(caught.value)
    assert setting == caught.value.setting
    if setting is not None:
        assert setting in error_sentence(caught.value)


async def test_wrong_api_key_names_the_setting_without_the_key(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Google's `400 API key not valid` says to check GOOGLE_API_KEY and never shows the key."""
    wrong = "AIzaSyWrongKey-0123456789abcdefghijklmn"
    async with service_for(settings_for(dk_server, google_api_key=wrong)) as service:
        with pytest.raises(AuthError) as caught:
            await service.search("buckets")
    assert "GOOGLE_API_KEY" in error_sentence(caught.value)
    assert "GOOGLE_API_KEY" == caught.value.setting
    _assert_one_safe_line(caught.value, wrong)


async def test_a_server_echoing_the_key_does_not_leak_it(dk_server: FakeDeveloperKnowledge) -> None:
    """Server text quoted in a message is scrubbed of the credentials the client holds."""
    key = "test-key"
    dk_server.faults.append(
        Fault(
            status=200,
            tool="search_documents",
            rpc_result={
                "isError": True,
                "content": [{"type": "text", "text": f"backend crashed handling key {key} oops"}],
            },
        )
    )
    async with service_for(settings_for(dk_server)) as service:
        with pytest.raises(Unavailable) as caught:
            await service.search("buckets")
    assert "backend crashed" in error_sentence(caught.value)
    _assert_one_safe_line(caught.value, key)


async def test_api_not_enabled_says_to_enable_it(dk_server: FakeDeveloperKnowledge) -> None:
    """403 `has not been used in project … or it is disabled` gives the gcloud command."""
    dk_server.faults.append(
        google_error(
            403,
            "PERMISSION_DENIED",
            "Developer Knowledge API has not been used in project 123 before or it is disabled.",
        )
    )
    async with service_for(settings_for(dk_server)) as service:
        with pytest.raises(AuthError) as caught:
            await service.search("buckets")
        assert re.search("gcloud services enable", error_sentence(caught.value))
    _assert_one_safe_line(caught.value)


async def test_html_404_on_the_endpoint_says_to_enable_the_api(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Google's HTML 404 page on /mcp means the API is off (or the URL is wrong)."""
    dk_server.faults.append(
        Fault(
            status=404,
            body=b"<html><body>404. That's an error.</body></html>",
            content_type="text/html",
        )
    )
    async with service_for(settings_for(dk_server)) as service:
        with pytest.raises(AuthError) as caught:
            await service.search("buckets")
        assert re.search("DEVELOPER_KNOWLEDGE_MCP_URL", error_sentence(caught.value))


async def test_missing_document_is_not_found_naming_it(dk_server: FakeDeveloperKnowledge) -> None:
    """get_documents failing NOT_FOUND becomes NotFound with the document's name."""
    async with service_for(settings_for(dk_server)) as service:
        with pytest.raises(NotFound) as caught:
            await service.docs([MISSING])
        assert re.search("no-such-page", error_sentence(caught.value))


async def test_jsonrpc_internal_error_is_unavailable(dk_server: FakeDeveloperKnowledge) -> None:
    """A JSON-RPC -32603 is a failure of the server, not of the request."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": "Internal error"}}
    dk_server.faults.append(
        Fault(status=200, body=json.dumps(body).encode(), tool="search_documents")
    )
    async with service_for(settings_for(dk_server)) as service:
        with pytest.raises(Unavailable) as caught:
            await service.search("buckets")
        assert re.search("-32603", error_sentence(caught.value))


async def test_timeout_bounds_the_whole_operation(dk_server: FakeDeveloperKnowledge) -> None:
    """A server slower than MCP_TIMEOUT_SECONDS gives UpstreamTimeout with a clear message."""
    dk_server.faults.append(Fault(status=200, delay=1.0, tool="search_documents"))
    async with service_for(settings_for(dk_server, mcp_timeout_seconds=0.5)) as service:
        started = time.monotonic()
        with pytest.raises(UpstreamTimeout) as caught:
            await service.search("buckets")
        elapsed = time.monotonic() - started
    assert "did not answer in 0.5 s — try again in a minute" in error_sentence(caught.value)
    assert elapsed < 2.0


async def test_timeout_includes_the_retries(dk_server: FakeDeveloperKnowledge) -> None:
    """Retries with backoff never outlast the operation's timeout."""
    dk_server.faults.extend([Fault(status=503, tool="search_documents")] * 20)
    settings = settings_for(dk_server, mcp_timeout_seconds=0.5, mcp_max_retries=10)
    async with service_for(settings, backoff_base=0.2) as service:
        started = time.monotonic()
        with pytest.raises(Unavailable):
            await service.search("buckets")
        assert time.monotonic() - started < 2.0


async def test_connection_refused_is_unavailable() -> None:
    """Nothing listening: Unavailable after the retries, saying it cannot connect."""
    async with service_for(settings_for(None)) as service:
        with pytest.raises(Unavailable) as caught:
            await service.search("buckets")
        assert re.search("cannot connect", error_sentence(caught.value))
    assert not isinstance(caught.value, UpstreamTimeout)
    assert CLOSED_URL not in error_sentence(caught.value)


async def test_connection_reset_mid_stream_is_retried(dk_server: FakeDeveloperKnowledge) -> None:
    """A connection dropped halfway through the answer is retried, and the retry answers."""
    dk_server.faults.append(
        Fault(
            status=200, tool="search_documents", chunks=[b'{"jsonrpc": "2.0", "id": '], reset=True
        )
    )
    async with service_for(settings_for(dk_server)) as service:
        answer = await service.search("buckets")
    assert answer.hits
    assert 2 == len(dk_server.tool_calls("search_documents"))


async def test_connection_reset_without_retries_left_is_unavailable(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """With no retries left the reset is reported as the service being unavailable."""
    dk_server.faults.append(
        Fault(status=200, tool="search_documents", chunks=[b'{"jsonrpc": "2.0"'], reset=True)
    )
    async with service_for(settings_for(dk_server, mcp_max_retries=0)) as service:
        with pytest.raises(Unavailable) as caught:
            await service.search("buckets")
        assert re.search("connection lost", error_sentence(caught.value))


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        (Fault(status=200, body=b'{"jsonrpc": "2.0", "id": 1, "result": {'), "malformed JSON"),
        (
            Fault(status=200, body=b"<html><body>Sign in</body></html>", content_type="text/html"),
            "content type text/html",
        ),
        (
            Fault(status=200, body=b"results: none", content_type="text/plain"),
            "content type text/plain",
        ),
        (
            Fault(
                status=200,
                content_type="text/event-stream",
                body=b'event: message\ndata: {"jsonrpc": "2.0", "id": 1, "res',
            ),
            "ended before the answer",
        ),
        (
            Fault(status=200, content_type="text/event-stream", body=b"data: not json\n\n"),
            "malformed JSON in the event stream",
        ),
        (Fault(status=200, rpc_result={"structuredContent": {"results": "oops"}}), "results"),
        (Fault(status=200, rpc_result={"content": []}), "no content"),
        (
            Fault(status=302, body=b"", headers={"location": "https://accounts.google.com/"}),
            "HTTP 302",
        ),
    ],
    ids=[
        "bad-json",
        "html",
        "wrong-type",
        "truncated-sse",
        "bad-sse-json",
        "schema",
        "empty",
        "redirect",
    ],
)
async def test_unreadable_answers_are_protocol_errors(
    dk_server: FakeDeveloperKnowledge, fault: Fault, reason: str
) -> None:
    """Malformed JSON/SSE, HTML, the wrong content type, a schema mismatch: ProtocolError."""
    fault.tool = "search_documents"
    dk_server.faults.append(fault)
    async with service_for(settings_for(dk_server)) as service:
        with pytest.raises(ProtocolError) as caught:
            await service.search("buckets")
    assert reason in error_sentence(caught.value)
    _assert_one_safe_line(caught.value)
    assert 1 == len(dk_server.tool_calls("search_documents"))


async def test_answer_without_answer_text_is_a_protocol_error(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """An answer_query result missing answerText is refused at the edge."""
    dk_server.faults.append(
        Fault(status=200, tool="answer_query", rpc_result={"structuredContent": {"text": "hi"}})
    )
    async with service_for(settings_for(dk_server)) as service:
        with pytest.raises(ProtocolError) as caught:
            await service.ask("How do I create a bucket?")
        assert re.search("answerText", error_sentence(caught.value))


async def test_endless_event_stream_ends_at_the_timeout(dk_server: FakeDeveloperKnowledge) -> None:
    """An SSE stream of keep-alives that never answers is cut at MCP_TIMEOUT_SECONDS."""
    fault = Fault(
        status=200,
        content_type="text/event-stream",
        tool="search_documents",
        chunks=[b": ping\n\n", b'data: {"jsonrpc":"2.0","method":"notifications/message"}\n\n'],
        chunk_delay=0.02,
        endless=True,
    )
    dk_server.faults.append(fault)
    async with service_for(settings_for(dk_server, mcp_timeout_seconds=0.5)) as service:
        with pytest.raises(UpstreamTimeout):
            await service.search("buckets")
    assert fault.sent > 0
    assert not fault.finished


async def test_oversized_streamed_body_is_refused_without_reading_it_all(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """10 MB streamed without a length: refused once the limit is passed, long before the end."""
    fault = Fault(
        status=200,
        tool="search_documents",
        chunks=[b'{"jsonrpc":"2.0","id":$ID,"result":{"pad":"'] + [b"x" * 65536] * 160,
        chunk_delay=0.005,
    )
    dk_server.faults.append(fault)
    settings = settings_for(dk_server, mcp_max_response_bytes=200_000, mcp_timeout_seconds=10)
    async with service_for(settings) as service:
        with pytest.raises(ProtocolError) as caught:
            await service.search("buckets")
        assert re.search("larger than 200,000 bytes", error_sentence(caught.value))
    assert not fault.finished
    assert fault.sent < 2_000_000, "the client hung up long before the 10 MB were sent"


async def test_declared_oversized_body_is_refused_before_reading(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A Content-Length over the limit is refused from the headers, before the body."""
    ten_mb = 10 * 1024 * 1024
    fault = Fault(
        status=200,
        tool="search_documents",
        headers={"content-length": str(ten_mb)},
        chunks=[b"x" * 65536] * 160,
        chunk_delay=0.05,
    )
    dk_server.faults.append(fault)
    settings = settings_for(dk_server, mcp_max_response_bytes=200_000, mcp_timeout_seconds=10)
    async with service_for(settings) as service:
        with pytest.raises(ProtocolError) as caught:
            await service.search("buckets")
        assert re.search("larger than", error_sentence(caught.value))
    # counting the body would have needed four chunks to pass the limit; at most one went out
    assert fault.sent <= 65536


async def test_cancelled_callers_do_not_break_the_service(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A caller giving up mid-call leaves the service working for the next one."""
    dk_server.latency = 0.5  # far longer than it takes to see the call arrive and cancel
    async with service_for(settings_for(dk_server)) as service:
        task = asyncio.create_task(service.search("buckets"))
        await until(lambda: dk_server.in_flight == 1, "the call to reach the server")
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        dk_server.latency = 0
        answer = await service.search("firestore")
    assert answer.hits
