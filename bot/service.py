"""What the CLI and the Slack app ask of the documentation servers (`GoogleDocsService`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from bot.models import Answer, Document, ServerStatus


class DocsService(Protocol):
    @property
    def pay_configured(self) -> bool: ...

    async def ask(
        self,
        question: str,
        *,
        asker: str | None = None,
        on_wait: Callable[[float], Awaitable[None]] | None = None,
    ) -> Answer:
        """answer_query; over quota, search_documents with a `fallback`. `asker` (a Slack user)
        counts against the per-person allowance; `on_wait` is told the wait for a minute slot."""

    async def verify(self, answer: Answer) -> Answer:
        """A generated answer with its commands checked against its cited pages; never raises."""

    async def search(self, query: str) -> Answer: ...

    async def pay(self, query: str, language: str | None = None) -> Answer:
        """Pay & Wallet search_documentation; without Pay configured, DK search with a note."""

    async def docs(self, names: list[str]) -> list[Document]: ...

    async def status(self) -> list[ServerStatus]: ...

    def recently_healthy(self, within_seconds: float = 300.0) -> bool: ...

    async def aclose(self) -> None: ...
