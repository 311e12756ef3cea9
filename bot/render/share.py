"""Private answers (`/gdocs private …`): the note and "Share in channel" button under the
ephemeral answer, and the header of the public re-post that names the asker.

The button's value is the answer's id (`share1:<id>`, the same ids as the feedback buttons);
`decode_share_value` accepts exactly what `share_value` makes.
"""

from __future__ import annotations

import re

from bot.errors import InvalidInput
from bot.render.blocks import Block, actions, button, context, section
from bot.render.escape import escape_truncated, mention
from bot.render.feedback import is_answer_id
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
