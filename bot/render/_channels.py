"""Channel settings in words: `/gdocs channel`, the notice a change posts, and the Home
tab's list of the viewer's channels."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.channels import CHANNEL_ID_RE, ChannelSettings, Field, Followups
from bot.render._text import Block, Message, context, header, mention, section, text_message

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
    mode = "*Answers:* when someone mentions me or uses the command"
    if settings.mode == "auto" or fixed_auto:
        mode = auto
    if fixed_auto:
        mode = f"{auto} (set by the bot's configuration, ANSWER_CHANNELS)"
    private = "*Private:* off — answers are posted for everyone"
    if settings.private:
        private = "*Private:* on — each answer goes to its asker alone, with a Share button"
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


def channel_blocks(lines: Sequence[ChannelLine], default_followups: Followups) -> list[Block]:
    """The Home tab's "Channel settings": the viewer's channels that have some."""
    shown = [line for line in lines if CHANNEL_ID_RE.fullmatch(line.channel)][:MAX_HOME_CHANNELS]
    if not shown:
        return []
    blocks = [header("Channel settings")]
    for line in shown:
        words = _describe(line.settings, default_followups, line.fixed_auto)
        blocks.append(section(f"{_channel_ref(line.channel)}\n{words}"))
    return [*blocks, context("`/gdocs channel help` in a channel changes its settings.")]
