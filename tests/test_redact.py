"""One redactor for logs and for upstream error messages: every kind of secret the bot
holds is hidden in both, so the two can never drift apart."""

from __future__ import annotations

import logging

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bot.observability.logging import RedactionFilter
from bot.redact import REDACTED, SECRET_SHAPES, Redactor
from bot.upstream import ServerContext

BOT_TOKEN = "xoxb-1111-2222-abcdefABCDEF"
APP_TOKEN = "xapp-1-A111-2222-abcdef0123"
SIGNING_SECRET = "8f14e45fceea167a5a36dedd4bea2543"
API_KEY = "AIzaSyD-0123456789abcdefghijklmnopqrs"
ACCESS_TOKEN = "ya29.a0AfH6SMBx-access_token.value"
REFRESH_TOKEN = "1//0gLk3H9x_refresh-token-0123456789abc"
REDIS_URL = "redis://bot:s3cr3t-Redis-pw@10.0.0.3:6379/0"

#: (what leaks, the part of it that must never be seen)
SECRETS = [
    pytest.param(f"token {BOT_TOKEN} rejected", BOT_TOKEN, id="bot-token"),
    pytest.param(f"app token {APP_TOKEN}", APP_TOKEN, id="app-token"),
    pytest.param(f"signature over {SIGNING_SECRET}", SIGNING_SECRET, id="signing-secret"),
    pytest.param(f"key={API_KEY}&q=x", API_KEY, id="api-key"),
    pytest.param(f"Authorization: Bearer {ACCESS_TOKEN}", ACCESS_TOKEN, id="oauth-access"),
    pytest.param(f'{{"refresh_token": "{REFRESH_TOKEN}"}}', REFRESH_TOKEN, id="oauth-refresh"),
    pytest.param(f"cannot connect to {REDIS_URL}", "s3cr3t-Redis-pw", id="redis-password"),
]

# the signing secret has no recognisable shape: it is hidden because it is configured
CONFIGURED = [BOT_TOKEN, APP_TOKEN, SIGNING_SECRET, API_KEY]


def _server(redact: Redactor) -> ServerContext:
    return ServerContext(
        key="developer_knowledge",
        url_setting="DEVELOPER_KNOWLEDGE_MCP_URL",
        api_service="developerknowledge.googleapis.com",
        auth="api_key",
        timeout=5.0,
        redact=redact,
    )


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_a_log_line_never_shows_a_secret(text: str, secret: str) -> None:
    """Through the logging filter, each kind of secret becomes [redacted]."""
    record = logging.LogRecord("bot", logging.WARNING, __file__, 1, "%s", (text,), None)
    record.detail = text  # an `extra=` field too
    RedactionFilter(Redactor(CONFIGURED)).filter(record)
    assert secret not in record.getMessage()
    assert secret not in str(record.detail)  # type: ignore[attr-defined]
    assert REDACTED in record.getMessage()


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_an_upstream_error_message_never_shows_a_secret(text: str, secret: str) -> None:
    """A server quoting a secret back in its error: the user-facing message hides it."""
    redact = Redactor(current=lambda: CONFIGURED)
    server = _server(redact)
    error = server.from_http(
        400, f'{{"error": {{"message": "{text}"}}}}'.encode(), tool="x", modern=True
    )
    assert secret not in str(error)
    assert secret not in server.quote(text)


def test_credentials_that_change_are_read_at_each_use() -> None:
    """An OAuth token refreshed after the redactor was built is still hidden."""
    tokens = ["first-token-0001"]
    redact = Redactor(current=lambda: tokens)
    tokens[0] = "second-token-0002"
    assert "second-token-0002" not in redact("sent second-token-0002")


def _every_shape_applied(text: str) -> str:
    """The shapes' substitutions, all of them, with no shortcut (the reference)."""
    for pattern, replacement in SECRET_SHAPES:
        text = pattern.sub(replacement, text)
    return text


_PIECES = st.sampled_from(
    [
        "xoxb-",
        "xoxp.",
        "xapp-1-",
        "AIza",
        "ya29.",
        "1//0",
        "Bearer ",
        "BEARER\t",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----END RSA PRIVATE KEY-----",
        "https://hooks.slack.com/",
        "commands/T1/B2/",
        "REDIS://",
        "rediss://user:",
        "pw@host",
        "abcDEF0123456789_-",
        " ",
        "\n",
        "x",
        ":",
        "/",
    ]
)


@given(st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=12).map("".join))
@example(f"Authorization: Bearer {ACCESS_TOKEN}")
@example(REDIS_URL.upper())
def test_text_with_no_token_prefix_is_redacted_as_the_shapes_say(text: str) -> None:
    """Skipping the shapes for a text without any of their prefixes never lets one through."""
    assert Redactor()(text) == _every_shape_applied(text)
