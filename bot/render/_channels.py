"""Channel settings in words: `/gdocs channel`, the notice a change posts, and the Home
tab's list of the viewer's channels."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bot.channels import CHANNEL_ID_RE, ChannelSettings, Field, Followups
from bot.models import Scope
from bot.products import PRODUCTS, ScopeError, labels
from bot.render._text import (
    Block,
    Message,
    context,
    escape,
    header,
    mention,
    section,
    text_message,
)

MAX_HOME_CHANNELS = 10
#: why a limit to products is not applied, said the same on every surface
NEEDS_REST = "needs the bot's REST setting (DEVELOPER_KNOWLEDGE_API=rest)"

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
    followups = f"*Follow-ups without a mention:* {_FOLLOWUP_WORDS[policy]}{origin}"
    products = f"\n*Products:* {scope_line(settings.products, from_channel=False)}"
    return f"{mode}\n{private}\n{followups}" + (products if settings.products else "")


def scope_words(scope: Scope) -> str:
    """ "Firebase", "Firebase and Android", "Firebase, Android and Chrome" (mrkdwn)."""
    said = [escape(label) for label in labels(scope)]
    return " and ".join([", ".join(said[:-1]), said[-1]] if len(said) > 1 else said)


def scope_line(scope: Scope, *, from_channel: bool, command: str = "/gdocs") -> str:
    """An answer's products (mrkdwn): "Firebase docs only", and how to change the channel's."""
    line = f"{scope_words(scope)} docs only"
    return f"{line} · change with `{command} channel products`" if from_channel else line


def scope_note(applied: Scope, channel: Scope, command: str = "/gdocs") -> str | None:
    """The line an answer's head carries about products (mrkdwn; None: all, as asked):
    `applied`, the scope it was limited to; `channel`, the channel's products when they
    were meant to apply (not with a question's own `in:`). A channel's products the MCP
    backend could not apply are said, not dropped silently."""
    if applied:
        return scope_line(applied, from_channel=applied == channel, command=command)
    if channel:
        return (
            f"Answered from all products: this channel's limit to {scope_words(channel)} "
            f"{NEEDS_REST}."
        )
    return None


def scope_refusal(error: ScopeError) -> str:
    """Product words that name no scope, in one sentence (mrkdwn)."""
    if error.unknown is None:
        return "That is more products than one question can be limited to: name fewer."
    known = ", ".join(f"`{p.name}`" for p in PRODUCTS)
    return f"I don't know the product “{escape(error.unknown[:40])}”: try {known} or `all`."


def render_scope_refused(
    why: ScopeError | Literal["needs_rest", "not_scoped"], *, channel: bool = False
) -> Message:
    """Product words not taken: naming no scope; a channel's products on the MCP backend,
    which has no filter ("needs_rest"); `in:` on a page or Pay ("not_scoped")."""
    if isinstance(why, ScopeError):
        text = scope_refusal(why)
    elif why == "needs_rest":
        text = f"Limiting a channel to products {NEEDS_REST}: ask whoever runs the bot."
    else:
        text = "`in:` limits questions and searches, not whole pages or Pay's docs: ask without it."
    return text_message(f"{text} Nothing was changed." if channel else text)


def render_channel_usage(command: str = "/gdocs", *, products: bool = False) -> Message:
    """`products`: the REST backend, where a channel can be limited to products."""
    lines = [
        f"`{command} channel` — show this channel's settings",
        f"`{command} channel auto` — answer every question asked here, in its thread",
        f"`{command} channel mentions` — answer only when mentioned (the default)",
        f"`{command} channel private on|off` — answers here go to the asker alone",
        f"`{command} channel followups asker|anyone|off|default` — whose follow-ups in "
        "my threads I answer without a mention",
    ]
    if products:
        lines.append(f"`{command} channel products firebase android…|all` — limit answers here")
    text = "Channel settings:\n" + "\n".join(lines)
    return {"text": text, "blocks": [section(text)]}


def render_channel_settings(
    channel: str,
    settings: ChannelSettings,
    *,
    default_followups: Followups,
    fixed_auto: bool,
    command: str = "/gdocs",
    products_apply: bool = True,
) -> Message:
    """`/gdocs channel`: the channel's settings, and how to change them. `products_apply`:
    False on the MCP backend, which cannot limit answers to the stored products."""
    lines = _describe(settings, default_followups, fixed_auto)
    if settings.products and not products_apply:
        lines += f" — not applied: that {NEEDS_REST}"
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
    elif field == "products" and settings.products:
        text = (
            f"{who} limited my answers here to {scope_words(settings.products)} docs — "
            f"`{command} channel products all` undoes it."
        )
    elif field == "products":
        text = (
            f"{who} cleared this channel's products: my answers here come from all of them again."
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
