"""Feedback buttons and the modal, and private answers with their Share button."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from bot.errors import InvalidInput
from bot.render._notices import render_not_in_channel_hint
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
from bot.text import strip_controls, truncate

VoteKind = Literal["up", "down"]

#: the feedback_buttons element's action_id (and its block's id)
ACTION_FEEDBACK = "answer_feedback"
#: the "Say what was wrong" button on the thanks for a 👎; it opens the modal
ACTION_FEEDBACK_COMMENT = "feedback_comment"
#: the modal's callback_id, and the ids of its one input
FEEDBACK_MODAL_CALLBACK = "feedback_comment"
COMMENT_BLOCK_ID = "comment"
COMMENT_ACTION_ID = "comment"
#: a comment is one short line
MAX_COMMENT_CHARS = 300
#: an answer id: short, URL-safe (e.g. `secrets.token_urlsafe(12)`, or a message ts)
ANSWER_ID_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")

_VALUE_RE = re.compile(r"fb1:(?P<vote>up|down):(?P<id>[A-Za-z0-9_.-]{1,64})")
_FORGED = "That feedback button is out of date or was not made by this bot."
#: Slack's limits for a feedback button: text 75, accessibility label 75, value 2000
_LABEL_CHARS = 75
_MODAL_TITLE_CHARS = 24


@dataclass(frozen=True)
class Vote:
    """One click on the feedback buttons: which answer, and which way."""

    answer_id: str
    vote: VoteKind


def is_answer_id(text: str) -> bool:
    return isinstance(text, str) and ANSWER_ID_RE.fullmatch(text) is not None


def encode_vote(answer_id: str, vote: VoteKind) -> str:
    """The value of a feedback button: `fb1:<vote>:<answer id>`."""
    if not is_answer_id(answer_id) or vote not in ("up", "down"):
        raise InvalidInput("Cannot make feedback buttons for that answer.")
    return f"fb1:{vote}:{answer_id}"


def decode_vote(value: object) -> Vote:
    """The vote a button value (or the modal's private_metadata) stands for; InvalidInput
    for anything `encode_vote` did not produce."""
    if not isinstance(value, str) or len(value) > MAX_BUTTON_VALUE_CHARS:
        raise InvalidInput(_FORGED)
    match = _VALUE_RE.fullmatch(value)
    if match is None:
        raise InvalidInput(_FORGED)
    vote: VoteKind = "up" if match["vote"] == "up" else "down"
    return Vote(answer_id=match["id"], vote=vote)


def _feedback_button(text: str, value: str, label: str) -> dict[str, Any]:
    if not 1 <= len(value) <= MAX_BUTTON_VALUE_CHARS:
        raise InvalidInput("A feedback button value must be 1 to 2000 characters.")
    return {
        "text": plain_text_object(text, _LABEL_CHARS),
        "value": value,
        "accessibility_label": truncate(label, _LABEL_CHARS),
    }


def feedback_block(value_up: str, value_down: str) -> Block:
    """A `context_actions` block with Slack's 👍 / 👎 `feedback_buttons`; a click comes back
    as `block_actions` with `type: "feedback_buttons"` and the clicked button's value."""
    return {
        "type": "context_actions",
        "block_id": ACTION_FEEDBACK,
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": ACTION_FEEDBACK,
                "positive_button": _feedback_button("👍", value_up, "Mark this reply as helpful"),
                "negative_button": _feedback_button(
                    "👎", value_down, "Mark this reply as wrong or unhelpful"
                ),
            }
        ],
    }


def feedback_block_for(answer_id: str) -> Block:
    """`feedback_block` for the answer with this id."""
    return feedback_block(encode_vote(answer_id, "up"), encode_vote(answer_id, "down"))


