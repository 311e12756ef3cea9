"""Every sentence a user reads about an error: for `check` and the logs, from its reason
and facts (or its own finished `message`); for people in Slack, trouble that passes in
their words, with the value of the Try again button that asks again."""

from __future__ import annotations

from collections.abc import Callable

from bot.errors import (
    ErrorCode,
    ErrorFacts,
    GdocsError,
    InvalidInput,
    QuotaExceeded,
    Reason,
    ServerKey,
)
from bot.models import ServerStatus
from bot.render._channels import NEEDS_REST
from bot.render._notices import forged
from bot.render._text import MAX_BUTTON_VALUE_CHARS
from bot.text import one_line, truncate

#: how users know each server
SERVER_NAMES: dict[ServerKey, str] = {
    "developer_knowledge": "The Google documentation service",
    "pay": "The Google Pay & Wallet documentation service",
}
_ANY_SERVER = "The documentation service"
_AGAIN = "try again in a minute"
_OAUTH = "GOOGLE_APPLICATION_CREDENTIALS and GOOGLE_CLOUD_PROJECT"


def _refused(server: str, f: ErrorFacts) -> str:
    return f"{server} refused the request" + (f": {f.detail}" if f.detail else "")


def _not_found(_: str, f: ErrorFacts) -> str:
    if f.name:
        return f"Not found in the documentation: {f.name}"
    return "That was not found in the documentation."


def _team_too_long(_: str, f: ErrorFacts) -> str:
    unit = "phrasings" if f.name == "list of also answers" else "characters"
    return f"The {f.name} is too long ({f.count} {unit}): keep it to {f.limit} {unit} at most."


def _timed_out(server: str, f: ErrorFacts) -> str:
    return f"{server} did not answer in {f.seconds or 0:g} s — {_AGAIN}."


# a template filled with `s` (the server's name, `_ANY_SERVER` when the error names none) and
# `f` (the facts), or a function of the two
_SENTENCES: dict[Reason, str | Callable[[str, ErrorFacts], str]] = {
    Reason.EMPTY_TEXT: "There is nothing to look up: the text is empty.",
    Reason.TEXT_TOO_LONG: (
        "That is too long ({f.count} characters): keep it under {f.limit} characters."
    ),
    Reason.BAD_LANGUAGE: (
        "Not a language code: use a BCP-47 tag such as it-IT, not {f.user_text!r}."
    ),
    Reason.SCOPE_NEEDS_REST: (
        f"Limiting answers to products {NEEDS_REST}: ask whoever runs the bot."
    ),
    Reason.NOT_A_PAGE: (
        "That is not a documentation page: give a URL like "
        "https://docs.cloud.google.com/storage/docs/creating-buckets "
        "or a name like documents/docs.cloud.google.com/storage/docs/creating-buckets."
    ),
    Reason.TEAM_EMPTY: "A team answer needs a question and an answer.",
    Reason.TEAM_TOO_LONG: _team_too_long,
    Reason.TEAM_FULL: "The team already keeps {f.limit} answers: remove one to save another.",
    Reason.TEAM_CLASH: "That is already answered by the team answer to {f.user_text!r}.",
    Reason.QUOTA_PROJECT: (
        "{s} wants a quota project: set GOOGLE_CLOUD_PROJECT to the project "
        "where {f.api_service} is enabled."
    ),
    Reason.KEY_REFUSED: (
        "{s} refused the API key: check GOOGLE_API_KEY (a valid key that may call {f.api_service})."
    ),
    Reason.NEEDS_OAUTH: (
        "{s} needs OAuth: set GOOGLE_APPLICATION_CREDENTIALS (a service "
        "account key file) and GOOGLE_CLOUD_PROJECT."
    ),
    Reason.NEEDS_CREDENTIALS: (
        f"{{s}} needs credentials: set GOOGLE_API_KEY (or {_OAUTH} for OAuth)."
    ),
    Reason.IAM_DENIED: (
        "{s} denied access: give the service account the IAM role "
        "roles/mcp.toolUser in GOOGLE_CLOUD_PROJECT (credentials from "
        "GOOGLE_APPLICATION_CREDENTIALS)."
    ),
    Reason.OAUTH_REFUSED: f"{{s}} refused the OAuth credentials: check {_OAUTH}.",
    Reason.NOT_ENABLED: (
        "{s} is not enabled for your Google Cloud project: run `gcloud services enable "
        "{f.api_service} --project=PROJECT_ID` (or check {f.url_setting})."
    ),
    Reason.NO_CREDENTIALS: (
        "No Google credentials found: set GOOGLE_APPLICATION_CREDENTIALS to a service "
        "account key file (GOOGLE_CLOUD_PROJECT alone works only on Google Cloud)."
    ),
    Reason.REFRESH_REFUSED: f"Google refused the OAuth credentials ({{f.detail}}): check {_OAUTH}.",
    Reason.REFRESH_UNANSWERED: f"Google's token service did not answer — {_AGAIN}.",
    Reason.KEY_FILE_UNREADABLE: (
        "GOOGLE_APPLICATION_CREDENTIALS: cannot read a JSON key file at {f.name}."
    ),
    Reason.KEY_FILE_UNUSABLE: (
        "GOOGLE_APPLICATION_CREDENTIALS: {f.name} is not a usable Google credentials file."
    ),
    Reason.TIMED_OUT: _timed_out,
    Reason.UNAVAILABLE: f"{{s}} is unavailable right now ({{f.detail}}) — {_AGAIN}.",
    Reason.UNREADABLE: "{s} sent an answer the bot cannot read ({f.detail}).",
    Reason.UNREADABLE_RESULT: "{s} sent a {f.tool} result the bot cannot read ({f.detail}).",
    Reason.NOT_FOUND: _not_found,
    Reason.REFUSED: _refused,
    Reason.NO_FETCH_TOOL: "{s} offers no tool to fetch documents.",
}


