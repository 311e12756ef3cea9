"""Short notices, and every sentence a user reads about an error (from its reason and facts,
or its own finished `message`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime

from bot.errors import (
    ErrorCode,
    ErrorFacts,
    GdocsError,
    InvalidInput,
    QuotaExceeded,
    Reason,
    ServerKey,
)
from bot.models import Fallback, ServerStatus
from bot.render._quota import quota_words
from bot.render._text import (
    MAX_BLOCKS,
    MAX_BUTTON_VALUE_CHARS,
    Message,
    context,
    safe_command,
    text_message,
)
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
    Reason.NOT_A_PAGE: (
        "That is not a documentation page: give a URL like "
        "https://docs.cloud.google.com/storage/docs/creating-buckets "
        "or a name like documents/docs.cloud.google.com/storage/docs/creating-buckets."
    ),
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
    server = facts.server if facts is not None and facts.server else "developer_knowledge"
    return f"{said.format(s=_PEOPLE_NAMES[server])} — {_AGAIN}."


_AGAIN_PREFIX = "again1:"


def try_again_value(asked: str) -> str | None:
    """A Try again button's value: the text as it was typed (`private`, `search` and all,
    so it is routed the same), on one line and cut to fit; None when nothing is left."""
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


#: Bolt shows this when it cannot authorize a request (auth.test failed)
AUTHORIZE_FAILED = (
    "I can't confirm my Slack credentials right now (auth.test failed). "
    "Try again in a moment; if it keeps happening, an admin should check SLACK_BOT_TOKEN."
)

_FALLBACK_NOTES = {
    "no_answer_tool": "This server does not generate answers, so these are search results.",
    "pay_not_configured": (
        "Google Pay & Wallet search is not configured (Pay credentials: "
        "GOOGLE_APPLICATION_CREDENTIALS and GOOGLE_CLOUD_PROJECT), so these are general results."
    ),
}


def fallback_note(fallback: Fallback, *, tz: str | None = None, now: datetime | None = None) -> str:
    """Why a result is not what was asked for (unescaped), in the reader's time zone `tz`."""
    if fallback.reason == "answer_quota":  # the step's words (`quota_words`), said in full
        size = fallback.limit_value or 0
        said = quota_words(fallback.limit, fallback.until, size, tz=tz, now=now).sentence
        return f"{said} Here are search results instead."
    return _FALLBACK_NOTES[fallback.reason]


def render_rate_limited(limit: int, retry_after: float) -> Message:
    seconds = max(1, math.ceil(retry_after))
    return text_message(
        f"You've asked {limit} questions in the last minute — try again in {seconds} s."
    )


def forged(what: str) -> str:
    return f"That {what} is out of date or was not made by this bot."


NOT_IN_CHANNEL_HINT = (
    "I can't post in this channel — invite me with `/invite @gdocs` to share answers here."
)


def _note(text: str, emoji: str = "") -> tuple[str, str]:
    return text, f"{emoji} {text}" if emoji else text


_STATE_STORE_DOWN = "(the bot's state store is not answering)"
_ADMINS_ONLY = "Only workspace admins and owners may change this channel's settings"
#: kind → (fallback text, the mrkdwn of a context block or "" for none)
_NOTES: dict[str, tuple[str, str]] = {
    "feedback_recorded": _note("Thanks — your note is saved with your vote.", ":memo:"),
    "feedback_stale": (
        forged("feedback button"),
        f":hourglass: {forged('feedback button')} Nothing was recorded.",
    ),
    "shared_note": _note("Shared in the channel.", ":white_check_mark:"),
    "share_forged": _note(forged("Share button"), ":warning:"),
    "share_not_in_channel": _note(f"{NOT_IN_CHANNEL_HINT} Then press *Share in channel* again."),
    # a whole page is posted where it was asked, never privately
    "private_doc_refused": _note(
        "`private` works for questions and searches. A whole page is posted in the "
        "conversation: use `{command} doc …` without `private`, or ask me in a direct message."
    ),
}
#: kind → the text of a message without blocks
_TEXTS: dict[str, str] = {
    "quota_unknown": (
        f"I can't read the answer quota right now {_STATE_STORE_DOWN}. "
        "Questions still get answers; try /gdocs quota again in a moment."
    ),
    "restarting": "I'm restarting — try again in a moment.",
    "internal_error": "Something went wrong on our side. Please try again in a moment.",
    "stale_button": (
        "That button does not point at a documentation page I can fetch "
        "(it may be out of date). Ask again with /gdocs."
    ),
    "fetching": "Fetching the document…",
    "document_gone": "Google's docs service has no full text of that page: open its link instead.",
    "no_more_pages": "That document has no more pages.",
    # the message shortcut on one of the bot's own answers, or on a message without text
    "own_answer": (
        "That is one of my own answers: to ask more, reply in its thread (or mention me there)."
    ),
    "no_text": "That message has no text I could ask Google's docs about.",
    "channel_unchanged": (
        "That is this channel's setting already (`{command} channel` shows them all)."
    ),
    "channel_admins_only": (
        f"{_ADMINS_ONLY} (the bot is set up with CHANNEL_SETTINGS_ADMINS_ONLY). Ask one of them."
    ),
    "channel_role_unknown": (
        f"{_ADMINS_ONLY}, and I can't check your role with Slack right now. Try again in a moment."
    ),
    "channel_not_member": (
        "I'm not in this channel, so its settings would do nothing: invite me with "
        "`/invite @gdocs`, then try again. Nothing was changed."
    ),
    "channel_fixed": (
        "This channel is an answer channel by the bot's configuration (ANSWER_CHANNELS): "
        "whoever runs the bot can change that. `{command} channel private` and "
        "`followups` still work here."
    ),
    "channel_not_a_channel": (
        "Channel settings are for channels: use `/gdocs channel …` in the channel you mean."
    ),
    "channel_unavailable": (
        f"I can't read or save channel settings right now {_STATE_STORE_DOWN}. "
        "Nothing was changed; try again in a moment."
    ),
    "report_refused": (
        "The usage report is for workspace admins and owners only. "
        "Ask one of them, or whoever runs the bot (`gdocs-bot report`)."
    ),
    "report_unknown": "I can't read the usage figures right now; try again in a minute.",
}


def notice(kind: str, command: str = "/gdocs") -> Message:
    """A fixed short notice; `{command}` in it is the configured slash command."""
    text, note = _NOTES.get(kind) or (_TEXTS[kind], "")
    cmd = safe_command(command)
    note = note.replace("{command}", cmd)
    return {"text": text.replace("{command}", cmd), "blocks": [context(note)] if note else []}


RESTART_NOTE = "Sorry for the delay — I had to restart."


def _headed(msg: Message, note: str, joint: str) -> Message:
    blocks = list(msg.get("blocks") or [])
    blocks = [context(note), *blocks[: MAX_BLOCKS - 1]] if blocks else []
    return {"text": f"{note}{joint}{msg['text']}", "blocks": blocks}


def with_restart_note(msg: Message) -> Message:
    return _headed(msg, RESTART_NOTE, " ")


def with_not_in_channel_hint(msg: Message) -> Message:
    return _headed(msg, NOT_IN_CHANNEL_HINT, "\n")
