"""A team answer's words (bot/team.py): the line saying whose it is, the button that asks
Google's docs anyway, and the Google pages its Markdown links to (what its commands are
checked against). The answer itself is rendered like any answer: escaped, links made safe."""

from __future__ import annotations

import re
from datetime import datetime

from bot.channels import CHANNEL_ID_RE
from bot.models import Answer, Reference, TeamMark
from bot.names import MAX_NAMES_PER_CALL
from bot.render._documents import doc_name_for_url, page_title
from bot.render._errors import try_again_value
from bot.render._text import Block, actions, button, day_words, escape_truncated, mention
from bot.team import TeamAnswer
from bot.text import one_line

#: the button under a team answer: the same question, asked of Google's docs
ACTION_ASK_GOOGLE = "ask_google_too"
#: the streamed step when the team's answer is given (no search happened)
TEAM_STEP_TITLE = "Found the team's answer"
#: `[label](url)` or a bare http(s) address, in the team's Markdown
_LINK_RE = re.compile(r"\[(?P<label>[^\[\]\n]{0,300})\]\((?P<url>https?://[^\s()]{1,2000})\)")
_BARE_RE = re.compile(r"(?<![(\[|<])https?://[^\s()<>\[\]|]{1,2000}")


def team_line(mark: TeamMark) -> str:
    """The head's mrkdwn: "Team answer · saved by <@U1> on 3 Dec 2026 · from <#C1>"; an
    author that is not a user id, or a channel that is not an id, never pings."""
    who = mention(mark.author) or escape_truncated(one_line(mark.author), 80)
    line = f"Team answer · saved by {who} on {day_words(mark.saved_at)}"
    if mark.channel and CHANNEL_ID_RE.fullmatch(mark.channel):
        return f"{line} · from <#{mark.channel}>"
    if mark.channel_name:
        return f"{line} · from #{escape_truncated(one_line(mark.channel_name), 80)}"
    return line


def team_words(mark: TeamMark) -> str:
    """The same line as plain text, for a terminal (no Slack markup to resolve ids)."""
    line = f"Team answer · saved by {one_line(mark.author)} on {day_words(mark.saved_at)}"
    where = mark.channel_name or mark.channel
    return f"{line} · from #{one_line(where).lstrip('#')}" if where else line


def ask_google_block(question: str) -> Block | None:
    """The "Ask Google's docs too" button, its value Try again's (the question as typed)."""
    value = try_again_value(question)
    if value is None:
        return None
    return actions([button("Ask Google's docs too", ACTION_ASK_GOOGLE, value)], ACTION_ASK_GOOGLE)


def answer_from_team(found: TeamAnswer, query: str, now: datetime) -> Answer:
    """`found` given for `query` (Slack and the CLI alike): the team's Markdown, its mark, and
    the Google pages it links to as references (what its commands are checked against)."""
    text, mark, refs = found.answer, found.mark(now), team_references(found.answer)
    return Answer(
        query=query, kind="answer", text=text, tool="team_answer", team=mark, references=refs
    )


def team_references(markdown: str) -> tuple[Reference, ...]:
    """The Google documentation pages `markdown` links to, each once, in order (at most as
    many as one check fetches): the team answer's Sources and what its commands are checked
    against. Links elsewhere stay links in the text, not sources."""
    found: dict[str, Reference] = {}
    labelled = {m.group("url"): m.group("label") for m in _LINK_RE.finditer(markdown)}
    urls = [m.group("url") for m in _LINK_RE.finditer(markdown)]
    urls += [m.group(0).rstrip(".,;:!?'\"") for m in _BARE_RE.finditer(markdown)]
    for url in sorted(set(urls), key=lambda u: markdown.find(u)):
        name = doc_name_for_url(url)
        if name is None or name in found:
            continue
        found[name] = Reference(name=name, uri=url, title=page_title(labelled.get(url, "")))
        if len(found) == MAX_NAMES_PER_CALL:
            break
    return tuple(found.values())
