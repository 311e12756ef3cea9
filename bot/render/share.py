"""Private answers (`/gdocs private …`): the note and "Share in channel" button under the
ephemeral answer, the header of the public re-post that names the asker, and what the bot
says around a share (done, out of date, cannot post here).

The answer itself is rendered once (`render_answer`, without who asked) and kept; the private
copy and the shared copy put their own head on that same body, so the channel sees exactly
what the asker saw.

The button's value is the answer's id (`share1:<id>`, the same ids as the feedback buttons);
`decode_share_value` accepts exactly what `share_value` makes.
"""

from __future__ import annotations

import re

from bot.errors import InvalidInput
from bot.render.blocks import MAX_BLOCKS, Block, Message, actions, button, context, section
from bot.render.escape import escape_truncated, mention
from bot.render.feedback import is_answer_id
from bot.render.notices import render_not_in_channel_hint
from bot.text import strip_controls

ACTION_SHARE = "share_answer"
SHARE_BLOCK_ID = "share_answer"
#: the question is cut to this many characters in the re-post's header
SHARED_QUESTION_CHARS = 300
_VALUE_RE = re.compile(r"share1:(?P<id>[A-Za-z0-9_.-]{1,64})")
_FORGED = "That Share button is out of date or was not made by this bot."


def share_value(answer_id: str) -> str:
    """The value of a "Share in channel" button."""
    if not is_answer_id(answer_id):
        raise InvalidInput("Cannot make a Share button for that answer.")
    return f"share1:{answer_id}"


def decode_share_value(value: object) -> str:
    """The answer id a "Share in channel" click asks for; InvalidInput for anything else."""
    match = _VALUE_RE.fullmatch(value) if isinstance(value, str) and len(value) <= 80 else None
    if match is None:
        raise InvalidInput(_FORGED)
    return match["id"]


def share_button_block(answer_id: str) -> Block:
    """An actions block with the "Share in channel" button for this answer."""
    share = button("Share in channel", ACTION_SHARE, share_value(answer_id), primary=True)
    return actions([share], block_id=SHARE_BLOCK_ID)


def private_answer_blocks(answer_id: str) -> list[Block]:
    """What goes under a private answer: who can see it, and the Share button."""
    note = context(":lock: Only you can see this answer. Share it if it helps the channel.")
    return [note, share_button_block(answer_id)]


def _one_line(text: str) -> str:
    return " ".join(strip_controls(text).split())


def shared_header_text(asker: str, question: str) -> str:
    """`<@U…> shared an answer to: “question”` (the question escaped, on one line, cut).

    An asker id that is not a well-formed user id is left out rather than echoed.
    """
    who = mention(asker)
    asked = escape_truncated(_one_line(question), SHARED_QUESTION_CHARS, at_word=True)
    lead = f"{who} shared an answer" if who else "An answer was shared"
    return f"{lead} to: “{asked}”" if asked else f"{lead}:"


def shared_header(asker: str, question: str) -> Block:
    """The first block of a shared answer re-posted in the channel."""
    return section(shared_header_text(asker, question))


def _asked_block(question: str) -> Block | None:
    asked = escape_truncated(_one_line(question), SHARED_QUESTION_CHARS, at_word=True)
    return section(f"> {asked}") if asked else None


def _framed(head: list[Block], body: Message, tail: list[Block]) -> list[Block]:
    """head + body + tail within Slack's block limit; `render_answer` leaves room for a few
    blocks, so the body is cut (at its end) only in a pathological case."""
    room = MAX_BLOCKS - len(head) - len(tail)
    return [*head, *list(body.get("blocks") or [])[:room], *tail]


def render_private_answer(body: Message, question: str, answer_id: str | None) -> Message:
    """The ephemeral answer: the question, the answer, "only you can see this" and, when it
    was kept (`answer_id`), the Share button."""
    asked = _asked_block(question)
    if answer_id is not None:
        tail = private_answer_blocks(answer_id)
    else:
        tail = [context(":lock: Only you can see this answer.")]
    return {"text": body["text"], "blocks": _framed([asked] if asked else [], body, tail)}


def render_shared_answer(body: Message, asker: str, question: str) -> Message:
    """The same answer re-posted in the channel, headed by who shared it and what they asked."""
    return {"text": body["text"], "blocks": _framed([shared_header(asker, question)], body, [])}


def render_shared_note() -> Message:
    """Replaces the private answer once it is in the channel."""
    text = "Shared in the channel."
    return {"text": text, "blocks": [context(f":white_check_mark: {text}")]}


def render_share_forged() -> Message:
    """A Share click whose value this bot did not make (or not for this person)."""
    return {"text": _FORGED, "blocks": [context(f":warning: {_FORGED}")]}


def render_share_expired(kept_minutes: int) -> Message:
    """A Share click on an answer no longer kept (or already shared)."""
    text = (
        f"I no longer have that answer to share: private answers are kept for "
        f"{kept_minutes} minutes and shared once. Ask again with `/gdocs private …`."
    )
    return {"text": text, "blocks": [context(text)]}


def render_share_not_in_channel() -> Message:
    """The bot may not post where the answer was asked: how to let it, then share again."""
    text = f"{render_not_in_channel_hint()} Then press *Share in channel* again."
    return {"text": text, "blocks": [context(text)]}


def render_private_doc_refused(command: str = "/gdocs") -> Message:
    """`private doc …`: a whole page is posted where it was asked, never privately."""
    cmd = command if re.fullmatch(r"/[a-z0-9_-]{1,31}", command) else "/gdocs"
    text = (
        f"`private` works for questions and searches. A whole page is posted in the "
        f"conversation: use `{cmd} doc …` without `private`, or ask me in a direct message."
    )
    return {"text": text, "blocks": [context(text)]}
