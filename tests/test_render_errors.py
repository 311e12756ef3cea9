"""bot.render.error_sentence: every sentence about an error is written from its code and facts."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.errors import (
    AuthError,
    ErrorFacts,
    GdocsError,
    InvalidInput,
    NotFound,
    QuotaExceeded,
    QuotaSignal,
    Reason,
    ServerKey,
    Unavailable,
)
from bot.models import ServerStatus
from bot.render import error_sentence, escape, render_error, status_detail

_BOT = Path(__file__).resolve().parent.parent / "bot"

_SERVER_REASONS = {
    Reason.QUOTA_PROJECT,
    Reason.KEY_REFUSED,
    Reason.NEEDS_OAUTH,
    Reason.NEEDS_CREDENTIALS,
    Reason.IAM_DENIED,
    Reason.OAUTH_REFUSED,
    Reason.NOT_ENABLED,
    Reason.OVER_QUOTA,
    Reason.TIMED_OUT,
    Reason.UNAVAILABLE,
    Reason.UNREADABLE,
    Reason.UNREADABLE_RESULT,
    Reason.REFUSED,
}


def _facts(reason: Reason, server: ServerKey | None = "pay") -> ErrorFacts:
    return ErrorFacts(
        reason,
        server=server,
        api_service="paydeveloper.googleapis.com",
        url_setting="PAY_MCP_URL",
        tool="search_documentation",
        detail="HTTP 503",
        name="documents/developers.google.com/pay/api",
        seconds=2.5,
        count=120,
        limit=100,
        user_text="xx_YY!",
    )


@pytest.mark.parametrize("reason", list(Reason))
def test_every_reason_reads_as_one_line_naming_its_server(reason: Reason) -> None:
    """Each Reason has a sentence: one line, no stray braces, the server named where it is
    about a server (so a new Reason without words fails here)."""
    sentence = error_sentence(GdocsError(facts=_facts(reason)))
    assert sentence.strip() == sentence
    assert "\n" not in sentence
    assert 20 < len(sentence) < 300
    assert "{" not in sentence
    assert "None" not in sentence
    if reason in _SERVER_REASONS:
        assert sentence.startswith("The Google Pay & Wallet documentation service")


@pytest.mark.parametrize(
    ("error", "sentence"),
    [
        (
            AuthError(facts=_facts(Reason.NOT_ENABLED, "developer_knowledge")),
            "The Google documentation service is not enabled for your Google Cloud project: "
            "run `gcloud services enable paydeveloper.googleapis.com --project=PROJECT_ID` "
            "(or check PAY_MCP_URL).",
        ),
        (
            Unavailable(facts=_facts(Reason.TIMED_OUT)),
            "The Google Pay & Wallet documentation service did not answer in 2.5 s — "
            "try again in a minute.",
        ),
        (
            InvalidInput(facts=_facts(Reason.TEXT_TOO_LONG)),
            "That is too long (120 characters): keep it under 100 characters.",
        ),
        (
            InvalidInput(facts=_facts(Reason.BAD_LANGUAGE)),
            "Not a language code: use a BCP-47 tag such as it-IT, not 'xx_YY!'.",
        ),
        (
            NotFound(facts=ErrorFacts(Reason.NOT_FOUND)),
            "That was not found in the documentation.",
        ),
        (
            InvalidInput(facts=ErrorFacts(Reason.REFUSED, server="developer_knowledge")),
            "The Google documentation service refused the request",
        ),
        (
            AuthError(facts=ErrorFacts(Reason.REFRESH_REFUSED, detail="invalid_grant")),
            "Google refused the OAuth credentials (invalid_grant): check "
            "GOOGLE_APPLICATION_CREDENTIALS and GOOGLE_CLOUD_PROJECT.",
        ),
        (InvalidInput("--vote takes up or down, not 'x'"), "--vote takes up or down, not 'x'"),
    ],
)
def test_sentences_are_written_from_the_facts(error: GdocsError, sentence: str) -> None:
    """The words come from the facts (or, for a presenter's own error, are its message)."""
    assert sentence == error_sentence(error)


@pytest.mark.parametrize(
    ("tool", "limit", "sentence"),
    [
        ("answer_query", "day", "has used up its answer quota for today."),
        ("answer_query", "minute", "is over its answer quota for now — try again in a minute."),
        ("answer_query", "unknown", "is over its answer quota for now — try again in a minute."),
        ("search_documents", "day", "has used up its quota for today."),
        ("search_documents", "minute", "is over its quota for now — try again in a minute."),
    ],
)
def test_quota_sentences_say_today_only_for_a_daily_quota(
    tool: str, limit: Literal["minute", "day", "unknown"], sentence: str
) -> None:
    """Only a day limit promises nothing before tomorrow (no "try again in a minute")."""
    facts = ErrorFacts(Reason.OVER_QUOTA, server="developer_knowledge", tool=tool)
    error = QuotaExceeded(signal=QuotaSignal(limit), facts=facts)
    assert f"The Google documentation service {sentence}" == error_sentence(error)


@given(st.text(min_size=1, max_size=40).filter(lambda t: t.strip() == t and t.isprintable()))
def test_what_the_user_typed_is_in_the_sentence_never_in_the_log_description(typed: str) -> None:
    """str(error) (what logs get) carries the reason, not the user's text."""
    error = InvalidInput(facts=ErrorFacts(Reason.BAD_LANGUAGE, user_text=typed))
    assert repr(typed) in error_sentence(error)
    assert "invalid_input: bad_language" == str(error)


def test_slack_and_the_terminal_show_the_same_sentence() -> None:
    """render_error (Slack) and status_detail (check, /readyz) both use error_sentence."""
    error = AuthError(facts=_facts(Reason.KEY_REFUSED), setting="GOOGLE_API_KEY")
    status = ServerStatus(server="pay", url="https://x", ok=False, detail=str(error), error=error)
    assert error_sentence(error) == status_detail(status)
    assert render_error(error)["text"].startswith(escape(error_sentence(error)))  # Slack: &amp;
    assert "MCP 2025-06-18" == status_detail(
        ServerStatus(server="pay", url="u", ok=True, detail="MCP 2025-06-18")
    )


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize(
    "path",
    [
        *sorted((_BOT / "upstream").glob("*.py")),
        *(_BOT / f"{name}.py" for name in ("errors", "models", "text", "names")),
    ],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_the_errors_makers_never_import_the_words(path: Path) -> None:
    """upstream/ and core make errors from facts; only render/ (and presenters) import the
    sentences, so no error maker can drift back to writing them."""
    assert not {m for m in _imports(path) if m == "bot.render" or m.startswith("bot.render.")}
