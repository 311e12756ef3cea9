"""POST /slack/events refuses what Slack did not send, and the Web API client rides out
Slack's rate limits and outages."""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import AsyncIterator
from urllib.parse import urlencode

import pytest

from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.slack_harness import running_bot, sign


def a_command_body(text: str = "how do I create a bucket?") -> str:
    return urlencode(
        {
            "command": "/gdocs",
            "text": text,
            "user_id": "UASKER1",
            "channel_id": "C1",
            "team_id": "T1",
            "trigger_id": "t.1",
            "response_url": "http://127.0.0.1:9/response/x",
        }
    )


FORM = "application/x-www-form-urlencoded"


def badly_signed() -> list[dict[str, str]]:
    body, now = a_command_body(), int(time.time())
    return [
        {},  # no signature headers at all
        {"X-Slack-Request-Timestamp": str(now)},  # no signature
        sign(body, secret="not-the-secret"),
        sign(body, timestamp=now - 6 * 60),  # stale
        sign(body, timestamp=now + 6 * 60),  # from the future
        {**sign(body), "X-Slack-Request-Timestamp": "yesterday"},
        {**sign(body), "X-Slack-Signature": "v0=" + "0" * 64},
    ]


async def test_unsigned_or_badly_signed_requests_are_refused(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Bad or missing signatures and stale timestamps are 401, and nothing is called."""
    async with running_bot(dk_server) as bot:
        cases = badly_signed()
        statuses = [
            (await bot.post(a_command_body(), content_type=FORM, headers=headers)).status
            for headers in cases
        ]
        assert [401] * len(cases) == statuses
        assert ([], [], []) == (dk_server.calls, bot.fake.calls, bot.fake.responses)
        assert [] == bot.metrics.finished


NOT_FROM_SLACK = [
    # (body, content type, signed?, expected status)
    ("{not json", "application/json", True, 400),
    ("{not json", "application/json", False, 400),
    ("[1, 2, 3]", "application/json", True, 400),
    ("payload=%7Bbroken", FORM, True, 400),
    ("<xml>hello</xml>", "text/xml", False, 401),
    ("hello=world", FORM, True, 404),  # signed, but nothing Slack would send
    (
        '{"type": "event_callback", "event": {"type": "app_mention"}}',
        "application/json",
        False,
        401,
    ),
]


async def test_bodies_slack_would_not_send_are_refused_without_a_500(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Garbage bodies get a 4xx, never a 500, and never reach a listener or a server."""
    async with running_bot(dk_server) as bot:
        statuses = []
        for body, content_type, signed, _ in NOT_FROM_SLACK:
            headers = sign(body) if signed else {}
            statuses.append(
                (await bot.post(body, content_type=content_type, headers=headers)).status
            )
        assert [expected for *_, expected in NOT_FROM_SLACK] == statuses
        assert ([], []) == (dk_server.calls, bot.metrics.finished)


async def test_body_that_is_not_utf8_is_a_400(dk_server: FakeDeveloperKnowledge) -> None:
    """Undecodable bytes are refused before Bolt sees them."""
    async with running_bot(dk_server) as bot:
        sent = await bot.post(b"text=\xff\xfe\xfa", content_type=FORM, headers=sign("text="))
        assert 400 == sent.status
        assert [] == dk_server.calls


async def test_oversized_body_is_413_without_calling_bolt(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A 5 MB body is refused by its Content-Length alone; nothing is parsed or called."""
    async with running_bot(dk_server) as bot:
        body = b"text=" + b"a" * (5 * 1024 * 1024)
        sent = await bot.post(io.BytesIO(body), content_type=FORM, headers=sign(body.decode()))
        assert 413 == sent.status
        assert ([], [], []) == (dk_server.calls, bot.fake.calls, bot.metrics.finished)


async def test_oversized_chunked_body_is_413(dk_server: FakeDeveloperKnowledge) -> None:
    """Without a Content-Length the body is read only up to the cap."""

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(80):
            yield b"a" * 65536

    async with running_bot(dk_server) as bot:
        sent = await bot.post(chunks(), content_type=FORM, headers=sign("x"))
        assert 413 == sent.status
        assert ([], []) == (dk_server.calls, bot.metrics.finished)


async def test_body_just_under_the_cap_is_served(dk_server: FakeDeveloperKnowledge) -> None:
    """The cap refuses only what is over it (a long but valid command is still handled)."""
    async with running_bot(dk_server, max_body_bytes=8_000) as bot:
        sent = await bot.command("firestore pricing " + "x" * 1000)
        await bot.finished(1)
        assert 200 == sent.status


async def test_rate_limited_post_is_retried_after_retry_after(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A 429 from chat.postMessage is retried after Retry-After, and the answer lands."""
    async with running_bot(dk_server) as bot:
        bot.fake.rate_limit("chat.postMessage", retry_after=1)
        sent = await bot.command("firestore pricing")
        outcomes = await bot.finished(1)
        assert sent.key is not None

        assert [429, 200] == [
            429 if c.result.get("error") == "ratelimited" else 200
            for c in bot.fake.calls_to("chat.postMessage")
        ]
        assert [("command", "ok")] == outcomes
        assert bot.fake.responses_to(sent.key)[-1].get("delete_original") is True


async def test_slack_503_is_retried(dk_server: FakeDeveloperKnowledge) -> None:
    """A Slack outage blip (503) on chat.postMessage is retried."""
    async with running_bot(dk_server) as bot:
        bot.fake.server_error("chat.postMessage", status=503)
        await bot.command("firestore pricing")
        outcomes = await bot.finished(1)

        assert 2 == len(bot.fake.calls_to("chat.postMessage"))
        assert [("command", "ok")] == outcomes


async def test_persistent_slack_failure_is_a_polite_private_message(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """When Slack keeps refusing the post, the asker hears "something went wrong", no details."""
    async with running_bot(dk_server) as bot:
        bot.fake.fail("chat.postMessage", "invalid_blocks_format")
        sent = await bot.command("firestore pricing")
        outcomes = await bot.finished(1)
        assert sent.key is not None
        final = bot.fake.responses_to(sent.key)[-1]

        assert [("command", "internal_error")] == outcomes
        assert "Something went wrong on our side" in final["text"]
        assert "invalid_blocks_format" not in json.dumps(bot.fake.responses)


async def test_bad_signature_is_logged_without_the_request_body(
    dk_server: FakeDeveloperKnowledge, caplog: pytest.LogCaptureFixture
) -> None:
    """A forged or unexpected request's text does not end up in the logs above DEBUG."""
    caplog.set_level(logging.INFO)
    async with running_bot(dk_server) as bot:
        body = a_command_body("my-private-question-text")
        forged = await bot.post(body, content_type=FORM, headers=sign(body, secret="wrong"))
        odd = "question=another-private-text"
        unhandled = await bot.post(odd, content_type=FORM, headers=sign(odd))
    assert (401, 404) == (forged.status, unhandled.status)
    assert "Invalid request signature detected" in caplog.text
    assert "Unhandled request" in caplog.text
    assert "my-private-question-text" not in caplog.text
    assert "another-private-text" not in caplog.text


async def test_failing_auth_test_is_a_polite_answer_not_a_500(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """If Slack refuses the bot token, requests get a message, the servers nothing."""
    async with running_bot(dk_server) as bot:
        bot.fake.auth_ok = False
        sent = await bot.command("how do I create a bucket?")
        assert 200 == sent.status
        assert "SLACK_BOT_TOKEN" in sent.body  # Bolt's answer, shown to the asker
        assert [] == dk_server.calls
        bot.fake.auth_ok = True  # Slack is back: the next request authorizes and is answered
        await bot.command("firestore pricing")
        await bot.fake.await_calls("chat.postMessage")
        assert 2 == len(bot.fake.calls_to("auth.test"))
