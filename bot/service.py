"""What the CLI and the Slack app ask of the documentation servers (`GoogleDocsService`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal, Protocol

from bot.models import Answer, Document, Scope, SearchHit, ServerStatus

#: told a search's first pages while the generated answer is still being written
OnSources = Callable[[tuple[SearchHit, ...]], Awaitable[None]]


class DocsService(Protocol):
    @property
    def pay_configured(self) -> bool: ...

    @property
    def backend(self) -> Literal["mcp", "rest"]:
        """DEVELOPER_KNOWLEDGE_API: only "rest" limits to products, cites spans, dates pages."""
        ...

    async def ask(
        self,
        question: str,
        *,
        asker: str | None = None,
        on_wait: Callable[[float], Awaitable[None]] | None = None,
        scope: Scope = (),
        on_sources: OnSources | None = None,
    ) -> Answer:
        """answer_query; over quota, search_documents with a `fallback`. `asker` (a Slack user)
        counts against the per-person allowance; `on_wait` is told the wait for a minute slot;
        `scope` limits it to products (InvalidInput SCOPE_NEEDS_REST on MCP); `on_sources`
        (REST) is told a scoped search's pages if they come before the answer."""

    async def verify(self, answer: Answer) -> Answer:
        """A generated answer with its commands checked against its cited pages; never raises."""

    async def has_answer(self, question: str, *, scope: Scope = ()) -> bool:
        """Whether a generated answer to `question` is cached (True when it cannot be told)."""

    async def search(self, query: str, *, scope: Scope = ()) -> Answer: ...

    async def pay(self, query: str, language: str | None = None) -> Answer:
        """Pay & Wallet search_documentation; without Pay configured, DK search with a note."""

    async def docs(self, names: list[str]) -> list[Document]: ...

    async def status(self) -> list[ServerStatus]: ...

    def recently_healthy(self, within_seconds: float = 300.0) -> bool: ...

    async def aclose(self) -> None: ...
