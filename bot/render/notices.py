"""Short notices: what the bot says when it is not answering (restarting, a stale button, a
rate limit, a failure), why a result is not what was asked for, and the invite hint."""

from __future__ import annotations

import math
from datetime import datetime

from bot.models import Fallback
from bot.render.blocks import MAX_BLOCKS, Message, context, text_message
from bot.render.quota import render_quota_note, render_quota_wait

#: Bolt shows this when it cannot authorize a request (auth.test failed)
AUTHORIZE_FAILED = (
    "I can't confirm my Slack credentials right now (auth.test failed). "
    "Try again in a moment; if it keeps happening, an admin should check SLACK_BOT_TOKEN."
)

_FALLBACK_NOTES = {
    "answer_quota": (
        "The quota for generated answers is used up for now, so these are search results instead."
    ),
    "no_answer_tool": "This server does not generate answers, so these are search results.",
    "pay_not_configured": (
        "Google Pay & Wallet search is not configured (Pay credentials: "
        "GOOGLE_APPLICATION_CREDENTIALS and GOOGLE_CLOUD_PROJECT), so these are general results."
    ),
}


def fallback_note(fallback: Fallback, *, tz: str | None = None, now: datetime | None = None) -> str:
    """Why a result is not what was asked for, and for a quota when generated answers come
    back (in the reader's time zone `tz`, an IANA name; Pacific when unknown). Unescaped."""
    if fallback.reason == "answer_quota" and fallback.limit and fallback.until and now:
        size = fallback.limit_value or 0
        return render_quota_note(
            fallback.limit,
            fallback.until,
            tz=tz,
            per_minute=size if fallback.limit == "minute" else 0,
            per_day=size if fallback.limit == "day" else 0,
            per_user=size if fallback.limit == "user" else 0,
            now=now,
        )
    return _FALLBACK_NOTES[fallback.reason]


def render_quota_waiting(seconds: float, *, per_minute: int) -> Message:
    """Progress while the answer waits for a per-minute slot."""
    return text_message(render_quota_wait(seconds, per_minute=per_minute))


def render_quota_unknown() -> Message:
    return text_message(
        "I can't read the answer quota right now (the bot's state store is not answering). "
        "Questions still get answers; try /gdocs quota again in a moment."
    )


def render_restarting() -> Message:
    return text_message("I'm restarting — try again in a moment.")


def render_internal_error() -> Message:
    return text_message("Something went wrong on our side. Please try again in a moment.")


def render_stale_button() -> Message:
    return text_message(
        "That button does not point at a documentation page I can fetch "
        "(it may be out of date). Ask again with /gdocs."
    )


def render_fetching() -> Message:
    """A click's progress (shown as a reaction on the clicked message)."""
    return text_message("Fetching the document…")


def render_document_gone() -> Message:
    return text_message("That document is no longer available.")


def render_no_more_pages() -> Message:
    return text_message("That document has no more pages.")


def render_rate_limited(limit: int, retry_after: float) -> Message:
    seconds = max(1, math.ceil(retry_after))
    return text_message(
        f"You've asked {limit} questions in the last minute — try again in {seconds} s."
    )


RESTART_NOTE = "Sorry for the delay — I had to restart."


def with_restart_note(msg: Message) -> Message:
    """`msg` for work finished after a restart, opening with a short apology."""
    blocks = list(msg.get("blocks") or [])
    if blocks:
        blocks = [context(RESTART_NOTE), *blocks[: MAX_BLOCKS - 1]]
    return {"text": f"{RESTART_NOTE} {msg['text']}", "blocks": blocks}


def render_not_in_channel_hint() -> str:
    """What to tell a user (ephemerally) when the bot may not post in their channel."""
    return "I can't post in this channel — invite me with `/invite @gdocs` to share answers here."


def with_not_in_channel_hint(msg: Message) -> Message:
    """`msg` preceded by the "invite the bot" hint (for an answer shown only to the asker)."""
    hint = render_not_in_channel_hint()
    blocks = list(msg.get("blocks") or [])
    if blocks:
        blocks = [context(hint), *blocks[: MAX_BLOCKS - 1]]
    return {"text": f"{hint}\n{msg['text']}", "blocks": blocks}
