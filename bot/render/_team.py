"""Team answers on Slack: the save / edit form (its fields, the sentence when one does not
fit, where it came from in `private_metadata`), the `/gdocs team` list with Edit / Remove,
and their notices. Values come back as user input: each decoder accepts exactly what its
encoder makes; team text is untrusted and escaped here, once."""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from bot.errors import InvalidInput
from bot.render._notices import forged
from bot.render._team_home import team_value
from bot.render._text import (
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
from bot.team import MAX_ANSWER_CHARS, MAX_PHRASINGS, MAX_QUESTION_CHARS, TeamAnswer, Visibility
from bot.text import one_line, strip_controls

TEAM_FORM_CALLBACK = "team_answer_form"
ACTION_TEAM_LIST_EDIT = "team_edit"
ACTION_TEAM_LIST_REMOVE = "team_remove"
QUESTION_BLOCK, ANSWER_BLOCK, ALSO_BLOCK = "team_question", "team_answer", "team_also"
VISIBILITY_BLOCK = "team_visibility"
#: Slack refuses a text input whose max_length is over 3000: longer answers come by import
FORM_ANSWER_CHARS = 3000
#: the `/gdocs team` list shows this many: 2 blocks and ≤ ~700 characters each, within
#: Slack's 50 blocks and a message's characters
MAX_LISTED = 15
_LISTED_CHARS = 150
FormMode = Literal["new", "edit", "draft"]
_ID = r"[A-Za-z0-9_-]{1,64}"
_ID_RE = re.compile(_ID)
_CHANNEL_RE = re.compile(r"[CGD][A-Z0-9]{1,20}")
_TS_RE = re.compile(r"\d{1,12}\.\d{1,8}")
_MODES: tuple[FormMode, ...] = ("new", "edit", "draft")
_WHERE = {"channel": "This channel only", "workspace": "The whole workspace"}
_ANSWER_HINT = (
    f"Markdown, up to {FORM_ANSWER_CHARS:,} characters. Given instead of asking Google's docs "
    "when this question comes up."
)
_ALSO_HINT = f"Other ways to ask it, one per line (up to {MAX_PHRASINGS})."
_ALSO_CHARS = MAX_PHRASINGS * (MAX_QUESTION_CHARS + 1)


@dataclass(frozen=True)
class TeamForm:
    """What the form shows and, in `private_metadata`, carries back."""

    #: chosen when the form opens, so a second Save after a failed one replaces, not adds
    answer_id: str
    question: str = ""
    answer: str = ""
    also: tuple[str, ...] = ()
    visibility: Visibility = "channel"
    channel: str | None = None
    channel_name: str | None = None
    message_ts: str | None = None
    #: Slack said the channel is public: only then is "the whole workspace" offered
    public: bool = False
    #: new; edit: replaces `answer_id`; draft: approves draft `answer_id` as edited
    mode: FormMode = "new"


def form_for(answer: TeamAnswer, mode: FormMode) -> TeamForm:
    """The form that edits `answer` (or reviews it, a draft)."""
    public = answer.visibility == "workspace"
    kept = (answer.question, answer.answer, answer.also, answer.visibility, answer.channel)
    return TeamForm(answer.id, *kept, answer.channel_name, None, public, mode)


def _metadata(form: TeamForm) -> str:
    kept: dict[str, object] = {"id": form.answer_id, "m": form.mode, "c": form.channel}
    kept |= {"ts": form.message_ts}
    kept |= {"n": one_line(form.channel_name or "", 80) or None, "p": form.public}
    return json.dumps(kept, separators=(",", ":"), ensure_ascii=False)


def form_from_metadata(value: object) -> TeamForm:
    """The form's origin as `_metadata` wrote it; InvalidInput for anything else."""
    try:
        found = json.loads(value) if isinstance(value, str) and len(value) <= 3000 else None
    except ValueError:
        found = None
    found = found if isinstance(found, dict) else {}
    answer_id, channel = found.get("id"), found.get("c")
    ts, name, public = found.get("ts"), found.get("n"), found.get("p")
    checks = (
        isinstance(answer_id, str) and _ID_RE.fullmatch(answer_id),
        channel is None or (isinstance(channel, str) and _CHANNEL_RE.fullmatch(channel)),
        ts is None or (isinstance(ts, str) and _TS_RE.fullmatch(ts)),
        name is None or isinstance(name, str),
        isinstance(public, bool),
    )
    mode = next((m for m in _MODES if m == found.get("m")), None)
    if mode is None or not all(checks):
        raise InvalidInput(forged("form"))
    form = TeamForm(str(answer_id), channel=channel, channel_name=name, message_ts=ts)
    return replace(form, public=public is True, mode=mode)


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
    return {"text": plain_text_object(_WHERE[visibility], 75), "value": visibility}


def team_form_modal(form: TeamForm) -> dict[str, Any]:
    """The modal: question, answer (Markdown), "also answers", who may see it."""
    offered: list[Visibility] = ["channel", "workspace"] if form.public else ["channel"]
    chosen = form.visibility if form.visibility in offered else "channel"
    radios: Block = {"type": "radio_buttons", "action_id": VISIBILITY_BLOCK}
    radios |= {"options": [_option(v) for v in offered], "initial_option": _option(chosen)}
    where: Block = {"type": "input", "block_id": VISIBILITY_BLOCK, "element": radios}
    where["label"] = plain_text_object("Who may see it", 2000)
    if not form.public:
        why = "Saved in a private channel or a direct message: it stays there."
        where["hint"] = plain_text_object(why, 2000)
    also = "\n".join(form.also)
    blocks = [
        _text_input(QUESTION_BLOCK, "Question", form.question, MAX_QUESTION_CHARS),
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
    view = view if isinstance(view, dict) else {}
    form = form_from_metadata(view.get("private_metadata"))
    state = view.get("state")
    values = state.get("values") if isinstance(state, dict) else None
    values = values if isinstance(values, dict) else {}
    question, answer = one_line(_typed(values, QUESTION_BLOCK)), _typed(values, ANSWER_BLOCK)
    also = tuple(one_line(line) for line in _typed(values, ALSO_BLOCK).splitlines())
    also = tuple(dict.fromkeys(line for line in also if line))
    chosen = _value(values, VISIBILITY_BLOCK).get("selected_option")
    chosen = chosen.get("value") if isinstance(chosen, dict) else None
    # "workspace" only where it was offered: a private channel's answer stays there
    visibility: Visibility = "workspace" if chosen == "workspace" and form.public else "channel"
    errors: dict[str, str] = {}
    if not question:
        errors[QUESTION_BLOCK] = "Say which question it answers."
    elif len(question) > MAX_QUESTION_CHARS:
        errors[QUESTION_BLOCK] = _too_long(len(question), "a question", MAX_QUESTION_CHARS)
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


# --- the `/gdocs team` list ----------------------------------------------------------------
@dataclass(frozen=True)
class TeamListEntry:
    answer: TeamAnswer
    uses: int
    #: the viewer is its author or a team admin: Edit / Remove, and "review due"
    manage: bool


def _age(saved_at: datetime, now: datetime) -> str:
    days = (now - saved_at).days
    if days < 1:
        return "saved today"
    if days < 60:
        return "saved yesterday" if days == 1 else f"saved {days} days ago"
    return f"saved {days // 30} months ago" if days < 730 else f"saved {days // 365} years ago"


def _entry(entry: TeamListEntry, now: datetime) -> list[Block]:
    answer = entry.answer
    question = escape_truncated(one_line(answer.question), _LISTED_CHARS, at_word=True)
    author = mention(answer.author)
    facts = [f"by {author}" if author else "", _age(answer.saved_at, now)]
    facts.append("used once" if entry.uses == 1 else f"used {entry.uses:,} times")
    facts.append("this channel only" if answer.visibility == "channel" else "whole workspace")
    if entry.manage and answer.review_due(now):
        facts.append(":hourglass: review due")
    blocks = [section(f"*{question}*\n" + " · ".join(f for f in facts if f))]
    if entry.manage:
        value = team_value(answer.id)
        remove = button("Remove", ACTION_TEAM_LIST_REMOVE, value) | {"style": "danger"}
        remove["confirm"] = {
            "title": plain_text_object("Remove this team answer?", 100),
            "text": plain_text_object(
                f"{_quoted(answer.question, 60)} will no longer be given.", 300
            ),
            "confirm": plain_text_object("Remove", 30),
            "deny": plain_text_object("Keep it", 30),
            "style": "danger",
        }
        blocks.append(actions([button("Edit", ACTION_TEAM_LIST_EDIT, value), remove]))
    return blocks


def render_team_list(
    entries: list[TeamListEntry], now: datetime, *, note: str | None = None
) -> Message:
    """The team answers visible here, MAX_LISTED at most; `note`: what was just done."""
    shown = escape_truncated(note, 300) if note else ""
    head = [context(shown)] if shown else []
    if not entries:
        text = (
            "No team answers are given here yet. To save one, use *Save as team answer* "
            "in a message's ⋮ menu."
        )
        return {"text": f"{shown} {text}".strip(), "blocks": [*head, section(text)]}
    count = len(entries)
    text = f"Team answers given here instead of asking Google's docs: {count}"
    blocks = [*head, section(f"*{text}*")]
    for entry in entries[:MAX_LISTED]:
        blocks += _entry(entry, now)
    if count > MAX_LISTED:
        more = f"…and {count - MAX_LISTED:,} more: `gdocs-bot team export` lists them all."
        blocks.append(context(more))
    return {"text": f"{shown} {text}".strip(), "blocks": blocks}


def _quoted(question: str, limit: int = 150) -> str:
    return "“" + one_line(question, limit) + "”"


def team_saved_text(form: TeamForm) -> str:
    """After Save (unescaped: `render_team_notice` escapes it)."""
    where = "this channel only" if form.visibility == "channel" else "the whole workspace"
    did = "Approved" if form.mode == "draft" else "Saved"
    return f"{did} as a team answer for {_quoted(form.question)} ({where})."


def team_removed_text(question: str) -> str:
    return f"Removed the team answer for {_quoted(question)}."


_TEAM_NOTES = {
    "refused": "Only its author and the team's admins can change that team answer.",
    "gone": "That team answer is gone already.",
    "too_long": f"That answer is longer than a Slack form takes ({FORM_ANSWER_CHARS:,} "
    "characters): change it with `gdocs-bot team export` and `import`.",
    "by_command": "Type `/gdocs team` in a channel to list the team answers given there.",
    "unavailable": "I can't reach the team answers right now (the bot's storage isn't "
    "answering). Nothing was changed; try again in a minute.",
}
#: the form's error on the answer when the store did not take it (the text is kept)
TEAM_STORE_DOWN = (
    "Couldn't save it: the bot's storage isn't answering. Your text is still here — "
    "try Save again in a minute."
)


def render_team_notice(kind_or_text: str) -> Message:
    """A short ephemeral notice: "refused", "gone", "unavailable", or a `team_*_text`."""
    text = escape_truncated(_TEAM_NOTES.get(kind_or_text, kind_or_text), 500)
    return {"text": text, "blocks": [context(text)]}
