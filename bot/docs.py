"""What the bot knows about documentation: result models shared by the client, the renderer,
the CLI and the Slack app, the service protocol they meet at, and document-name rules.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal, Protocol
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

from bot.errors import InvalidInput

MAX_NAME_CHARS = 500
MAX_NAMES_PER_CALL = 20

# host, then an optional path of safe URL characters; no "..", no whitespace, no markup
_NAME_RE = re.compile(
    r"^documents/"
    r"(?P<host>[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+)"
    r"(?P<path>/[A-Za-z0-9._~!$'()*+,;=:@%/-]*)?$"
)


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


class Answer(_Model):
    """What a question produced, whichever route it took."""

    query: str
    #: "answer": a generated answer; "search": DK search hits; "pay": Pay search hits
    kind: Literal["answer", "search", "pay"]
    #: the generated answer, Markdown (kind == "answer")
    text: str = ""
    references: tuple[Reference, ...] = ()
    hits: tuple[SearchHit, ...] = ()
    #: why the result is not what was asked for (quota fallback, Pay not configured, …)
    note: str | None = None
    #: True when the answer came from the cache, without an upstream call
    cached: bool = False
    #: the MCP tool whose result this is (answer_query, search_documents, …), when known
    tool: str | None = None


class ServerStatus(_Model):
    """What `check` and `/readyz` report about one MCP server."""

    server: Literal["developer_knowledge", "pay"]
    url: str
    ok: bool
    tools: tuple[str, ...] = ()
    detail: str = ""
    checked_at: datetime | None = None


class DocsService(Protocol):
    """The operations the CLI and the Slack app share. Errors are `bot.errors.GdocsError`."""

    @property
    def pay_configured(self) -> bool: ...

    async def ask(self, question: str) -> Answer:
        """answer_query; on quota exhaustion, search_documents with `note` saying so."""

    async def search(self, query: str) -> Answer:
        """search_documents, hits with titles and fetchable names."""

    async def pay(self, query: str, language: str | None = None) -> Answer:
        """Pay & Wallet search_documentation; when Pay is not configured, DK search + note."""

    async def docs(self, names: list[str]) -> list[Document]:
        """get_documents in request order, batched by 20, cached."""

    async def status(self) -> list[ServerStatus]:
        """tools/list on each server: reachability and tool names."""

    def recently_healthy(self, within_seconds: float = 300.0) -> bool:
        """True when the DK server answered (anything but a transport failure) recently."""

    async def aclose(self) -> None: ...


def uri_for_name(name: str) -> str:
    """`documents/docs.cloud.google.com/x` -> `https://docs.cloud.google.com/x`."""
    return "https://" + name.removeprefix("documents/")


def is_valid_name(name: str) -> bool:
    return (
        len(name) <= MAX_NAME_CHARS
        and ".." not in name
        and "//" not in name.removeprefix("documents/")
        and _NAME_RE.match(name) is not None
    )


def normalize_doc_ref(ref: str) -> str:
    """A document name from a name or an https URL typed by a user; InvalidInput otherwise."""
    text = ref.strip().strip("<>")
    if "|" in text:  # Slack auto-links URLs as <https://x|x>
        text = text.split("|", 1)[0]
    if text.startswith(("https://", "http://")):
        parts = urlsplit(text)
        path = parts.path.rstrip("/")
        name = f"documents/{(parts.hostname or '').lower()}{path}"
    else:
        name = text.rstrip("/")
    if not is_valid_name(name):
        raise InvalidInput(
            "That is not a documentation page: give a URL like "
            "https://docs.cloud.google.com/storage/docs/creating-buckets "
            "or a name like documents/docs.cloud.google.com/storage/docs/creating-buckets."
        )
    return name