def render_feedback_thanks(vote: Vote) -> Message:
    """The ephemeral thanks for a vote; after a 👎 it offers the "what was wrong?" form."""
    if vote.vote == "up":
        text = "Thanks for the feedback — glad it helped."
        return {"text": text, "blocks": [context(f":thumbsup: {text}")]}
    text = "Thanks for telling me. What was wrong? A one-line note helps fix answers like this."
    ask = button("Say what was wrong", ACTION_FEEDBACK_COMMENT, encode_vote(vote.answer_id, "down"))
    return {
        "text": text,
        "blocks": [section(f":thumbsdown: {text}"), actions([ask], block_id="feedback_more")],
    }


def feedback_comment_modal(vote: Vote) -> dict[str, Any]:
    """The optional "what was wrong?" modal (`views.open`): one short line of text; the vote
    rides along in `private_metadata`."""
    intro = (
        "Your vote is saved. If you like, say in one line what was wrong "
        "(out of date, wrong product, missing step…): it is stored with your vote."
    )
    comment: Block = {
        "type": "input",
        "block_id": COMMENT_BLOCK_ID,
        "optional": True,
        "label": plain_text_object("What was wrong?", 2000),
        "element": {
            "type": "plain_text_input",
            "action_id": COMMENT_ACTION_ID,
            "multiline": False,
            "max_length": MAX_COMMENT_CHARS,
            "placeholder": plain_text_object("e.g. the gcloud command has changed", 150),
        },
    }
    return {
        "type": "modal",
        "callback_id": FEEDBACK_MODAL_CALLBACK,
        "title": plain_text_object("What was wrong?", _MODAL_TITLE_CHARS),
        "submit": plain_text_object("Send", _MODAL_TITLE_CHARS),
        "close": plain_text_object("Skip", _MODAL_TITLE_CHARS),
        "private_metadata": encode_vote(vote.answer_id, vote.vote),
        "blocks": [section(intro), comment],
    }


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def vote_from_view(view: object) -> Vote:
    """The vote a submitted modal is about (its private_metadata); InvalidInput otherwise."""
    return decode_vote(_dict(view).get("private_metadata"))


def comment_from_view(view: object) -> str:
    """The comment typed into the modal: one line, at most 300 characters, "" when none.

    Slack enforces the input's `max_length` in its client only, so the text is cut here too.
    It is stored as typed (escaping happens wherever it is shown again).
    """
    values = _dict(_dict(_dict(view).get("state")).get("values"))
    value = _dict(_dict(values.get(COMMENT_BLOCK_ID)).get(COMMENT_ACTION_ID)).get("value")
    if not isinstance(value, str):
        return ""
    return truncate(" ".join(strip_controls(value).split()), MAX_COMMENT_CHARS)


def render_feedback_recorded() -> Message:
    """The ephemeral note after the modal was sent."""
    text = "Thanks — your note is saved with your vote."
    return {"text": text, "blocks": [context(f":memo: {text}")]}


def render_feedback_stale() -> Message:
    """The ephemeral notice for a feedback button (or form) whose value we did not make, or
    whose answer is past its voting window: nothing was recorded."""
    return {"text": _FORGED, "blocks": [context(f":hourglass: {_FORGED} Nothing was recorded.")]}


ACTION_SHARE = "share_answer"
SHARE_BLOCK_ID = "share_answer"
#: the question is cut to this many characters in the re-post's header
SHARED_QUESTION_CHARS = 300
_SHARE_RE = re.compile(r"share1:(?P<id>[A-Za-z0-9_.-]{1,64})")
_SHARE_FORGED = "That Share button is out of date or was not made by this bot."


def share_value(answer_id: str) -> str:
    """The value of a "Share in channel" button."""
    if not is_answer_id(answer_id):
        raise InvalidInput("Cannot make a Share button for that answer.")
    return f"share1:{answer_id}"


def decode_share_value(value: object) -> str:
    """The answer id a "Share in channel" click asks for; InvalidInput for anything else."""
    match = _SHARE_RE.fullmatch(value) if isinstance(value, str) and len(value) <= 80 else None
    if match is None:
        raise InvalidInput(_SHARE_FORGED)
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
    return {"text": _SHARE_FORGED, "blocks": [context(f":warning: {_SHARE_FORGED}")]}


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
