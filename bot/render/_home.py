"""The Home tab, and the week's report for workspace admins."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, Literal, Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.channels import Followups
from bot.errors import InvalidInput
from bot.render._channel import ChannelLine, render_home_channels
from bot.render._text import (
    MAX_BUTTON_VALUE_CHARS,
    Block,
    Message,
    button,
    context,
    divider,
    escape,
    escape_truncated,
    header,
    section,
    text_message,
)
from bot.text import strip_controls, truncate

GAP_TOPIC_CHARS = 80


class WeekView(Protocol):
    @property
    def since(self) -> str: ...
    @property
    def until(self) -> str: ...
    @property
    def questions(self) -> int: ...
    @property
    def generated(self) -> int: ...
    @property
    def search_only(self) -> int: ...
    @property
    def unanswered(self) -> int: ...
    @property
    def gaps(self) -> Sequence[tuple[str, int]]: ...


def _percent(part: int, whole: int) -> str:
    return f"{round(100 * part / whole)} %" if whole else "–"


def week_lines(week: WeekView) -> tuple[str, str]:
    """(the figures, the gaps) as two mrkdwn lines."""
    figures = (
        f"*{week.questions}* questions · *{_percent(week.generated, week.questions)}* got a "
        f"generated answer · {week.search_only} search results only · "
        f"{week.unanswered} no answer"
    )
    if week.gaps:
        gaps = "\n".join(
            f"{i}. {escape_truncated(topic, GAP_TOPIC_CHARS, at_word=True)} ({count}×)"
            for i, (topic, count) in enumerate(week.gaps, start=1)
        )
        gaps = f"*Top gaps* (search only, no hit, 👎, unverified commands)\n{gaps}"
    else:
        gaps = "*Top gaps:* none this week."
    return figures, gaps


def week_blocks(week: WeekView, command: str = "/gdocs") -> list[Block]:
    """The Home tab's "This week" section (admins only)."""
    figures, gaps = week_lines(week)
    return [
        header("This week"),
        section(figures),
        section(gaps),
        context(
            f"{week.since} to {week.until}, Pacific days. Only admins see this. "
            f"`{command} report` posts it to you; `gdocs-bot report --format html` has it all."
        ),
    ]


def render_week_report(week: WeekView) -> Message:
    """The private reply to `/gdocs report`."""
    figures, gaps = week_lines(week)
    text = f"This week ({week.since} to {week.until}): {week.questions} questions"
    blocks = [
        section(f"*This week* ({week.since} to {week.until}, Pacific days)"),
        section(figures),
        section(gaps),
        context("The whole picture: `gdocs-bot report --format html` where the bot runs."),
    ]
    return {"text": text, "blocks": blocks}


def render_report_refused() -> Message:
    return text_message(
        "The usage report is for workspace admins and owners only. "
        "Ask one of them, or whoever runs the bot (`gdocs-bot report`)."
    )


def render_report_unknown() -> Message:
    return text_message("I can't read the usage figures right now; try again in a minute.")


MAX_HOME_BLOCKS = 100
MAX_RECENT = 10
ACTION_ASK_AGAIN_PREFIX = "ask_again:"
ASK_AGAIN_ACTION_RE = re.compile(rf"^{re.escape(ACTION_ASK_AGAIN_PREFIX)}\d+\Z")
#: a recent question is shown cut to this many characters
RECENT_QUESTION_CHARS = 200
PACIFIC = "America/Los_Angeles"
EXAMPLE_QUESTIONS = (
    "How do I create a Cloud Storage bucket with gcloud?",
    "What is the difference between Cloud Firestore and the Realtime Database?",
    "How do I ask for the location permission in an Android app?",
)
_ASK_PREFIX = "ask1:"
# linear and bounded: a time zone of at most 64 characters (checked first), and a command
_TZ_KEY_RE = re.compile(r"[A-Za-z0-9_+\-]+(?:/[A-Za-z0-9_+\-]+){0,3}")
_FORGED = "That Ask again button is out of date or was not made by this bot."
_COMMAND_RE = re.compile(r"/[a-z0-9_-]{1,31}")


@dataclass(frozen=True)
class RecentQuestion:
    text: str
    asked_at: datetime


