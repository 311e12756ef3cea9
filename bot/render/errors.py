"""Every sentence a user reads about an error: written here, from the error's code and facts.

Pure. An error raised by a presenter with its own finished sentence (`GdocsError.message`:
the CLI's argument checks, render/'s own refusals, the settings check) is shown as it is.
The facts' texts are already safe (redacted, one line, bounded) when the error is made.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.errors import ErrorFacts, GdocsError, QuotaExceeded, Reason, ServerKey
from bot.models import ServerStatus

#: how users know each server
SERVER_NAMES: dict[ServerKey, str] = {
    "developer_knowledge": "The Google documentation service",
    "pay": "The Google Pay & Wallet documentation service",
}
_ANY_SERVER = "The documentation service"
_OAUTH_FIX = "check GOOGLE_APPLICATION_CREDENTIALS and GOOGLE_CLOUD_PROJECT"
_AGAIN = "try again in a minute"

_Sentence = Callable[[str, ErrorFacts], str]


def _refused(server: str, f: ErrorFacts) -> str:
    return f"{server} refused the request" + (f": {f.detail}" if f.detail else "")


def _not_found(_: str, f: ErrorFacts) -> str:
    if f.name:
        return f"Not found in the documentation: {f.name}"
    return "That was not found in the documentation."


# each takes the server's name (`_ANY_SERVER` when the error names none) and the facts
_SENTENCES: dict[Reason, _Sentence] = {
    Reason.EMPTY_TEXT: lambda s, f: "There is nothing to look up: the text is empty.",
    Reason.TEXT_TOO_LONG: lambda s, f: (
        f"That is too long ({f.count} characters): keep it under {f.limit} characters."
    ),
    Reason.BAD_LANGUAGE: lambda s, f: (
        f"Not a language code: use a BCP-47 tag such as it-IT, not {f.user_text!r}."
    ),
    Reason.NOT_A_PAGE: lambda s, f: (
        "That is not a documentation page: give a URL like "
        "https://docs.cloud.google.com/storage/docs/creating-buckets "
        "or a name like documents/docs.cloud.google.com/storage/docs/creating-buckets."
    ),
    Reason.QUOTA_PROJECT: lambda s, f: (
        f"{s} wants a quota project: set GOOGLE_CLOUD_PROJECT to the project "
        f"where {f.api_service} is enabled."
    ),
    Reason.KEY_REFUSED: lambda s, f: (
        f"{s} refused the API key: check GOOGLE_API_KEY (a valid key that "
        f"may call {f.api_service})."
    ),
    Reason.NEEDS_OAUTH: lambda s, f: (
        f"{s} needs OAuth: set GOOGLE_APPLICATION_CREDENTIALS (a service "
        "account key file) and GOOGLE_CLOUD_PROJECT."
    ),
    Reason.NEEDS_CREDENTIALS: lambda s, f: (
        f"{s} needs credentials: set GOOGLE_API_KEY (or "
        "GOOGLE_APPLICATION_CREDENTIALS and GOOGLE_CLOUD_PROJECT for OAuth)."
    ),
    Reason.IAM_DENIED: lambda s, f: (
        f"{s} denied access: give the service account the IAM role "
        "roles/mcp.toolUser in GOOGLE_CLOUD_PROJECT (credentials from "
        "GOOGLE_APPLICATION_CREDENTIALS)."
    ),
    Reason.OAUTH_REFUSED: lambda s, f: f"{s} refused the OAuth credentials: {_OAUTH_FIX}.",
    Reason.NOT_ENABLED: lambda s, f: (
        f"{s} is not enabled for your Google Cloud project: run `gcloud "
        f"services enable {f.api_service} --project=PROJECT_ID` (or check {f.url_setting})."
    ),
    Reason.NO_CREDENTIALS: lambda s, f: (
        "No Google credentials found: set GOOGLE_APPLICATION_CREDENTIALS to a service "
        "account key file (GOOGLE_CLOUD_PROJECT alone works only on Google Cloud)."
    ),
    Reason.REFRESH_REFUSED: lambda s, f: (
        f"Google refused the OAuth credentials ({f.detail}): {_OAUTH_FIX}."
    ),
    Reason.REFRESH_UNANSWERED: lambda s, f: f"Google's token service did not answer — {_AGAIN}.",
    Reason.KEY_FILE_UNREADABLE: lambda s, f: (
        f"GOOGLE_APPLICATION_CREDENTIALS: cannot read a JSON key file at {f.name}."
    ),
    Reason.KEY_FILE_UNUSABLE: lambda s, f: (
        f"GOOGLE_APPLICATION_CREDENTIALS: {f.name} is not a usable Google credentials file."
    ),
    Reason.TIMED_OUT: lambda s, f: f"{s} did not answer in {f.seconds or 0:g} s — {_AGAIN}.",
    Reason.UNAVAILABLE: lambda s, f: f"{s} is unavailable right now ({f.detail}) — {_AGAIN}.",
    Reason.UNREADABLE: lambda s, f: f"{s} sent an answer the bot cannot read ({f.detail}).",
    Reason.UNREADABLE_RESULT: lambda s, f: (
        f"{s} sent a {f.tool} result the bot cannot read ({f.detail})."
    ),
    Reason.NOT_FOUND: _not_found,
    Reason.REFUSED: _refused,
    Reason.NO_FETCH_TOOL: lambda s, f: f"{s} offers no tool to fetch documents.",
}


def error_sentence(error: GdocsError) -> str:
    """What to tell a user about `error`: one line, unescaped (Slack's renderer escapes)."""
    facts = error.facts
    if facts is None:
        return error.message
    server = SERVER_NAMES[facts.server] if facts.server else _ANY_SERVER
    if facts.reason == Reason.OVER_QUOTA:
        return _quota(server, facts, error)
    return _SENTENCES[facts.reason](server, facts)


def _quota(server: str, facts: ErrorFacts, error: GdocsError) -> str:
    signal = error.signal if isinstance(error, QuotaExceeded) else None
    day = signal is not None and signal.limit == "day"
    if facts.tool == "answer_query" and day:
        return f"{server} has used up its answer quota for today."
    if facts.tool == "answer_query":
        return f"{server} is over its answer quota for now — {_AGAIN}."
    return f"{server} is over its quota — {_AGAIN}."


def status_detail(status: ServerStatus) -> str:
    """What `check` and `/readyz` say about one server: its error's sentence, or the detail."""
    return error_sentence(status.error) if status.error is not None else status.detail
