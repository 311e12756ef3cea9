"""Follow-ups without a mention, and questions in answer channels: which channel messages
the bot answers (`message.channels`, `message.groups`).

Subscribing to channel messages means hearing every message in every channel the bot is in,
so nearly everything is dropped here, fast and without a Slack or upstream call. A message
is a follow-up only when all of these hold:

- THREAD_FOLLOWUPS (or the channel's own `followups`, `/gdocs channel followups …`) is not
  `off`;
- it is a person's new message: no `subtype` (edits, joins, bot posts), no `bot_id` (apps
  post *without* a subtype), not the bot's own;
- it is a reply in a thread (`thread_ts`, and not the thread's first message);
- it mentions nobody: no `<@U…>` (the bot itself: that arrives as `app_mention` and is
  answered there, never twice; anyone else: it is addressed to them), no user group, no
  `@here` / `@channel` / `@everyone`;
- it reads as a question: a question mark, or opening with a question or request word
  (`routing.is_question` without its word-count rule — a long remark is still a remark, and
  answer_query is scarce); "thanks!" is not one;
- and, from the store alone: the bot answered in that thread (`ThreadMemory`), and with
  `asker` the message is from the person who asked there first.

A top-level message (`is_top_level`) is answered only in an answer channel (`/gdocs channel
auto`, ANSWER_CHANNELS), by the same test without the thread: a person's new message that
mentions nobody and reads as a question (`why_not_an_auto_question`).

The reasons returned are fixed words for the DEBUG log: never the message text.
"""

from __future__ import annotations

import re
import sys
from typing import Any, Literal

from bot.slack.flows.routing import is_question
from bot.slack.memory.state import ThreadMemory

FollowupPolicy = Literal["asker", "anyone", "off"]

#: `channel_type` of the message events the follow-up listener hears
THREAD_CHANNEL_TYPES = frozenset({"channel", "group"})

#: a person (`<@U…>`, `<@W…>`), a user group (`<!subteam^…>`) or `<!here>`-style broadcast
_ADDRESSED_RE = re.compile(r"<@[UW][A-Z0-9]*|<!(?:subteam\^|here\b|channel\b|everyone\b)")


def addresses_someone(text: str) -> bool:
    """True when the text mentions anyone: a person, the bot, a group or the channel."""
    return _ADDRESSED_RE.search(text) is not None


def reads_as_question(text: str) -> bool:
    """A question mark, or a first word that asks ("how", "can", "does", "show", …)."""
    return is_question(text, answer_min_words=sys.maxsize)


def _str(event: dict[str, Any], name: str) -> str | None:
    value = event.get(name)
    return value if isinstance(value, str) and value else None


def why_not_a_follow_up(
    event: dict[str, Any], bot_user_id: str | None, policy: FollowupPolicy
) -> str | None:
    """Why this channel message is not a follow-up for the bot (None: it may be one; the
    thread's record in the store decides). No I/O."""
    if policy == "off":
        return "thread follow-ups are off"
    if "subtype" in event or _str(event, "bot_id"):
        return "not a person's new message"
    user, ts, thread_ts = _str(event, "user"), _str(event, "ts"), _str(event, "thread_ts")
    if user is None or user == bot_user_id or _str(event, "channel") is None or ts is None:
        return "not a person's new message"
    if thread_ts is None or thread_ts == ts:
        return "not a reply in a thread"
    text = event.get("text") if isinstance(event.get("text"), str) else ""
    if addresses_someone(text or ""):
        return "mentions someone (the bot's own mentions come as app_mention)"
    if not reads_as_question(text or ""):
        return "does not read as a question"
    return None


def is_top_level(event: dict[str, Any]) -> bool:
    """A channel's own message, not a reply in a thread."""
    thread_ts = _str(event, "thread_ts")
    return thread_ts is None or thread_ts == _str(event, "ts")


def why_not_an_auto_question(event: dict[str, Any], bot_user_id: str | None) -> str | None:
    """Why this top-level channel message is not one an answer channel answers (None: it
    is, if the channel is one). The same test as follow-ups, without the thread. No I/O."""
    if "subtype" in event or _str(event, "bot_id"):
        return "not a person's new message"
    user, ts = _str(event, "user"), _str(event, "ts")
    if user is None or user == bot_user_id or _str(event, "channel") is None or ts is None:
        return "not a person's new message"
    text = event.get("text") if isinstance(event.get("text"), str) else ""
    if addresses_someone(text or ""):
        return "mentions someone (the bot's own mentions come as app_mention)"
    if not reads_as_question(text or ""):
        return "does not read as a question"
    return None


async def why_not_ours(
    threads: ThreadMemory, event: dict[str, Any], policy: FollowupPolicy
) -> str | None:
    """Why a thread reply that passed `why_not_a_follow_up` is still not the bot's to answer
    (None: answer it). One store read."""
    topic = await threads.topic(event["channel"], event["thread_ts"])
    if topic is None:
        return "not a thread the bot answered in"
    if policy == "asker" and topic.asker != event.get("user"):
        return "not from the thread's original asker"
    return None
