"""Feedback and Share: the 👍 / 👎 buttons and the "what was wrong?" modal, the private answer
and its copy shared in the channel. Values come back as user input: each decoder accepts
exactly what its encoder makes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from bot.errors import InvalidInput
from bot.render._notices import forged, notice
from bot.render._team import FORM_ANSWER_CHARS
from bot.render._text import (
    MAX_BLOCKS,
    MAX_BUTTON_VALUE_CHARS,
    Block,
    Message,
    actions,
    button,
    context,
    escape_truncated,
    mention,
    plain_text_object,
    section,
)
from bot.text import one_line, truncate

VoteKind = Literal["up", "down"]

#: the feedback_buttons element's action_id (and its block's id)
ACTION_FEEDBACK = "answer_feedback"
#: the "Say what was wrong" button after a 👎; it opens the modal
ACTION_FEEDBACK_COMMENT = "feedback_comment"
FEEDBACK_MODAL_CALLBACK = "feedback_comment"
COMMENT_BLOCK_ID = "comment"
_COMMENT_ACTION_ID = "comment"
MAX_COMMENT_CHARS = 300
#: the optional "Suggest a better answer" input: a draft team answer (bot/team.py)
SUGGESTION_BLOCK_ID = "suggestion"
_SUGGESTION_ACTION_ID = "suggestion"
ACTION_SHARE = "share_answer"
SHARED_QUESTION_CHARS = 300
#: elements in one actions block (Slack)
_MAX_ROW = 25
#: an answer id: short, URL-safe (e.g. `secrets.token_urlsafe(12)`, or a message ts)
_ANSWER_ID_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_VALUE_RE = re.compile(r"fb1:(?P<vote>up|down):(?P<id>[A-Za-z0-9_.-]{1,64})")
_SHARE_RE = re.compile(r"share1:(?P<id>[A-Za-z0-9_.-]{1,64})")


@dataclass(frozen=True)
class Vote:
    answer_id: str
    vote: VoteKind


def _encode_vote(answer_id: str, vote: VoteKind) -> str:
    if not _ANSWER_ID_RE.fullmatch(answer_id) or vote not in ("up", "down"):
        raise InvalidInput("Cannot make feedback buttons for that answer.")
    return f"fb1:{vote}:{answer_id}"


def decode_vote(value: object) -> Vote:
    """The vote a button value (or the modal's private_metadata) stands for."""
    short = isinstance(value, str) and len(value) <= MAX_BUTTON_VALUE_CHARS
    match = _VALUE_RE.fullmatch(value) if isinstance(value, str) and short else None
    if match is None:
        raise InvalidInput(forged("feedback button"))
    return Vote(answer_id=match["id"], vote="up" if match["vote"] == "up" else "down")


def _feedback_button(text: str, value: str, label: str) -> dict[str, Any]:
    return {"text": plain_text_object(text, 75), "value": value, "accessibility_label": label}


def feedback_block_for(answer_id: str) -> Block:
    """Slack's 👍 / 👎 `feedback_buttons` in a `context_actions` block."""
    up = _feedback_button("👍", _encode_vote(answer_id, "up"), "Mark this reply as helpful")
    down = _encode_vote(answer_id, "down")
    down_button = _feedback_button("👎", down, "Mark this reply as wrong or unhelpful")
    element: Block = {"type": "feedback_buttons", "action_id": ACTION_FEEDBACK}
    element |= {"positive_button": up, "negative_button": down_button}
    return {"type": "context_actions", "block_id": ACTION_FEEDBACK, "elements": [element]}


def render_feedback_thanks(vote: Vote) -> Message:
    """The ephemeral thanks for a vote; after a 👎 it offers the "what was wrong?" form."""
    if vote.vote == "up":
        return notice("feedback_thanks")
    text = "Thanks for telling me. What was wrong? A one-line note helps fix answers like this."
    value = _encode_vote(vote.answer_id, "down")
    ask = actions([button("Say what was wrong", ACTION_FEEDBACK_COMMENT, value)], "feedback_more")
    return {"text": text, "blocks": [section(f":thumbsdown: {text}"), ask]}


def feedback_comment_modal(vote: Vote) -> dict[str, Any]:
    """The optional "what was wrong?" modal; the vote rides along in `private_metadata`."""
    intro = (
        "Your vote is saved. If you like, say what was wrong (out of date, wrong product, "
        "missing step…) or suggest a better answer."
    )
    comment: Block = {
        "type": "input",
        "block_id": COMMENT_BLOCK_ID,
        "optional": True,
        "label": plain_text_object("What was wrong?", 2000),
        "element": {
            "type": "plain_text_input",
            "action_id": _COMMENT_ACTION_ID,
            "multiline": False,
            "max_length": MAX_COMMENT_CHARS,
            "placeholder": plain_text_object("e.g. the gcloud command has changed", 150),
        },
    }
    suggestion: Block = {
        "type": "input",
        "block_id": SUGGESTION_BLOCK_ID,
        "optional": True,
        "label": plain_text_object("Suggest a better answer", 2000),
        "hint": plain_text_object(
            "Markdown. Only the team's admins see it (on their Home tab; from a private "
            "channel or DM, only those in it) until one approves it as this question's answer.",
            2000,
        ),
        "element": {
            "type": "plain_text_input",
            "action_id": _SUGGESTION_ACTION_ID,
            "multiline": True,
            "max_length": FORM_ANSWER_CHARS,  # Slack's cap: longer answers come by import
        },
    }
    return {
        "type": "modal",
        "callback_id": FEEDBACK_MODAL_CALLBACK,
        "title": plain_text_object("What was wrong?", 24),
        "submit": plain_text_object("Send", 24),
        "close": plain_text_object("Skip", 24),
        "private_metadata": _encode_vote(vote.answer_id, vote.vote),
        "blocks": [section(intro), comment, suggestion],
    }


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def vote_from_view(view: object) -> Vote:
    return decode_vote(_dict(view).get("private_metadata"))


def comment_from_view(view: object) -> str:
    """The comment, one line, cut to its limit (Slack enforces `max_length` in its client only)."""
    values = _dict(_dict(_dict(view).get("state")).get("values"))
    value = _dict(_dict(values.get(COMMENT_BLOCK_ID)).get(_COMMENT_ACTION_ID)).get("value")
    return truncate(one_line(value), MAX_COMMENT_CHARS) if isinstance(value, str) else ""


def suggestion_from_view(view: object) -> str:
    """The suggested answer as typed ("" when none); its length is checked by the caller,
    which says in the form when it is too long (Slack enforces `max_length` in its client)."""
    values = _dict(_dict(_dict(view).get("state")).get("values"))
    value = _dict(_dict(values.get(SUGGESTION_BLOCK_ID)).get(_SUGGESTION_ACTION_ID)).get("value")
    return value.strip() if isinstance(value, str) else ""


SUGGESTION_UNSAVED = (
    "Couldn't save your suggestion: the bot's storage isn't answering. "
    "Try again in a minute; your text is still here."
)


def suggestion_too_long(text: str) -> str | None:
    """The form's error for a suggestion over its field's `max_length` (a forged one: Slack's
    client holds to it); None when it fits."""
    if len(text) <= FORM_ANSWER_CHARS:
        return None
    return f"That is {len(text):,} characters; a suggested answer can be {FORM_ANSWER_CHARS:,}."


def render_comment_thanks(commented: bool, suggested: bool) -> Message:
    """The thanks after the form: the note's, and where a suggestion goes."""
    if not suggested:
        return notice("feedback_recorded")
    kept = "your note is saved with your vote, and " if commented else ""
    text = f"Thanks — {kept}your suggested answer goes to the team's admins to review."
    return {"text": text, "blocks": [context(f":memo: {text}")]}


def _share_value(answer_id: str) -> str:
    if not _ANSWER_ID_RE.fullmatch(answer_id):
        raise InvalidInput("Cannot make a Share button for that answer.")
    return f"share1:{answer_id}"


def decode_share_value(value: object) -> str:
    match = _SHARE_RE.fullmatch(value) if isinstance(value, str) and len(value) <= 80 else None
    if match is None:
        raise InvalidInput(forged("Share button"))
    return match["id"]


def _framed(head: list[Block], body: Message, tail: list[Block]) -> list[Block]:
    """Within Slack's block limit, one spare for the Share row (only a pathological body is cut)."""
    room = MAX_BLOCKS - len(head) - len(tail) - 1
    return [*head, *list(body.get("blocks") or [])[:room], *tail]


def _first_in_row(blocks: list[Block], element: Block, tail: int) -> list[Block]:
    """`element` first in the answer's row of Show full doc buttons, else in its own row."""
    for at in range(len(blocks) - tail - 1, -1, -1):
        row = blocks[at]
        if row.get("type") == "actions" and len(row.get("elements") or []) < _MAX_ROW:
            merged = row | {"elements": [element, *row["elements"]]}
            return [*blocks[:at], merged, *blocks[at + 1 :]]
    at = len(blocks) - tail
    return [*blocks[:at], actions([element], block_id=ACTION_SHARE), *blocks[at:]]


def render_private_answer(
    body: Message, question: str, answer_id: str | None, feedback_id: str | None = None
) -> Message:
    """The ephemeral answer: question, answer, one row of actions with Share, who sees it."""
    asked = escape_truncated(one_line(question), SHARED_QUESTION_CHARS, at_word=True)
    head = [section(f"> {asked}")] if asked else []
    lock = ":lock: Only you can see this answer."
    tail = [context(lock + (" Share it if it helps the channel." if answer_id else ""))]
    tail += [feedback_block_for(feedback_id)] if feedback_id else []
    blocks = _framed(head, body, tail)
    if answer_id is not None:
        share = button("Share in channel", ACTION_SHARE, _share_value(answer_id), primary=True)
        blocks = _first_in_row(blocks, share, len(tail))
    return {"text": body["text"], "blocks": blocks}


def render_shared_answer(
    body: Message, asker: str, question: str, feedback_id: str | None = None
) -> Message:
    """The answer re-posted in the channel; its 👍 / 👎 count with the private copy's."""
    who = mention(asker)
    asked = escape_truncated(one_line(question), SHARED_QUESTION_CHARS, at_word=True)
    lead = f"{who} shared an answer" if who else "An answer was shared"
    head = section(f"{lead} to: “{asked}”" if asked else f"{lead}:")
    tail = [feedback_block_for(feedback_id)] if feedback_id else []
    return {"text": body["text"], "blocks": _framed([head], body, tail)}


def render_share_expired(kept_minutes: int) -> Message:
    text = (
        f"I no longer have that answer to share: private answers are kept for "
        f"{kept_minutes} minutes and shared once. Ask again with `/gdocs private …`."
    )
    return {"text": text, "blocks": [context(text)]}
