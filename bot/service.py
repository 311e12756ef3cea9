"""The docs service protocol: what the CLI and the Slack app ask of the documentation servers
(`bot.upstream.GoogleDocsService` implements it). Errors are `bot.errors.GdocsError`."""

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
        """answer_query; when the quota forbids it, search_documents with a `fallback`. `asker`
        (a Slack user id) is counted against the per-person allowance; `on_wait` is told the
        seconds the answer will wait for a per-minute slot, before it waits."""

    async def verify(self, answer: Answer) -> Answer:
        """A generated answer with its commands checked against the pages it cites (one
        get_documents call at most) within VERIFY_TIMEOUT_SECONDS; "unchecked" when the pages
        cannot be had; never raises. Other answers, or VERIFY_ANSWERS=false: unchanged."""

    async def search(self, query: str) -> Answer:
        """search_documents: hits with titles and fetchable names."""

    async def pay(self, query: str, language: str | None = None) -> Answer:
        """Pay & Wallet search_documentation; without Pay configured, DK search with a note."""

    async def docs(self, names: list[str]) -> list[Document]:
        """get_documents in request order, batched by 20, cached."""

    async def status(self) -> list[ServerStatus]:
        """tools/list on each server: reachability and tool names."""

    def recently_healthy(self, within_seconds: float = 300.0) -> bool:
        """True when the DK server answered (anything but a transport failure) recently."""

    async def aclose(self) -> None: ...
