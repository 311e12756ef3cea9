"""The Home tab, channel settings in words, and the week's report for workspace admins;
plain values in, no clock."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from bot.channels import CHANNEL_ID_RE, ChannelSettings, Field, Followups
from bot.errors import InvalidInput
from bot.render._notices import forged
from bot.render._quota import viewer_zone
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
    mention,
    safe_command,
    section,
    text_message,
)
from bot.text import one_line, truncate

if TYPE_CHECKING:
    from bot.report import Report

MAX_RECENT = 10
_ACTION_ASK_AGAIN_PREFIX = "ask_again:"
ASK_AGAIN_ACTION_RE = re.compile(rf"^{re.escape(_ACTION_ASK_AGAIN_PREFIX)}\d+\Z")
_EXAMPLE_QUESTIONS = (
    "How do I create a Cloud Storage bucket with gcloud?",
    "What is the difference between Cloud Firestore and the Realtime Database?",
    "How do I ask for the location permission in an Android app?",
)
_ASK_PREFIX = "ask1:"
MAX_HOME_CHANNELS = 10

_FOLLOWUP_WORDS: dict[Followups, str] = {
    "asker": "from the person who asked first",
    "anyone": "from anyone in the thread",
    "off": "never (a mention is needed for every answer)",
}


@dataclass(frozen=True)
class ChannelLine:
    """`fixed_auto`: ANSWER_CHANNELS makes it an answer channel."""

    channel: str
    settings: ChannelSettings
    fixed_auto: bool = False


def _channel_ref(channel: str) -> str:
    return f"<#{channel}>" if CHANNEL_ID_RE.fullmatch(channel) else "this channel"


def _describe(settings: ChannelSettings, default_followups: Followups, fixed_auto: bool) -> str:
    auto = "*Answers:* automatic — every question asked here is answered in its thread"
    if fixed_auto:
        mode = f"{auto} (set by the bot's configuration, ANSWER_CHANNELS)"
    else:
        mode = (
            auto
            if settings.mode == "auto"
            else "*Answers:* when someone mentions me or uses the command"
        )
    private = (
        "*Private:* on — each answer goes to its asker alone, with a Share button"
        if settings.private
        else "*Private:* off — answers are posted for everyone"
    )
    policy = settings.followups or default_followups
    origin = "" if settings.followups else " (the bot's default)"
    return f"{mode}\n{private}\n*Follow-ups without a mention:* {_FOLLOWUP_WORDS[policy]}{origin}"


def render_channel_usage(command: str = "/gdocs") -> Message:
    lines = [
        f"`{command} channel` — show this channel's settings",
        f"`{command} channel auto` — answer every question asked here, in its thread",
        f"`{command} channel mentions` — answer only when mentioned (the default)",
        f"`{command} channel private on|off` — answers here go to the asker alone",
        f"`{command} channel followups asker|anyone|off|default` — whose follow-ups in "
        "my threads I answer without a mention",
    ]
    text = "Channel settings:\n" + "\n".join(lines)
    return {"text": text, "blocks": [section(text)]}


def render_channel_settings(
    channel: str,
    settings: ChannelSettings,
    *,
    default_followups: Followups,
    fixed_auto: bool,
    command: str = "/gdocs",
) -> Message:
    """`/gdocs channel`: the channel's settings, and how to change them."""
    lines = _describe(settings, default_followups, fixed_auto)
    title = f"Settings in {_channel_ref(channel)}"
    blocks = [
        section(f"*{title}*\n{lines}"),
        context(f"`{command} channel help` lists the ways to change them."),
    ]
    return {"text": f"{title}: " + lines.replace("*", "").replace("\n", "; "), "blocks": blocks}


def render_channel_notice(
    user: str, field: Field, settings: ChannelSettings, command: str = "/gdocs"
) -> Message:
    """What a change posts in the channel, so everyone sees it and how to undo it."""
    who = mention(user) or "Someone"
    if field == "mode" and settings.mode == "auto":
        text = (
            f"{who} turned on automatic answers here: I answer every question asked in this "
            f"channel, in its thread — `{command} channel mentions` turns them off."
        )
    elif field == "mode":
        text = (
            f"{who} turned off automatic answers here: mention me to ask — "
            f"`{command} channel auto` turns them back on."
        )
    elif field == "private" and settings.private:
        text = (
            f"{who} made my answers here private: each asker sees their answer alone and may "
            f"share it — `{command} channel private off` undoes it."
        )
    elif field == "private":
        text = (
            f"{who} made my answers here visible to everyone again — "
            f"`{command} channel private on` makes them private."
        )
    else:
        policy = settings.followups
        words = _FOLLOWUP_WORDS[policy] if policy else "as the bot's default says"
        text = (
            f"{who} changed which follow-ups I answer here without a mention: {words} — "
            f"`{command} channel` shows the settings."
        )
    return text_message(text)


