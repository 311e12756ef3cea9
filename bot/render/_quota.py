"""The words about answer_query's quota; times in the asker's zone "(your time)", else "PT"."""

from __future__ import annotations

import math
import re
from datetime import datetime, time, timedelta, tzinfo
from typing import TYPE_CHECKING, NamedTuple
from zoneinfo import ZoneInfo

from bot.render._text import Message, context, escape, section, text_message

if TYPE_CHECKING:  # only its shape: bot.quota's ledger is not render's business
    from bot.quota import QuotaState

PACIFIC = ZoneInfo("America/Los_Angeles")
_ZONE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+){0,2}$")


def viewer_zone(tz: str | None) -> tuple[tzinfo, str | None]:
    """The viewer's zone and its name, or Pacific and None when `tz` is missing or unknown."""
    if tz and len(tz) <= 64 and _ZONE_NAME.match(tz):
        try:
            return ZoneInfo(tz), tz
        except (KeyError, ValueError, OSError):  # ZoneInfoNotFoundError is a KeyError
            pass
    return PACIFIC, None


def at_time(when: datetime, *, tz: str | None, now: datetime) -> str:
    """ "at 09:00 (your time)", "tomorrow at 09:00 (your time)", "at midnight PT", …"""
    zone, known = viewer_zone(tz)
    local, today = when.astimezone(zone), now.astimezone(zone).date()
    clock = local.strftime("%H:%M")
    suffix = "(your time)" if known else "PT"
    if local.date() == today:
        return f"at {clock} {suffix}"
    if local.date() == today + timedelta(days=1):
        return f"at midnight {suffix}" if clock == "00:00" else f"tomorrow at {clock} {suffix}"
    return f"on {local:%A} {local.day} {local:%B} at {clock} {suffix}"


def in_about(seconds: float) -> str:
    """ "in about 40 s", "in about 3 min", "in a moment"."""
    if seconds < 1:
        return "in a moment"
    if seconds < 10:
        return f"in about {math.ceil(seconds)} s"
    if seconds < 90:
        return f"in about {5 * math.ceil(seconds / 5)} s"
    if seconds < 90 * 60:
        return f"in about {math.ceil(seconds / 60)} min"
    return f"in about {math.ceil(seconds / 3600)} h"


def _answers(count: int) -> str:
    return f"{count} generated answer{'s' if count != 1 else ''}"


class QuotaWords(NamedTuple):
    """One quota situation in one set of words: the stream's step says `headline`, the
    answer's note and Home say `sentence` (its size and when answers come back, when known)."""

    headline: str
    sentence: str


def _per_minute(size: int, back: str | None) -> QuotaWords:
    if size > 0:
        verb = "are" if size != 1 else "is"
        head = f"{size} answer{'s' if size != 1 else ''} a minute {verb} in use"
    else:
        head = "The per-minute limit for generated answers is reached"
    said = f"{head} — generated answers are back {back}." if back else f"{head}."
    return QuotaWords("Generated answers are busy this minute", said)


def _daily(size: int, back: str | None) -> QuotaWords:
    spent = f"Today's {_answers(size)}" if size > 0 else "Today's generated answers"
    said = f"{spent} {'is' if size == 1 else 'are'} used up"
    said += f"; they come back {back}." if back else "."
    return QuotaWords("Generated answers are used up today", said)


def _users(size: int, back: str | None) -> QuotaWords:
    yours = f"your {_answers(size)}" if size > 0 else "your generated answers"
    said = f"You've used {yours} for today" + (f"; they come back {back}." if back else ".")
    return QuotaWords("Your generated answers are used up today", said)


def _unknown(_: int, back: str | None) -> QuotaWords:
    head = "Generated answers are paused for a moment"
    return QuotaWords(head, f"{head} — back {back}." if back else f"{head}.")


#: limit → its words, and whether its comeback is a clock time (else "in about …")
_SITUATIONS = {"minute": (_per_minute, False), "day": (_daily, True), "user": (_users, True)}


def quota_words(
    limit: str | None,
    until: datetime | None = None,
    size: int = 0,
    *,
    tz: str | None = None,
    now: datetime | None = None,
) -> QuotaWords:
    """The words for a reached quota `limit` ("minute", "day", "user"; anything else is
    an unclear one) of `size` answers (0: unknown), back at `until` (None: unknown)."""
    said, at_clock = _SITUATIONS.get(limit or "", (_unknown, False))
    back = None
    if until is not None and now is not None:
        seconds = (until - now).total_seconds()
        back = at_time(until, tz=tz, now=now) if at_clock else in_about(seconds)
    return said(size, back)


def render_quota_waiting(wait: float, *, per_minute: int) -> Message:
    """What the asker sees while the bot waits for the minute window to open. Plain text."""
    if per_minute > 0:
        busy = f"All {per_minute} answers of this minute are in use"
    else:
        busy = "The per-minute limit for generated answers is reached"
    return text_message(
        f"{busy}; a slot frees {in_about(wait)}, so your answer takes a little longer…"
    )


def render_quota_status(state: QuotaState, *, tz: str | None, now: datetime) -> Message:
    """`/gdocs quota`: answers left today, this minute and the viewer's own, and the reset."""
    if state.left_today is None:
        lines = [f"• Today: {state.used_today} used (no daily limit set in the bot)"]
        text = f"{state.used_today} used today"
    else:
        lines = [f"• Today: *{state.left_today}* of {state.per_day} left for the team"]
        text = f"{state.left_today} of {state.per_day} left today"
    if state.left_this_minute is None:
        lines.append("• This minute: not limited by the bot")
    else:
        minute = f"• This minute: *{state.left_this_minute}* of {state.per_minute} free"
        if state.left_this_minute == 0 and state.next_slot is not None:
            minute += f", the next {in_about((state.next_slot - now).total_seconds())}"
        lines.append(minute)
        text += f", {state.left_this_minute} of {state.per_minute} free this minute"
    if state.user_left_today is not None and state.per_user_per_day > 0:
        lines.append(f"• Yours today: *{state.user_left_today}* of {state.per_user_per_day} left")
        text += f", {state.user_left_today} of {state.per_user_per_day} yours"
    pause = state.pause
    if pause is not None and pause.until > now:  # Google said no: the step's and note's words
        size = pause.limit_value or 0
        said = quota_words(pause.kind, pause.until, size, tz=tz, now=now).sentence
        lines.append(f"• Paused by Google: {said}")
    reset = at_time(state.next_reset, tz=tz, now=now)
    zone, known = viewer_zone(tz)
    if known and state.next_reset.astimezone(zone).time() != time(0):  # else said already
        reset += ", midnight Pacific time"
    note = (
        f"The daily count resets {reset}. Past a limit, questions get search results "
        "(search and documents are not limited)."
    )
    body = "\n".join(escape(line) for line in ["*Generated answers*", *lines])
    return {
        "text": escape(f"Generated answers: {text}."),
        "blocks": [section(body), context(escape(note))],
    }