def error_sentence(error: GdocsError) -> str:
    """What to tell a user about `error`: one line, unescaped (Slack's renderer escapes)."""
    facts = error.facts
    if facts is None:
        return error.message
    server = SERVER_NAMES[facts.server] if facts.server else _ANY_SERVER
    if facts.reason == Reason.OVER_QUOTA:
        return _quota(server, facts, error)
    said = _SENTENCES[facts.reason]
    return said.format(s=server, f=facts) if isinstance(said, str) else said(server, facts)


#: trouble that passes by itself, in people's words: the technical sentence (an HTTP status,
#: a quote of the server) is for logs and `gdocs-bot check`, never for Slack
_PASSING: dict[ErrorCode, str] = {
    ErrorCode.TIMEOUT: "{s} took too long to answer",
    ErrorCode.UNAVAILABLE: "{s} isn't answering right now",
    ErrorCode.PROTOCOL: "{s} sent an answer I couldn't read",
    ErrorCode.QUOTA: "{s} is getting too many requests right now",
}
_PEOPLE_NAMES: dict[ServerKey, str] = {
    "developer_knowledge": "Google's documentation",
    "pay": "The Google Pay & Wallet documentation",
}


def passing_trouble(error: GdocsError) -> str | None:
    """One sentence for people about trouble worth trying again; None for any other error."""
    facts, said = error.facts, _PASSING.get(error.code)
    if said is None or (facts is not None and facts.reason == Reason.NO_FETCH_TOOL):
        return None  # a server without a fetch tool keeps lacking it
    if _for_today(error):
        return None  # its sentence says until when
    server = facts.server if facts is not None and facts.server else "developer_knowledge"
    return f"{said.format(s=_PEOPLE_NAMES[server])} — {_AGAIN}."


_AGAIN_PREFIX = "again1:"


def try_again_value(asked: str) -> str | None:
    """A Try again button's value: the text as typed (routed the same), on one line, cut to
    fit; None when nothing is left."""
    room = MAX_BUTTON_VALUE_CHARS - len(_AGAIN_PREFIX)
    text = truncate(one_line(asked), room, at_word=True)
    return _AGAIN_PREFIX + text if text else None


def decode_try_again(value: object) -> str:
    """The text a Try again button asks again."""
    if isinstance(value, str) and len(value) <= MAX_BUTTON_VALUE_CHARS:
        text = value.removeprefix(_AGAIN_PREFIX)
        if text != value and text and text == one_line(text):
            return text
    raise InvalidInput(forged("Try again button"))


def _quota(server: str, facts: ErrorFacts, error: GdocsError) -> str:
    what = "answer quota" if facts.tool == "answer_query" else "quota"
    if _for_today(error):
        return f"{server} has used up its {what} for today."
    return f"{server} is over its {what} for now — {_AGAIN}."


def _for_today(error: GdocsError) -> bool:
    """A daily quota: trying again in a minute will not help."""
    signal = error.signal if isinstance(error, QuotaExceeded) else None
    return signal is not None and signal.limit == "day"


def status_detail(status: ServerStatus) -> str:
    """What `check` and `/readyz` say about one server: its error's sentence, or the detail."""
    return error_sentence(status.error) if status.error is not None else status.detail