def _channels(lines: Sequence[ChannelLine], default_followups: Followups) -> list[Block]:
    shown = [line for line in lines if CHANNEL_ID_RE.fullmatch(line.channel)][:MAX_HOME_CHANNELS]
    if not shown:
        return []
    blocks = [header("Channel settings")]
    for line in shown:
        words = _describe(line.settings, default_followups, line.fixed_auto)
        blocks.append(section(f"{_channel_ref(line.channel)}\n{words}"))
    return [*blocks, context("`/gdocs channel help` in a channel changes its settings.")]


@dataclass(frozen=True)
class RecentQuestion:
    text: str
    asked_at: datetime


@dataclass(frozen=True)
class HomeInput:
    """What the Home tab shows. Naive datetimes are taken as UTC."""

    answers_left: int
    per_day: int
    #: when the daily allowance comes back (midnight Pacific)
    resets_at: datetime
    now: datetime
    #: "unlimited": ANSWER_QUOTA_PER_DAY=0; "unknown": the ledger could not be read
    quota: Literal["counted", "unlimited", "unknown"] = "counted"
    #: the viewer's IANA time zone (users.info `tz`); None or unknown: Pacific, shown "PT"
    viewer_tz: str | None = None
    ready: bool = True
    ready_detail: str = ""
    #: newest first
    recent: Sequence[RecentQuestion] = field(default_factory=tuple)
    command: str = "/gdocs"
    channels: Sequence[ChannelLine] = field(default_factory=tuple)
    #: THREAD_FOLLOWUPS, what a channel without its own `followups` follows
    default_followups: Followups = "asker"
    #: shown to workspace admins only
    week: Report | None = None


def _week_lines(week: Report) -> tuple[str, str]:
    t = week.total
    share = f"{round(100 * t.generated / t.questions)} %" if t.questions else "–"
    figures = (
        f"*{t.questions}* questions · *{share}* got a generated answer · "
        f"{t.search_only} search results only · {t.unanswered} no answer"
    )
    if not week.gaps:
        return figures, "*Top gaps:* none this week."
    gaps = "\n".join(
        f"{i}. {escape_truncated(g.topic, 80, at_word=True)} ({g.count}×)"
        for i, g in enumerate(week.gaps[:3], start=1)
    )
    return figures, f"*Top gaps* (search only, no hit, 👎, unverified commands)\n{gaps}"


def _week_blocks(week: Report, command: str) -> list[Block]:
    figures, gaps = _week_lines(week)
    about = (
        f"{week.since} to {week.until}, Pacific days. Only admins see this. "
        f"`{command} report` posts it to you; `gdocs-bot report --format html` has it all."
    )
    return [header("This week"), section(figures), section(gaps), context(about), divider()]


def render_week_report(week: Report) -> Message:
    """The private reply to `/gdocs report`."""
    figures, gaps = _week_lines(week)
    blocks = [
        section(f"*This week* ({week.since} to {week.until}, Pacific days)"),
        section(figures),
        section(gaps),
        context("The whole picture: `gdocs-bot report --format html` where the bot runs."),
    ]
    text = f"This week ({week.since} to {week.until}): {week.total.questions} questions"
    return {"text": text, "blocks": blocks}


def _encode_ask_again(question: str) -> str:
    """The value of an "Ask again" button: the question on one line, cut to fit 2000."""
    text = truncate(one_line(question), MAX_BUTTON_VALUE_CHARS - len(_ASK_PREFIX), at_word=True)
    if not text:
        raise InvalidInput("There is no question to ask again.")
    return _ASK_PREFIX + text


def decode_ask_again(value: object) -> str:
    if not isinstance(value, str) or len(value) > MAX_BUTTON_VALUE_CHARS:
        raise InvalidInput(forged("Ask again button"))
    question = value.removeprefix(_ASK_PREFIX)
    if question == value or not question or question != one_line(question):
        raise InvalidInput(forged("Ask again button"))
    return question