@dataclass(frozen=True)
class HomeInput:
    """What the Home tab shows. Naive datetimes are taken as UTC."""

    #: the team's generated answers left today, and the daily allowance
    answers_left: int
    per_day: int
    #: when the daily allowance comes back (midnight Pacific), and the time now
    resets_at: datetime
    now: datetime
    #: "counted": the figures above are the ledger's; "unlimited": the bot keeps no daily
    #: limit (ANSWER_QUOTA_PER_DAY=0); "unknown": the ledger could not be read just now
    quota: Literal["counted", "unlimited", "unknown"] = "counted"
    #: the viewer's IANA time zone (users.info `tz`); None or unknown: Pacific, shown "PT"
    viewer_tz: str | None = None
    #: whether the documentation servers answer, and a short detail
    ready: bool = True
    ready_detail: str = ""
    #: the viewer's own recent questions, newest first
    recent: Sequence[RecentQuestion] = field(default_factory=tuple)
    command: str = "/gdocs"
    #: channels the viewer is in that have settings (`/gdocs channel`, ANSWER_CHANNELS)
    channels: Sequence[ChannelLine] = field(default_factory=tuple)
    #: THREAD_FOLLOWUPS, what a channel without its own `followups` follows
    default_followups: Followups = "asker"
    #: the week's usage, shown to workspace admins only (None: not an admin, or unknown)
    week: WeekView | None = None


def _one_line(text: str) -> str:
    return " ".join(strip_controls(text).split())


def encode_ask_again(question: str) -> str:
    """The value of an "Ask again" button: the question on one line, cut to fit 2000."""
    text = truncate(_one_line(question), MAX_BUTTON_VALUE_CHARS - len(_ASK_PREFIX), at_word=True)
    if not text:
        raise InvalidInput("There is no question to ask again.")
    return _ASK_PREFIX + text


def decode_ask_again(value: object) -> str:
    """The question an "Ask again" click asks; InvalidInput for anything we did not make."""
    if not isinstance(value, str) or len(value) > MAX_BUTTON_VALUE_CHARS:
        raise InvalidInput(_FORGED)
    if not value.startswith(_ASK_PREFIX):
        raise InvalidInput(_FORGED)
    question = value[len(_ASK_PREFIX) :]
    if not question or question != _one_line(question):
        raise InvalidInput(_FORGED)
    return question


def viewer_zone(tz: str | None) -> tuple[tzinfo, str]:
    """(zone, label) for a viewer: their IANA zone labelled by name, else Pacific as "PT"
    (Google's daily quotas reset at midnight Pacific), else UTC if the system has no zones."""
    if tz and len(tz) <= 64 and _TZ_KEY_RE.fullmatch(tz):
        try:
            return ZoneInfo(tz), tz.replace("_", " ")
        except (ZoneInfoNotFoundError, ValueError, OSError):
            pass
    try:
        return ZoneInfo(PACIFIC), "PT"
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return UTC, "UTC"


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _day_word(moment: datetime, now: datetime) -> str:
    days = (moment.date() - now.date()).days
    if days == 0:
        return "today"
    if days == 1:
        return "tomorrow"
    if days == -1:
        return "yesterday"
    return f"{moment:%a} {moment.day} {moment:%b}"


