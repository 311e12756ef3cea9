"""Short notices: fixed texts, the quota fallback's note, the rate limit; errors' sentences
are in `_errors`."""

from __future__ import annotations

import math
from datetime import datetime

from bot.models import Fallback
from bot.render._quota import quota_words
from bot.render._text import MAX_BLOCKS, Message, context, safe_command, text_message

#: Bolt shows this when it cannot authorize a request (auth.test failed)
AUTHORIZE_FAILED = (
    "I can't confirm my Slack credentials right now (auth.test failed). "
    "Try again in a moment; if it keeps happening, an admin should check SLACK_BOT_TOKEN."
)
#: the same in OAuth mode: this workspace's installation is not in the store (or unreadable)
NOT_INSTALLED = (
    "I can't find this workspace's installation of the app right now. "
    "Try again in a moment; if it keeps happening, an admin should install the app again."
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
    "feedback_thanks": _note("Thanks for the feedback — glad it helped.", ":thumbsup:"),
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
    # read in a Slack Connect channel by both sides: "this workspace" would be the guest's own
    "guests": "I only answer people in the organisation that installed me.",
    "report_everywhere": (
        "The usage report covers every workspace this bot serves, so it is read where the "
        "bot runs (`gdocs-bot report`), not in Slack."
    ),
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
