"""The `/gdocs team` list with Edit / Remove, and the team answers' notices. The team's
text is untrusted: escaped here, once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.render._team import FORM_ANSWER_CHARS, WHERE, TeamForm
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
from bot.team import TeamAnswer
from bot.text import one_line

ACTION_TEAM_LIST_EDIT = "team_edit"
ACTION_TEAM_LIST_REMOVE = "team_remove"
#: the list shows this many: 2 blocks and ≤ ~700 characters each, within Slack's 50 blocks
#: and a message's characters
MAX_LISTED = 15


@dataclass(frozen=True)
class TeamListEntry:
    answer: TeamAnswer
    uses: int
    #: the viewer is its author or a team admin: Edit / Remove, and "review due"
    manage: bool


def _age(saved_at: datetime, now: datetime) -> str:
    days = (now - saved_at).days
    if days < 2:
        return "saved yesterday" if days == 1 else "saved today"
    if days < 60:
        return f"saved {days} days ago"
    return f"saved {days // 30} months ago" if days < 730 else f"saved {days // 365} years ago"


def _entry(entry: TeamListEntry, now: datetime) -> list[Block]:
    answer = entry.answer
    question = escape_truncated(one_line(answer.question), 150, at_word=True)
    author = mention(answer.author)
    facts = [f"by {author}" if author else "", _age(answer.saved_at, now)]
    uses = {0: "not used yet", 1: "used once"}.get(entry.uses, f"used {entry.uses:,} times")
    facts.append(uses)
    facts.append(WHERE[answer.visibility].lower())
    if entry.manage and answer.review_due(now):
        facts.append(":hourglass: review due")
    blocks = [section(f"*{question}*\n" + " · ".join(f for f in facts if f))]
    if entry.manage:
        value = team_value(answer.id)
        remove = button("Remove", ACTION_TEAM_LIST_REMOVE, value) | {"style": "danger"}
        gone = plain_text_object(f"{_quoted(answer.question, 60)} will no longer be given.", 300)
        remove["confirm"] = {
            "title": plain_text_object("Remove this team answer?", 100),
            "text": gone,
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
    blocks = [context(shown)] if shown else []
    if not entries:
        text = (
            "No team answers are given here yet. To save one, use *Save as team answer* "
            "in a message's ⋮ menu."
        )
        return {"text": f"{shown} {text}".strip(), "blocks": [*blocks, section(text)]}
    text = f"Team answers given here instead of asking Google's docs: {len(entries)}"
    blocks.append(section(f"*{text}*"))
    for entry in entries[:MAX_LISTED]:
        blocks += _entry(entry, now)
    if len(entries) > MAX_LISTED:
        more = f"…and {len(entries) - MAX_LISTED:,} more: `gdocs-bot team export` lists them all."
        blocks.append(context(more))
    return {"text": f"{shown} {text}".strip(), "blocks": blocks}


def _quoted(question: str, limit: int = 150) -> str:
    return "“" + one_line(question, limit) + "”"


def team_saved_text(form: TeamForm) -> str:
    """After Save (unescaped: `render_team_notice` escapes it)."""
    did, where = "Approved" if form.mode == "draft" else "Saved", WHERE[form.visibility]
    return f"{did} as a team answer for {_quoted(form.question)} ({where.lower()})."


def team_removed_text(question: str) -> str:
    return f"Removed the team answer for {_quoted(question)}."


_TEAM_NOTES = {
    "refused": "Only its author and the team's admins can change that team answer.",
    "gone": "That team answer is gone already.",
    "too_long": f"That answer is longer than a Slack form takes ({FORM_ANSWER_CHARS:,} "
    "characters): change it with `gdocs-bot team export` and `import`.",
    "by_command": "Type `/gdocs team` in a channel to list the team answers given there.",
    "unavailable": "I can't reach the team answers right now (the bot's storage isn't "
    "answering): try again in a minute.",
    # a 👎 suggestion's Approve / Edit / Discard on Home, when not done
    "draft_refused": "Only the team's admins can approve, edit or discard a suggested answer.",
    "draft_gone": "That suggestion is no longer waiting: someone approved or discarded it already.",
}


def team_note(kind_or_text: str) -> str:
    """A notice's words, unescaped (a form's error is plain text; a list escapes its note)."""
    return _TEAM_NOTES.get(kind_or_text, kind_or_text)


def render_team_notice(kind_or_text: str) -> Message:
    """A short ephemeral notice: a `_TEAM_NOTES` kind ("refused", "gone", "unavailable",
    "draft_refused", …) or a `team_*_text`."""
    text = escape_truncated(team_note(kind_or_text), 500)
    return {"text": text, "blocks": [context(text)]}
