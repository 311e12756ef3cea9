"""The Home tab (the viewer's channels are in _channels.py, the admins' week in _week.py);
plain values in, no clock."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from bot.channels import Followups
from bot.errors import InvalidInput
from bot.models import Scope
from bot.products import ScopeError, names, scope_of
from bot.render._channels import ChannelLine, channel_blocks
from bot.render._notices import forged
from bot.render._quota import at_time, quota_words, viewer_zone
from bot.render._team_home import team_blocks
from bot.render._text import (
    MAX_BUTTON_VALUE_CHARS,
    Block,
    button,
    context,
    divider,
    escape,
    escape_truncated,
    header,
    safe_command,
    section,
)
from bot.render._week import week_blocks
from bot.text import one_line, truncate

if TYPE_CHECKING:
    from bot.quota import Pause
    from bot.report import Report
    from bot.team import TeamAnswer

#: recent questions shown (the store keeps 10): a short list, not a log
MAX_RECENT = 5
_KIND_WORDS = {"search": "search", "pay": "Pay & Wallet docs", "doc": "whole page"}
_ACTION_ASK_AGAIN_PREFIX = "ask_again:"
_ACTION_EXAMPLE_PREFIX = "ask_example:"
#: Ask again (a recent question) and Ask (an example): both ask in the viewer's DM
ASK_AGAIN_ACTION_RE = re.compile(r"^ask_(?:again|example):\d+\Z")
_ASK_VALUE_RE = re.compile(
    r"ask1:(?P<old>.+)|ask2:(?P<kind>answer|search|pay|doc)(?P<private>\+private)?"
    r"(?:@(?P<scope>[a-z0-9.,-]+))?:(?P<q>.+)",
    re.DOTALL,
)
_EXAMPLE_QUESTIONS = (
    "How do I create a Cloud Storage bucket with gcloud?",
    "What is the difference between Cloud Firestore and the Realtime Database?",
    "How do I ask for the location permission in an Android app?",
)


@dataclass(frozen=True)
class RecentQuestion:
    text: str
    asked_at: datetime
    #: the route it took ("answer", "search", "pay", "doc"); None: route `text` as typed
    kind: str | None = None
    private: bool = False
    failed: bool = False
    #: the products it was limited to
    scope: tuple[str, ...] = ()


@dataclass(frozen=True)
class Upstream:
    """How the last calls to Google's documentation servers went, on any replica."""

    #: the latest call's time; None: no call in the last hour
    last_at: datetime | None = None
    #: the latest calls that failed, in a row
    failed: int = 0
    #: the latest failure was a timeout (else an error on their side)
    timed_out: bool = False


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
    #: Google said no to answer_query until `pause.until`
    pause: Pause | None = None
    #: the viewer's IANA time zone (users.info `tz`); None or unknown: Pacific, shown "PT"
    viewer_tz: str | None = None
    upstream: Upstream = Upstream()
    #: newest first
    recent: Sequence[RecentQuestion] = field(default_factory=tuple)
    command: str = "/gdocs"
    channels: Sequence[ChannelLine] = field(default_factory=tuple)
    #: THREAD_FOLLOWUPS, what a channel without its own `followups` follows
    default_followups: Followups = "asker"
    #: shown to workspace admins only
    week: Report | None = None
    #: 👎 suggestions waiting for approval (team admins only), oldest first
    team_drafts: Sequence[TeamAnswer] = field(default_factory=tuple)
    #: team answers past their review date (the viewer's own; every one for team admins)
    team_due: Sequence[TeamAnswer] = field(default_factory=tuple)
    #: the team answers could not be read (team admins only): said, not shown as none
    team_unread: bool = False


@dataclass(frozen=True)
class AskAgain:
    """What an Ask again or example button asks, routed as it was the first time."""

    question: str
    #: None: an older button, whose question is routed as typed
    kind: str | None = None
    private: bool = False
    scope: tuple[str, ...] = ()


def _in_words(scope: Scope) -> str:
    """ "firebase,android": a scope as `in:` takes it, on a button and in the recent list."""
    return ",".join(names(scope))


def _encode_ask(asked: AskAgain) -> str:
    """`ask2:<kind>[+private][@<products>]:<question, one line, cut to fit>`, or
    `ask1:<question>`."""
    products = f"@{_in_words(asked.scope)}" if asked.scope else ""
    private = "+private" if asked.private else ""
    prefix = f"ask2:{asked.kind}{private}{products}:" if asked.kind else "ask1:"
    text = truncate(one_line(asked.question), MAX_BUTTON_VALUE_CHARS - len(prefix), at_word=True)
    if not text:
        raise InvalidInput("There is no question to ask again.")
    return prefix + text


def decode_ask_again(value: object) -> AskAgain:
    """Any value `_encode_ask` makes (Home tabs published before carry `ask1:`)."""
    short = isinstance(value, str) and len(value) <= MAX_BUTTON_VALUE_CHARS
    match = _ASK_VALUE_RE.fullmatch(value) if short and isinstance(value, str) else None
    question = (match["old"] or match["q"]) if match else ""
    if match is None or not question or question != one_line(question):
        raise InvalidInput(forged("Ask again button"))
    try:
        scope = scope_of([match["scope"] or ""])
    except ScopeError:
        scope = ("",)  # refused below
    if _in_words(scope) != (match["scope"] or ""):  # only what _encode_ask writes
        raise InvalidInput(forged("Ask again button"))
    return AskAgain(question, match["kind"], match["private"] is not None, scope)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _when(moment: datetime, now: datetime, tz: str | None) -> str:
    """ "today at 14:05", "yesterday at 09:12", "Mon 3 Mar at 10:00" in the viewer's zone."""
    zone, _ = viewer_zone(tz)
    local, local_now = _aware(moment).astimezone(zone), _aware(now).astimezone(zone)
    days = (local.date() - local_now.date()).days
    day = {0: "today", -1: "yesterday"}.get(days) or f"{local:%a} {local.day} {local:%b}"
    return f"{day} at {local:%H:%M}"


