"""Block Kit building blocks and Slack's limits, in one place."""

from __future__ import annotations

from typing import Any, TypedDict

from bot.text import one_line, truncate

MAX_BLOCKS = 50
#: what the renderer aims for in one section, below Slack's 3000
SECTION_CHARS = 2900
MAX_HEADER_CHARS = 150
MAX_BUTTON_TEXT_CHARS = 75
MAX_OPTION_TEXT_CHARS = 75
MAX_OPTION_VALUE_CHARS = 150
MAX_BUTTON_VALUE_CHARS = 2000
#: whole-message budget (fallback text + every string in the blocks); Slack refuses ~13k
MAX_MESSAGE_CHARS = 11_500
#: the fallback `text` of a message with blocks is kept short (notifications, screen readers)
MAX_FALLBACK_CHARS = 600

Block = dict[str, Any]


class Message(TypedDict):
    """What `chat.postMessage` & co. take: a mrkdwn fallback `text` and Block Kit `blocks`."""

    text: str
    blocks: list[Block]


def section(mrkdwn: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}}


def context(mrkdwn: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": mrkdwn}]}


def divider() -> Block:
    return {"type": "divider"}


def plain_text_object(text: str, limit: int) -> dict[str, Any]:
    """A plain_text object: Slack shows it literally, so it is cut, not escaped."""
    return {"type": "plain_text", "text": truncate(one_line(text) or "…", limit), "emoji": True}


def text_message(text: str) -> Message:
    """A one-line notice: no blocks, so Slack renders the (already safe) text as is."""
    return {"text": text, "blocks": []}


def header(text: str) -> Block:
    return {"type": "header", "text": plain_text_object(text, MAX_HEADER_CHARS)}


def button(text: str, action_id: str, value: str, *, primary: bool = False) -> Block:
    element: Block = {
        "type": "button",
        "text": plain_text_object(text, MAX_BUTTON_TEXT_CHARS),
        "action_id": action_id,
        "value": value,
    }
    if primary:
        element["style"] = "primary"
    return element


def option(text: str, value: str) -> Block:
    return {"text": plain_text_object(text, MAX_OPTION_TEXT_CHARS), "value": value}


def actions(elements: list[Block], block_id: str | None = None) -> Block:
    block: Block = {"type": "actions", "elements": elements}
    if block_id:
        block["block_id"] = block_id
    return block


def blocks_chars(blocks: list[Block]) -> int:
    return _strings_length(blocks)


def _strings_length(value: object) -> int:
    """The length of every string in `value`'s dicts and lists, however deep (a loop, not a
    recursion: a message is measured several times while it is fitted to Slack's limits)."""
    total = 0
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return total
