"""Logs: JSON lines an operator's collector can parse, text lines a person can read, and no
secret in either, whatever path it takes into a record."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from bot.observability.logging import RedactionFilter, configure_logging
from bot.redact import REDACTED, Redactor
from bot.settings import Settings
from tests.fakes.slack_api import FakeSlack

BOT_TOKEN = "xoxb-1111-2222-AbCdEfGhIjKl"
SIGNING_SECRET = "8f14e45fceea167a5a36dedd4bea2543"
APP_TOKEN = "xapp-1-A111-222-abcdef0123"
API_KEY = "AIzaSyD-test-1234567890abcdefghijklmn"


class _Stderr:
    """Everything written to stderr so far (capsys hands each write out only once)."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self._capsys = capsys
        self._seen = ""

    def getvalue(self) -> str:
        self._seen += self._capsys.readouterr().err
        return self._seen


@pytest.fixture
def stderr(capsys: pytest.CaptureFixture[str]) -> Iterator[_Stderr]:
    """What the configured handler writes, with the root logger restored afterwards."""
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    names = ["httpx", "slack_sdk", "slack_bolt", "slack_sdk.web.async_base_client"]
    names += [n for n in logging.root.manager.loggerDict if n.startswith(("slack_", "httpx"))]
    saved_levels = {name: logging.getLogger(name).level for name in names}
    yield _Stderr(capsys)
    root.handlers[:] = saved_handlers
    root.setLevel(saved_level)
    for name, level in saved_levels.items():
        logging.getLogger(name).setLevel(level)