def _local(moment: datetime, now: datetime, tz: str | None) -> tuple[datetime, datetime]:
    zone, _ = viewer_zone(tz)
    aware = [m if m.tzinfo is not None else m.replace(tzinfo=UTC) for m in (moment, now)]
    return aware[0].astimezone(zone), aware[1].astimezone(zone)


def _day_word(moment: datetime, now: datetime) -> str:
    days = (moment.date() - now.date()).days
    words = {0: "today", 1: "tomorrow", -1: "yesterday"}
    return words.get(days) or f"{moment:%a} {moment.day} {moment:%b}"


def _when_back(resets_at: datetime, now: datetime, tz: str | None) -> str:
    """ "at 09:00 tomorrow, Europe/Rome time (in 7 h 5 min)" in the viewer's zone."""
    local, local_now = _local(resets_at, now, tz)
    if local <= local_now:
        return "any minute now"
    name = viewer_zone(tz)[1]
    label = name.replace("_", " ") if name else "PT"
    shown = label if label in ("PT", "UTC") else f"{label} time"
    hours, minutes = divmod(max(int((local - local_now).total_seconds() // 60), 1), 60)
    left = f"{hours} h {minutes} min" if hours else f"{minutes} min"
    return f"at {local:%H:%M} {_day_word(local, local_now)}, {shown} (in {left})"


def _asked_when(asked_at: datetime, now: datetime, tz: str | None) -> str:
    """ "just now", "5 min ago", "today at 14:05", "yesterday at 09:12", "Mon 3 Mar at 10:00"."""
    local, local_now = _local(asked_at, now, tz)
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
    examples = "\n".join(f"• {escape(q)}" for q in _EXAMPLE_QUESTIONS)
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
        divider(),
    ]


def _status(view: HomeInput) -> list[Block]:
    per_day = max(view.per_day, 0)
    left = min(max(view.answers_left, 0), per_day)
    back = _when_back(view.resets_at, view.now, view.viewer_tz)
    head = "*Generated answers today:*"
    if view.quota == "unknown":
        quota = f"{head} I can't read the team's count right now; questions still get answers."
    elif view.quota == "unlimited":
        quota = (
            f"{head} this bot sets no daily limit; Google's quota for the project still applies."
        )
    elif per_day == 0:
        quota = "*Generated answers:* none today; I answer with matching documentation pages."
    elif left == 0:
        quota = (
            f"{head} all {per_day} are used; until they come back {back}, "
            "I answer with matching documentation pages."
        )
    else:
        quota = (
            f"{head} {left} of {per_day} left for the team. The day's {per_day} come back {back}."
        )
    if view.ready:
        state = ":large_green_circle: Google's documentation servers are answering."
    else:
        state = (
            ":red_circle: Google's documentation servers are not answering right now; "
            "questions may fail until they are back."
        )
    detail = escape_truncated(one_line(view.ready_detail), 300)
    return [section(quota), section(state), *([context(detail)] if detail else []), divider()]


def _recent(view: HomeInput) -> list[Block]:
    blocks: list[Block] = [header("Your recent questions")]
    for index, asked in enumerate(view.recent[:MAX_RECENT]):
        try:
            value = _encode_ask_again(asked.text)
        except InvalidInput:
            continue  # nothing left of it to show or ask
        shown = escape_truncated(one_line(asked.text), 200, at_word=True)
        when = _asked_when(asked.asked_at, view.now, view.viewer_tz)
        block = section(f"“{shown}”\n_{when}_")
        block["accessory"] = button("Ask again", f"{_ACTION_ASK_AGAIN_PREFIX}{index}", value)
        blocks.append(block)
    if len(blocks) > 1:
        return [*blocks, context("Ask again answers in our direct messages.")]
    return [
        *blocks,
        section(
            "You haven't asked me anything yet. Pick an example above, or ask away: "
            "your questions show up here so you can ask them again."
        ),
    ]


def render_home(view: HomeInput) -> dict[str, Any]:
    """The Home tab view: `{"type": "home", "blocks": [...]}`, at most 100 blocks."""
    command = safe_command(view.command)
    channels = _channels(view.channels, view.default_followups)
    week = _week_blocks(view.week, command) if view.week else []
    blocks = [*_about(command), *_status(view), *week]
    blocks += [*channels, divider()] if channels else []
    return {"type": "home", "blocks": [*blocks, *_recent(view)][:100]}
