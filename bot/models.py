"""What the bot knows about documentation: the result models shared by the docs service, the
renderer, the CLI and the Slack app. Pure data; no I/O, no words for users (see render/)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.errors import GdocsError


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class Reference(_Model):
    """A cited document: its name, its public URL and a human title."""

    name: str
    uri: str
    title: str


class SearchHit(_Model):
    """One search result (Developer Knowledge chunk or Pay documentation page)."""

    title: str
    uri: str
    snippet: str
    #: Developer Knowledge document name, when the hit can be fetched in full
    name: str | None = None


class Document(_Model):
    name: str
    uri: str
    title: str = ""
    description: str = ""
    content: str = ""


FallbackReason = Literal[
    #: answer_query's quota is spent (`limit` says which one)
    "answer_quota",
    #: the server offers no answer_query
    "no_answer_tool",
    #: a Pay question, but Pay is not configured (no OAuth)
    "pay_not_configured",
]


class Fallback(_Model):
    """Why a result is not what was asked for; render/ says it in words."""

    reason: FallbackReason
    #: for answer_quota: "minute", "day", "user" or "unknown"
    limit: str | None = None
    #: when generated answers are expected back (answer_quota), aware UTC
    until: datetime | None = None
    #: the limit's size (answers a minute, a day, per person), when known
    limit_value: int | None = None


SnippetResult = Literal["found", "partly", "not_found", "unchecked"]


class SnippetCheck(_Model):
    """One command or code block of a generated answer, checked against the cited pages."""

    #: the command as checked (one line, prompts and continuations gone) or a code block's
    #: first significant line
    snippet: str
    #: "command" (a shell line), "code" (a block in a programming language), "flag" (`--x`)
    kind: Literal["command", "code", "flag"]
    result: SnippetResult
    #: where it was found (or found in part): the document's title, URL and page section
    title: str = ""
    uri: str = ""
    section: str = ""
    #: what is not in the cited pages (flags, words, calls), or not shown with this command
    missing: tuple[str, ...] = ()
    #: True when `missing` is in the pages, only not with this command
    elsewhere: bool = False
    #: the answer's line after which the mark belongs (a code block's closing fence, an
    #: inline span's paragraph end)
    anchor: int = 0


class Verification(_Model):
    """The check of an answer's commands: per snippet, or why it could not be made."""

    #: "checked"; "unchecked": the cited pages could not be fetched (in time)
    status: Literal["checked", "unchecked"]
    snippets: tuple[SnippetCheck, ...] = ()

    def count(self, result: SnippetResult) -> int:
        return sum(1 for s in self.snippets if s.result == result)


class Answer(_Model):
    """What a question produced, whichever route it took."""

    query: str
    #: "answer": a generated answer; "search": DK search hits; "pay": Pay search hits
    kind: Literal["answer", "search", "pay"]
    #: the generated answer, Markdown (kind == "answer")
    text: str = ""
    references: tuple[Reference, ...] = ()
    hits: tuple[SearchHit, ...] = ()
    #: set when the result is not what was asked for (quota fallback, Pay not configured, …)
    fallback: Fallback | None = None
    #: True when the answer came from the cache, without an upstream call
    cached: bool = False
    #: how a kept or shared result was reused: "exact" (the same question), "normalised"
    #: (another wording with the same key), "shared" (an identical question in flight);
    #: None when it was computed for this question
    reuse: Literal["exact", "normalised", "shared"] | None = None
    #: the MCP tool whose result this is (answer_query, search_documents, …), when known
    tool: str | None = None
    #: a generated answer's commands checked against its cited pages (None: not checked)
    verification: Verification | None = None


class ServerStatus(_Model):
    """What `check` and `/readyz` report about one MCP server."""

    model_config = ConfigDict(frozen=True, extra="ignore", arbitrary_types_allowed=True)
    server: Literal["developer_knowledge", "pay"]
    url: str
    ok: bool
    tools: tuple[str, ...] = ()
    detail: str = ""
    #: why the server is not usable, when it answered with an error (words: bot.render.errors)
    error: GdocsError | None = Field(default=None, exclude=True)
