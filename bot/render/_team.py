"""The team answer form (save, edit, a suggestion's review): its fields, the sentence for
one that does not fit, and where it came from in `private_metadata`. What comes back is
user input: the decoder accepts exactly what the encoder makes."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.errors import InvalidInput
from bot.render._notices import forged
from bot.render._text import Block, plain_text_object
from bot.team import MAX_ANSWER_CHARS, MAX_PHRASINGS, MAX_QUESTION_CHARS, TeamAnswer, Visibility
from bot.text import one_line, strip_controls

TEAM_FORM_CALLBACK = "team_answer_form"
QUESTION_BLOCK, ANSWER_BLOCK, ALSO_BLOCK = "team_question", "team_answer", "team_also"
#: the question once filled in: a new block id, or Slack may keep the empty input it had
#: when views.update sets its initial_value (bolt-python #1064)
_FILLED_QUESTION_BLOCK = "team_question_filled"
VISIBILITY_BLOCK = "team_visibility"
#: Slack refuses a text input whose max_length is over 3000: longer answers come by import
FORM_ANSWER_CHARS = 3000
FormMode = Literal["new", "edit", "draft"]
#: who may see a team answer, in the form and the list
WHERE = {"channel": "This channel only", "workspace": "The whole workspace"}
_ANSWER_HINT = (
    f"Markdown, up to {FORM_ANSWER_CHARS:,} characters. Given instead of asking Google's docs "
    "when this question comes up."
)
_ALSO_HINT = f"Other ways to ask it, one per line (up to {MAX_PHRASINGS})."
_ALSO_CHARS = MAX_PHRASINGS * (MAX_QUESTION_CHARS + 1)
#: the form's error on the answer when the store did not take it (the text is kept)
TEAM_STORE_DOWN = (
    "Couldn't save it: the bot's storage isn't answering. Your text is still here — "
    "try Save again in a minute."
)


@dataclass(frozen=True)
class TeamForm:
    """What the form shows and, in `private_metadata`, carries back."""

    #: chosen when the form opens, so a second Save after a failed one replaces, not adds
    answer_id: str
    question: str = ""
    answer: str = ""
    also: tuple[str, ...] = ()
    #: preselected "This channel only": the saver opts in to the whole workspace
    visibility: Visibility = "channel"
    channel: str | None = None
    channel_name: str | None = None
    message_ts: str | None = None
    #: Slack said the channel is public: only then is "the whole workspace" offered
    public: bool = False
    #: new; edit: replaces `answer_id`; draft: approves draft `answer_id` as edited
    mode: FormMode = "new"
    #: the `/gdocs team` list Edit was pressed on (its channel, response_url): shown anew
    listed: tuple[str, str] | None = None


def form_for(answer: TeamAnswer, mode: FormMode) -> TeamForm:
    """The form that edits `answer` (or reviews it, a draft)."""
    public = answer.visibility == "workspace"
    kept = (answer.question, answer.answer, answer.also, answer.visibility, answer.channel)
    return TeamForm(answer.id, *kept, answer.channel_name, None, public, mode)


_Channel = Annotated[str, Field(pattern=r"^[CGD][A-Z0-9]{1,20}$")]


class _Origin(BaseModel):
    """What `private_metadata` carries: the form's mode and where it came from."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)
    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
    m: FormMode
    c: _Channel | None
    ts: Annotated[str, Field(pattern=r"^\d{1,12}\.\d{1,8}$")] | None
    n: Annotated[str, Field(max_length=80)] | None
    p: bool
    ls: tuple[_Channel, Annotated[str, Field(pattern=r"^https?://\S{1,1000}$")]] | None


def _metadata(form: TeamForm) -> str:
    name = one_line(form.channel_name or "", 80) or None
    kept = _Origin(
        id=form.answer_id, m=form.mode, c=form.channel, ts=form.message_ts, n=name,
        p=form.public, ls=form.listed,
    )  # fmt: skip
    return kept.model_dump_json()


def form_from_metadata(value: object) -> TeamForm:
    """The form's origin as `_metadata` wrote it; InvalidInput for anything else."""
    try:
        kept = _Origin.model_validate_json(value if isinstance(value, str) else "")
    except ValidationError:
        raise InvalidInput(forged("form")) from None
    return TeamForm(
        kept.id, channel=kept.c, channel_name=kept.n, message_ts=kept.ts, public=kept.p,
        mode=kept.m, listed=kept.ls,
    )  # fmt: skip


def _text_input(block_id: str, label: str, value: str, limit: int, hint: str = "") -> Block:
    """A text input; with a hint, several lines."""
    element: Block = {"type": "plain_text_input", "action_id": block_id}
    element |= {"multiline": bool(hint), "max_length": limit}
    if value.strip():
        element["initial_value"] = value[:limit]
    block: Block = {"type": "input", "block_id": block_id, "element": element}
    block["label"] = plain_text_object(label, 2000)
    return block | {"hint": plain_text_object(hint, 2000)} if hint else block


def _option(visibility: Visibility) -> dict[str, Any]:
    return {"text": plain_text_object(WHERE[visibility], 75), "value": visibility}