def _duration(delta: timedelta) -> str:
    minutes = max(int(delta.total_seconds() // 60), 1)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


def when_back(resets_at: datetime, now: datetime, tz: str | None) -> str:
    """ "at 09:00 tomorrow, Europe/Rome time (in 7 h 5 min)" in the viewer's zone."""
    zone, label = viewer_zone(tz)
    local, local_now = _aware(resets_at).astimezone(zone), _aware(now).astimezone(zone)
    if local <= local_now:
        return "any minute now"
    shown = label if label in ("PT", "UTC") else f"{label} time"
    day = _day_word(local, local_now)
    return f"at {local:%H:%M} {day}, {shown} (in {_duration(local - local_now)})"


def asked_when(asked_at: datetime, now: datetime, tz: str | None) -> str:
    """ "just now", "5 min ago", "today at 14:05", "yesterday at 09:12", "Mon 3 Mar at 10:00"."""
    zone, _ = viewer_zone(tz)
    local, local_now = _aware(asked_at).astimezone(zone), _aware(now).astimezone(zone)
    age = local_now - local
    if age < timedelta(minutes=1):
        return "just now"
    if age < timedelta(hours=1):
        return f"{int(age.total_seconds() // 60)} min ago"
    return f"{_day_word(local, local_now)} at {local:%H:%M}"


def _about(command: str) -> list[Block]:
    intro = (
        "I answer questions about Google's developer products (Cloud, Firebase, Android, "
        "Maps, Pay and more) from Google's own documentation, and link the pages I used. "
        f"Ask with `{command}`, mention me in a thread, or write to me in the *Messages* tab."
    )
    examples = "\n".join(f"• {escape(q)}" for q in EXAMPLE_QUESTIONS)
    forms = "\n".join(
        [
            f"• `{command} <question>` — a short answer with links to its sources",
            f"• `{command} search <query>` — matching documentation pages",
            f"• `{command} pay <query>` — the Google Pay & Wallet developer docs",
            f"• `{command} doc <URL>` — a whole documentation page",
            f"• `{command} private <question>` — an answer only you see, to share if you like",
            f"• `{command} quota` — the team's generated answers left today",
        ]
    )
    return [
        header("gdocs: answers from Google's developer docs"),
        section(intro),
        section(f"*Try asking*\n{examples}"),
        section(f"*Ways to ask*\n{escape(forms)}"),
    ]


def _status(view_input: HomeInput) -> list[Block]:
    per_day = max(view_input.per_day, 0)
    left = min(max(view_input.answers_left, 0), per_day)
    back = when_back(view_input.resets_at, view_input.now, view_input.viewer_tz)
    if view_input.quota == "unknown":
        quota = (
            "*Generated answers today:* I can't read the team's count right now; "
            "questions still get answers."
        )
    elif view_input.quota == "unlimited":
        quota = (
            "*Generated answers today:* this bot sets no daily limit; "
            "Google's quota for the project still applies."
        )
    elif per_day == 0:
        quota = "*Generated answers:* none today; I answer with matching documentation pages."
    elif left == 0:
        quota = (
            f"*Generated answers today:* all {per_day} are used; until they come back {back}, "
            "I answer with matching documentation pages."
        )
    else:
        quota = (
            f"*Generated answers today:* {left} of {per_day} left for the team. "
            f"The day's {per_day} come back {back}."
        )
    if view_input.ready:
        state = ":large_green_circle: Google's documentation servers are answering."
    else:
        state = (
            ":red_circle: Google's documentation servers are not answering right now; "
            "questions may fail until they are back."
        )
    blocks = [section(quota), section(state)]
    detail = escape_truncated(_one_line(view_input.ready_detail), 300)
    if detail:
        blocks.append(context(detail))
    return blocks


def _recent(view_input: HomeInput) -> list[Block]:
    blocks: list[Block] = [header("Your recent questions")]
    for index, asked in enumerate(view_input.recent[:MAX_RECENT]):
        try:
            value = encode_ask_again(asked.text)
        except InvalidInput:
            continue  # nothing left of it to show or ask
        shown = escape_truncated(_one_line(asked.text), RECENT_QUESTION_CHARS, at_word=True)
        when = asked_when(asked.asked_at, view_input.now, view_input.viewer_tz)
        block = section(f"“{shown}”\n_{when}_")
        block["accessory"] = button("Ask again", f"{ACTION_ASK_AGAIN_PREFIX}{index}", value)
        blocks.append(block)
    if len(blocks) == 1:
        blocks.append(
            section(
                "You haven't asked me anything yet. Pick an example above, or ask away: "
                "your questions show up here so you can ask them again."
            )
        )
    else:
        blocks.append(context("Ask again answers in our direct messages."))
    return blocks


def render_home(view_input: HomeInput) -> dict[str, Any]:
    """The Home tab view: `{"type": "home", "blocks": [...]}`, at most 100 blocks."""
    command = view_input.command if _COMMAND_RE.fullmatch(view_input.command) else "/gdocs"
    channels = render_home_channels(
        view_input.channels, default_followups=view_input.default_followups
    )
    week = [*week_blocks(view_input.week, command), divider()] if view_input.week else []
    blocks = [*_about(command), divider(), *_status(view_input), divider(), *week]
    if channels:
        blocks += [*channels, divider()]
    blocks += _recent(view_input)
    return {"type": "home", "blocks": blocks[:MAX_HOME_BLOCKS]}