def _settings(**overrides: object) -> Settings:
    values: dict[str, object] = {
        "slack_bot_token": BOT_TOKEN,
        "slack_signing_secret": SIGNING_SECRET,
        "slack_app_token": APP_TOKEN,
        "google_api_key": API_KEY,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


def test_json_lines_carry_level_logger_message_and_extra_fields(stderr: _Stderr) -> None:
    """LOG_FORMAT=json writes one parseable object per line with every extra= field."""
    configure_logging(_settings(log_format="json"))
    log = logging.getLogger("bot.slack.test")
    log.info(
        "answered %s",
        "a question",
        extra={
            "request_id": "r-1",
            "kind": "command",
            "route": "answer",
            "latency_ms": 41,
            "outcome": "ok",
        },
    )
    log.warning("second line")

    lines = stderr.getvalue().splitlines()
    assert 2 == len(lines)
    first = json.loads(lines[0])
    assert {
        "level": "INFO",
        "logger": "bot.slack.test",
        "message": "answered a question",
        "request_id": "r-1",
        "kind": "command",
        "route": "answer",
        "latency_ms": 41,
        "outcome": "ok",
    }.items() <= first.items()
    assert first["time"].endswith("+00:00")
    assert "WARNING" == json.loads(lines[1])["level"]


def test_json_exception_is_one_line_with_the_traceback_inside(stderr: _Stderr) -> None:
    """logger.exception in JSON mode stays one line; the traceback is a field."""
    configure_logging(_settings(log_format="json"))
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logging.getLogger("bot").exception("upstream call failed")

    lines = stderr.getvalue().splitlines()
    assert 1 == len(lines)
    entry = json.loads(lines[0])
    assert "upstream call failed" == entry["message"]
    assert "RuntimeError: boom" in entry["exception"]


def test_text_lines_show_extra_fields_as_key_value(stderr: _Stderr) -> None:
    """Text format keeps the extras readable at the end of the line."""
    configure_logging(_settings(log_format="text"))
    logging.getLogger("bot.x").info("served", extra={"route": "search", "latency_ms": 12})
    line = stderr.getvalue().strip()
    assert line.endswith("INFO bot.x served route=search latency_ms=12")


def test_level_setting_filters_lower_records(stderr: _Stderr) -> None:
    """LOG_LEVEL=WARNING hides INFO lines."""
    configure_logging(_settings(log_level="WARNING"))
    logging.getLogger("bot").info("quiet")
    logging.getLogger("bot").warning("loud")
    assert "quiet" not in stderr.getvalue()
    assert "loud" in stderr.getvalue()


def test_noisy_http_clients_stay_quiet_even_at_debug(stderr: _Stderr) -> None:
    """httpx request lines (URLs, headers) never show up, even with LOG_LEVEL=DEBUG."""
    configure_logging(_settings(log_level="DEBUG"))
    logging.getLogger("httpx").info("HTTP Request: POST https://example.test/mcp")
    logging.getLogger("bot").debug("our debug line")
    assert "HTTP Request" not in stderr.getvalue()
    assert "our debug line" in stderr.getvalue()


class _CountedText(str):
    """Text that counts how often its repr is taken (as a log line's formatting would)."""

    reprs = 0

    def __repr__(self) -> str:
        type(self).reprs += 1
        return super().__repr__()


@pytest.mark.parametrize(("level", "formatted"), [("INFO", False), ("DEBUG", True)])
async def test_slack_calls_format_their_debug_line_only_at_debug(
    stderr: _Stderr, slack: FakeSlack, level: str, formatted: bool
) -> None:
    """slack_sdk builds a DEBUG line with the repr of each call's payload unless its own
    logger's level says otherwise: at INFO no payload is formatted, at DEBUG it is."""
    from slack_sdk.web.async_client import AsyncWebClient

    configure_logging(_settings(log_level=level))
    _CountedText.reprs = 0
    client = AsyncWebClient(token=BOT_TOKEN, base_url=slack.url)
    await client.chat_postMessage(channel="C1", text=_CountedText("hello"))
    assert ["hello"] == [call.args["text"] for call in slack.calls_to("chat.postMessage")]
    assert formatted == (_CountedText.reprs > 0)


def test_reconfiguring_replaces_the_handler_instead_of_doubling_lines(stderr: _Stderr) -> None:
    """The CLI and the runtime both configure logging: each line still appears once."""
    configure_logging(_settings())
    configure_logging(_settings())
    logging.getLogger("bot").warning("once")
    assert 1 == stderr.getvalue().count("once")


LEAKS = [
    pytest.param(f"token is {BOT_TOKEN}", id="configured-bot-token"),
    pytest.param(f"secret={SIGNING_SECRET}", id="configured-signing-secret"),
    pytest.param(f"app {APP_TOKEN}", id="configured-app-token"),
    pytest.param(f"key {API_KEY}", id="configured-api-key"),
    pytest.param("someone pasted xoxp-9999-8888-7777-abcdefabcdef", id="other-slack-user-token"),
    pytest.param("xoxe.xoxp-1-Mi0yLTEyMzQ1Njc4OTA", id="slack-refresh-token"),
    pytest.param("socket xapp-1-A999-888-fedcba9876", id="other-app-token"),
    pytest.param("url ?key=AIzaSyA_other-key-0123456789abcdefghij", id="other-google-api-key"),
    pytest.param("ya29.a0AfB_byC-oauth.token_value", id="oauth-access-token"),
    pytest.param("Authorization: Bearer abc.DEF-ghi_123", id="bearer-header"),
    pytest.param(
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----",
        id="pem-private-key",
    ),
    pytest.param("reply to https://hooks.slack.com/commands/T1/123/AbCdEf", id="response-url"),
]


@pytest.mark.parametrize("text", LEAKS)
def test_redactor_hides_configured_and_token_shaped_secrets(text: str) -> None:
    """Each kind of secret becomes [redacted], wherever it sits in the text."""
    redact = Redactor([BOT_TOKEN, SIGNING_SECRET, APP_TOKEN, API_KEY])
    result = redact(text)
    assert REDACTED in result
    for secret in (
        BOT_TOKEN,
        SIGNING_SECRET,
        APP_TOKEN,
        API_KEY,
        "9999-8888",
        "AfB_byC",
        "abc.DEF",
        "MIIEvQ",
        "AbCdEf",
    ):
        assert secret not in result


@pytest.mark.parametrize(
    "text",
    [
        "SLACK_BOT_TOKEN must be a bot token starting with xoxb-",
        "set SLACK_APP_TOKEN (xapp-…)",
        "How do I create a Cloud Storage bucket?",
        "the bearer of bad news",
        "docs.cloud.google.com/storage/docs/creating-buckets",
    ],
)
def test_redactor_leaves_ordinary_text_alone(text: str) -> None:
    """Prose that merely mentions token prefixes is not mangled."""
    assert text == Redactor([BOT_TOKEN])(text)


def test_short_configured_values_are_not_redacted_everywhere() -> None:
    """A one-letter 'secret' (a typo) must not blank every 'a' in the logs."""
    assert "a cat" == Redactor(["a"])("a cat")


def test_secrets_are_redacted_from_message_args_extras_and_exception(stderr: _Stderr) -> None:
    """Every way a secret can enter a record — format args, extra=, exception text — is covered."""
    configure_logging(_settings(log_format="json"))
    log = logging.getLogger("bot.leaky")
    log.info(
        "calling with %s",
        BOT_TOKEN,
        extra={"headers": {"X-Goog-Api-Key": API_KEY}, "ids": [APP_TOKEN]},
    )
    try:
        raise ValueError(f"bad signature for secret {SIGNING_SECRET}")
    except ValueError:
        log.exception("verification failed")
    logging.getLogger("slack_sdk.web").debug("Authorization: Bearer %s", "xoxb-3333-4444-ZZZZZZZZ")

    output = stderr.getvalue()
    for secret in (BOT_TOKEN, API_KEY, APP_TOKEN, SIGNING_SECRET, "xoxb-3333-4444-ZZZZZZZZ"):
        assert secret not in output
    entries = [json.loads(line) for line in output.splitlines()]
    assert f"calling with {REDACTED}" == entries[0]["message"]
    assert {"X-Goog-Api-Key": REDACTED} == entries[0]["headers"]
    assert [REDACTED] == entries[0]["ids"]
    assert f"ValueError: bad signature for secret {REDACTED}" in entries[1]["exception"]


def test_a_broken_format_string_still_gives_a_redacted_line() -> None:
    """A record whose args don't fit its message is kept (not dropped), and redacted."""
    record = logging.LogRecord("bot", logging.WARNING, __file__, 1, "two %s %s", (BOT_TOKEN,), None)
    assert RedactionFilter(Redactor([BOT_TOKEN])).filter(record)
    assert "two" in record.getMessage()
    assert BOT_TOKEN not in record.getMessage()