def team_form_modal(form: TeamForm) -> dict[str, Any]:
    """The modal: question, answer (Markdown), "also answers", who may see it."""
    offered: list[Visibility] = ["channel", "workspace"] if form.public else ["channel"]
    chosen = form.visibility if form.visibility in offered else "channel"
    radios: Block = {"type": "radio_buttons", "action_id": VISIBILITY_BLOCK}
    radios |= {"options": [_option(v) for v in offered], "initial_option": _option(chosen)}
    where: Block = {"type": "input", "block_id": VISIBILITY_BLOCK, "element": radios}
    where["label"] = plain_text_object("Who may see it", 2000)
    if not form.public:
        why = "A team answer saved in a private channel or a direct message stays there."
        where["hint"] = plain_text_object(why, 2000)
    asked = _FILLED_QUESTION_BLOCK if form.question.strip() else QUESTION_BLOCK
    also = "\n".join(form.also)
    blocks = [
        _text_input(asked, "Question", form.question, MAX_QUESTION_CHARS),
        _text_input(ANSWER_BLOCK, "Answer", form.answer, FORM_ANSWER_CHARS, _ANSWER_HINT),
        _text_input(ALSO_BLOCK, "Also answers", also, _ALSO_CHARS, _ALSO_HINT) | {"optional": True},
        where,
    ]
    title = {"new": "Save team answer", "edit": "Edit team answer", "draft": "Review suggestion"}
    return {
        "type": "modal",
        "callback_id": TEAM_FORM_CALLBACK,
        "title": plain_text_object(title[form.mode], 24),
        "submit": plain_text_object("Approve" if form.mode == "draft" else "Save", 24),
        "close": plain_text_object("Cancel", 24),
        "private_metadata": _metadata(form),
        "blocks": blocks,
    }


def _values(view: object) -> dict[str, Any]:
    state = view.get("state") if isinstance(view, dict) else None
    values = state.get("values") if isinstance(state, dict) else None
    return values if isinstance(values, dict) else {}


def question_block(view: object) -> str:
    """The question's block id in a submitted form: where an error about it is said."""
    return _FILLED_QUESTION_BLOCK if _FILLED_QUESTION_BLOCK in _values(view) else QUESTION_BLOCK


def _value(values: dict[str, Any], block_id: str) -> dict[str, Any]:
    found = values.get(block_id)
    found = found.get(block_id) if isinstance(found, dict) else None
    return found if isinstance(found, dict) else {}


def _typed(values: dict[str, Any], block_id: str) -> str:
    value = _value(values, block_id).get("value")
    return strip_controls(value).strip() if isinstance(value, str) else ""


def team_form_from_view(view: object) -> tuple[TeamForm, dict[str, str]]:
    """The submitted form and, by block, the sentence for each field that does not fit
    (empty: it may be saved). InvalidInput: the form is not one this bot made."""
    form = form_from_metadata(view.get("private_metadata") if isinstance(view, dict) else None)
    values, asked = _values(view), question_block(view)
    question, answer = one_line(_typed(values, asked)), _typed(values, ANSWER_BLOCK)
    also = tuple(one_line(line) for line in _typed(values, ALSO_BLOCK).splitlines())
    also = tuple(dict.fromkeys(line for line in also if line))
    chosen = _value(values, VISIBILITY_BLOCK).get("selected_option")
    chosen = chosen.get("value") if isinstance(chosen, dict) else None
    # "workspace" only where it was offered: a private channel's answer stays there
    visibility: Visibility = "workspace" if chosen == "workspace" and form.public else "channel"
    errors: dict[str, str] = {}
    if not question:
        errors[asked] = "Say which question it answers."
    elif len(question) > MAX_QUESTION_CHARS:
        errors[asked] = _too_long(len(question), "a question", MAX_QUESTION_CHARS)
    if not answer:
        errors[ANSWER_BLOCK] = "Write the answer."
    elif len(answer) > MAX_ANSWER_CHARS:
        errors[ANSWER_BLOCK] = _too_long(len(answer), "an answer", MAX_ANSWER_CHARS)
    if len(also) > MAX_PHRASINGS:
        errors[ALSO_BLOCK] = f"That is {len(also)} lines; it can be {MAX_PHRASINGS}."
    elif any(len(line) > MAX_QUESTION_CHARS for line in also):
        errors[ALSO_BLOCK] = f"Each line can be {MAX_QUESTION_CHARS} characters."
    form = replace(form, question=question, answer=answer, also=also, visibility=visibility)
    return form, errors


def _too_long(size: int, what: str, limit: int) -> str:
    return f"That is {size:,} characters; {what} can be {limit:,}."


# Slack's `<url|label>`, `<@U…|name>`, `<#C…|name>`, `<!here>` in a message's text
_ANGLED_RE = re.compile(r"<([^<>|\s]+)(?:\|([^<>]*))?>")


def markdown_from_mrkdwn(text: str) -> str:
    """A message's mrkdwn as plain Markdown, as far as simple: links `[text](url)`, people
    and channels by name, `&amp;` `&lt;` `&gt;` as typed."""

    def plain(match: re.Match[str]) -> str:
        target, label = match[1], match[2]
        if target.startswith(("http://", "https://", "mailto:")):
            return f"[{label}]({target})" if label and label != target else target
        if target[:1] in "@#":
            return target[0] + (label or target[1:])
        if target.startswith("!"):
            return "@" + (label or target[1:].split("^")[0]).lstrip("@")
        return match[0]

    return html.unescape(_ANGLED_RE.sub(plain, text)) if "&" in text or "<" in text else text