def _about(command: str) -> list[Block]:
    intro = (
        "I answer questions about Google's developer products (Cloud, Firebase, Android, "
        "Maps, Pay and more) from Google's own documentation, and link the pages I used. "
        f"Ask with `{command}`, mention me in a thread, or write to me in the *Messages* tab."
    )
    examples = [section("*Try asking* (I answer in our direct messages)")]
    for index, question in enumerate(_EXAMPLE_QUESTIONS):
        block = section(f"• {escape(question)}")
        value = _encode_ask(AskAgain(question, "answer"))
        block["accessory"] = button("Ask", f"{_ACTION_EXAMPLE_PREFIX}{index}", value)
        examples.append(block)
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
        *examples,
        section(f"*Ways to ask*\n{escape(forms)}"),
        divider(),
    ]


_INSTEAD = "Until then I answer with matching documentation pages."
_NOTHING_ASKED = (
    "You haven't asked me anything yet. Pick an example above, or ask away: "
    "your questions show up here so you can ask them again."
)


def _quota(view: HomeInput) -> str:
    """Google's pause first, then the bot's own count, in `quota_words`' words."""
    now, tz, pause = _aware(view.now), view.viewer_tz, view.pause
    per_day = max(view.per_day, 0)
    left = min(max(view.answers_left, 0), per_day)
    resets = _aware(view.resets_at)
    back = at_time(resets, tz=tz, now=now) if resets > now else "any minute now"
    head = "*Generated answers today:*"
    if view.quota == "unknown":
        return f"{head} I can't read the team's count right now; questions still get answers."
    if pause is not None and _aware(pause.until) > now:
        size = pause.limit_value or 0
        said = quota_words(pause.kind, _aware(pause.until), size, tz=tz, now=now).sentence
        return f"{escape(said)} {_INSTEAD}"  # the sentence names what it is about
    if view.quota == "unlimited":
        return f"{head} this bot sets no daily limit; Google's quota for the project still applies."
    if per_day == 0:
        return "*Generated answers:* none today; I answer with matching documentation pages."
    if left == 0:
        until = resets if resets > now else None
        said = quota_words("day", until, per_day, tz=tz, now=now).sentence
        return f"{escape(said)} {_INSTEAD}"
    return f"{head} {left} of {per_day} left for the team; the count starts again {back}."


def _upstream(view: HomeInput) -> str:
    """From the last calls any replica made, not a guess."""
    calls, servers = view.upstream, "Google's documentation servers"
    if calls.last_at is None:
        return f":white_circle: No call to {servers} in the last hour."
    when = _when(calls.last_at, view.now, view.viewer_tz)
    if not calls.failed:
        return f":large_green_circle: {servers} answered my last call ({when})."
    last = f"last {calls.failed} calls" if calls.failed > 1 else "last call"
    why = "no answer in time" if calls.timed_out else "an error on their side"
    return (
        f":red_circle: My {last} to {servers} failed ({why}, {when}); "
        "questions may fail until they answer again."
    )


def _recent_row(asked: RecentQuestion, view: HomeInput) -> str:
    shown = escape_truncated(one_line(asked.text), 200, at_word=True)
    about = [_when(asked.asked_at, view.now, view.viewer_tz)]
    about += [_KIND_WORDS[asked.kind]] if asked.kind in _KIND_WORDS else []
    about += [escape(f"in:{_in_words(asked.scope)}")] if asked.scope else []
    about += ["private"] if asked.private else []
    about += [":warning: not answered"] if asked.failed else []
    return f"“{shown}”\n_{' · '.join(about)}_"


def _recent(view: HomeInput) -> list[Block]:
    blocks: list[Block] = [header("Your recent questions")]
    for index, asked in enumerate(view.recent[:MAX_RECENT]):
        try:
            value = _encode_ask(AskAgain(asked.text, asked.kind, asked.private, asked.scope))
        except InvalidInput:
            continue  # nothing left of it to show or ask
        block = section(_recent_row(asked, view))
        block["accessory"] = button("Ask again", f"{_ACTION_ASK_AGAIN_PREFIX}{index}", value)
        blocks.append(block)
    if len(blocks) > 1:
        return [*blocks, context("Ask again answers in our direct messages.")]
    return [*blocks, section(_NOTHING_ASKED)]


def render_home(view: HomeInput) -> dict[str, Any]:
    """The Home tab view: `{"type": "home", "blocks": [...]}`, at most 100 blocks."""
    command = safe_command(view.command)
    channels = channel_blocks(view.channels, view.default_followups)
    week = week_blocks(view.week, command) if view.week else []
    status = [section(_quota(view)), section(_upstream(view)), divider()]
    team = team_blocks(view.team_drafts, view.team_due, view.viewer_tz, view.team_unread)
    blocks = [*_about(command), *status, *week, *team]
    blocks += [*channels, divider()] if channels else []
    return {"type": "home", "blocks": [*blocks, *_recent(view)][:100]}
