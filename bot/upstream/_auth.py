"""Credentials for the MCP servers: an API key header, or none; OAuth is in `_oauth`
(google-auth, imported only when OAuth is configured)."""

from __future__ import annotations

from typing import Protocol

from bot.upstream._errors import AuthKind


class Auth(Protocol):
    kind: AuthKind

    async def headers(self) -> dict[str, str]: ...

    def secrets(self) -> list[str]: ...

    def close(self) -> None: ...


class ApiKeyAuth:
    """The API key header (`key` None: no credentials at all)."""

    def __init__(self, key: str | None) -> None:
        self.kind: AuthKind = "none" if key is None else "api_key"
        self._headers = {} if key is None else {"X-Goog-Api-Key": key}

    async def headers(self) -> dict[str, str]:
        return self._headers

    def secrets(self) -> list[str]:
        return list(self._headers.values())

    def close(self) -> None:
        return None
