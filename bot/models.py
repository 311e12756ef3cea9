"""The result models shared by the docs service, the renderer, the CLI and the Slack app:
pure data, no words for users."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.errors import GdocsError


class _Model(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="ignore")


class Reference(_Model):
    name: str
    uri: str
    title: str
    #: the page's last meaningful change (REST's `updateTime`, aware UTC); None: not known
    updated: datetime | None = None
    #: the page's size in bytes (REST's `contentLengthBytes`); None: not known
    size: int | None = None


class SearchHit(_Model):
    """A Developer Knowledge chunk or a Pay page; `name` when it can be fetched in full."""

    title: str
    uri: str
    snippet: str
    name: str | None = None
    updated: datetime | None = None
    size: int | None = None


class Document(_Model):
    name: str
    uri: str
    title: str = ""
    description: str = ""
    content: str = ""


class Fallback(_Model):
    """Why a result is not what was asked for: answer_query's quota is spent (`limit`:
    "minute", "day", "user" or "unknown"; `until`: aware UTC), the server has no answer tool,
    or Pay is not configured."""

    reason: Literal["answer_quota", "no_answer_tool", "pay_not_configured"]
    limit: str | None = None
    until: datetime | None = None
    limit_value: int | None = None


SnippetResult = Literal["found", "partly", "not_found", "unchecked"]


class SnippetCheck(_Model):
    """One command or code block of a generated answer, checked against the cited pages."""

    #: the command as checked (one line) or a code block's first significant line
    snippet: str
    kind: Literal["command", "code", "flag"]
    result: SnippetResult
    #: where it was found (or found in part)
    title: str = ""
    uri: str = ""
    section: str = ""
    #: what is not in the cited pages (flags, words, calls), or not shown with this command
    missing: tuple[str, ...] = ()
    #: True when `missing` is in the pages, only not with this command
    elsewhere: bool = False
    #: the answer's line after which the mark belongs
    anchor: int = 0


class Verification(_Model):
    """An answer's commands checked; "unchecked": the cited pages could not be fetched."""

    status: Literal["checked", "unchecked"]
    snippets: tuple[SnippetCheck, ...] = ()

    def count(self, result: SnippetResult) -> int:
        return sum(1 for s in self.snippets if s.result == result)


class Citation(_Model):
    """A cited span of a generated answer (REST): UTF-8 byte offsets of `Answer.text`, `end`
    exclusive, as Google sends them; `references` index `Answer.references` (never past it)."""

    start: int
    end: int
    references: tuple[int, ...]


#: the `data_source` hosts a question is limited to (sorted, unique); () is all of them
Scope = tuple[str, ...]


class TeamMark(_Model):
    """An answer the team saved (bot/team.py), given instead of asking Google."""

    #: the team answer's id (Edit / Remove, its use count)
    id: str
    #: who saved it (a Slack user id); for an approved 👎 suggestion, who suggested it
    author: str
    saved_at: datetime  # aware UTC
    #: the channel it was saved in (None: imported, or saved outside Slack)
    channel: str | None = None
    #: that channel's name when saved ("infra"), for surfaces that cannot show `<#C…>`
    channel_name: str | None = None
    #: past its review date: said to its author and admins, still given
    review_due: bool = False


class Answer(_Model):
    """What a question produced, whichever route it took."""

    query: str
    kind: Literal["answer", "search", "pay"]
    #: the generated answer, Markdown (kind == "answer")
    text: str = ""
    references: tuple[Reference, ...] = ()
    hits: tuple[SearchHit, ...] = ()
    fallback: Fallback | None = None
    #: from the cache, without an upstream call
    cached: bool = False
    #: how a kept or shared result was reused; None when computed for this question
    reuse: Literal["exact", "normalised", "shared"] | None = None
    #: the MCP tool whose result this is, when known
    tool: str | None = None
    verification: Verification | None = None
    #: which spans of `text` come from which references (REST only)
    citations: tuple[Citation, ...] = ()
    #: the products it was limited to
    scope: Scope = ()
    #: set when this is the team's own answer (kind "answer", no Google call was made)
    team: TeamMark | None = None


class ServerStatus(_Model):
    model_config = ConfigDict(frozen=True, extra="ignore", arbitrary_types_allowed=True)
    server: Literal["developer_knowledge", "pay"]
    url: str
    ok: bool
    tools: tuple[str, ...] = ()
    detail: str = ""
    error: GdocsError | None = Field(default=None, exclude=True)
