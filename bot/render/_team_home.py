"""The Home tab's team-answer sections: 👎 suggestions waiting for an admin (Approve / Edit /
Discard) and team answers past their review date. Their text is the team's, untrusted:
escaped here, where the surface (mrkdwn) is known."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.errors import InvalidInput
from bot.render._notices import forged
from bot.render._quota import viewer_zone
from bot.render._text import (
    MAX_BUTTON_VALUE_CHARS,
    Block,
    actions,
    button,
    context,
    day_words,
    divider,
    escape_truncated,
    header,
    mention,
    section,
)
from bot.text import one_line

if TYPE_CHECKING:
    from bot.team import TeamAnswer

#: each list shows this many, then says how many more there are
MAX_TEAM_ITEMS = 5
#: of a suggestion's text: its first lines, this many characters at most
_EXCERPT_LINES = 3
_EXCERPT_CHARS = 300
ACTION_TEAM_APPROVE = "team_draft_approve"
ACTION_TEAM_DISCARD = "team_draft_discard"
#: Edit on a suggestion or on an answer due for review (opens the team answer form)
ACTION_TEAM_EDIT = "team_home_edit"
_VALUE_RE = re.compile(r"team1:(?P<id>[A-Za-z0-9_-]{1,64})")


def team_value(answer_id: str) -> str:
    if not _VALUE_RE.fullmatch(f"team1:{answer_id}"):
        raise InvalidInput("Cannot make a button for that team answer.")
    return f"team1:{answer_id}"


def decode_team_value(value: object) -> str:
    """The team answer id a Home button names (only what `team_value` makes)."""
    short = isinstance(value, str) and len(value) <= MAX_BUTTON_VALUE_CHARS
    match = _VALUE_RE.fullmatch(value) if short and isinstance(value, str) else None
    if match is None:
        raise InvalidInput(forged("team answer button"))
    return match["id"]


def _who(user: str) -> str:
    return mention(user) or "someone"


def _question(answer: TeamAnswer) -> str:
    return f"“{escape_truncated(one_line(answer.question), 200, at_word=True)}”"


def _excerpt(text: str) -> str:
    """The first lines, each quoted and escaped (no ping, no link can form)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    shown = escape_truncated("\n".join(lines[:_EXCERPT_LINES]), _EXCERPT_CHARS, at_word=True)
    more = "…" if len(lines) > _EXCERPT_LINES and not shown.endswith("…") else ""
    return "\n".join(f"> {line}" for line in (shown + more).splitlines())


def _more(count: int) -> list[Block]:
    return [context(f"and {count} more")] if count > 0 else []


def _draft_blocks(draft: TeamAnswer, tz: str | None) -> list[Block]:
    day = day_words(draft.saved_at, viewer_zone(tz)[0])
    about = f"_suggested by {_who(draft.author)} on {day}_"
    value = team_value(draft.id)
    row = [
        button("Approve", ACTION_TEAM_APPROVE, value, primary=True),
        button("Edit", ACTION_TEAM_EDIT, value),
        button("Discard", ACTION_TEAM_DISCARD, value),
    ]
    excerpt = _excerpt(draft.answer)
    body = f"{_question(draft)}\n{about}" + (f"\n{excerpt}" if excerpt else "")
    return [section(body), actions(row)]


def _due_block(answer: TeamAnswer, tz: str | None) -> Block:
    about = f"_saved by {_who(answer.author)} on {day_words(answer.saved_at, viewer_zone(tz)[0])}_"
    block = section(f"{_question(answer)}\n{about}")
    block["accessory"] = button("Edit", ACTION_TEAM_EDIT, team_value(answer.id))
    return block


def team_blocks(
    drafts: Sequence[TeamAnswer], due: Sequence[TeamAnswer], tz: str | None, unread: bool = False
) -> list[Block]:
    """Both sections (each only when it lists something), capped; [] when both are empty;
    one line when they could not be read (`unread`)."""
    if unread:
        return [section("I can't reach the team answers right now."), divider()]
    blocks: list[Block] = []
    if drafts:
        blocks += [
            header("Suggested team answers"),
            context("From 👎 feedback. Nobody else sees one until an admin approves it."),
        ]
        for draft in drafts[:MAX_TEAM_ITEMS]:
            blocks += _draft_blocks(draft, tz)
        blocks += [*_more(len(drafts) - MAX_TEAM_ITEMS), divider()]
    if due:
        blocks += [
            header("Team answers due for review"),
            context(
                "Still given past their review date. Check each with Edit; saving sets a new one."
            ),
        ]
        blocks += [_due_block(answer, tz) for answer in due[:MAX_TEAM_ITEMS]]
        blocks += [*_more(len(due) - MAX_TEAM_ITEMS), divider()]
    return blocks
