"""Credentials for the MCP servers: an API key header, or OAuth through google-auth.

OAuth credentials are built only when OAuth is configured (a key file, or GOOGLE_CLOUD_PROJECT
on Google Cloud), so nothing ever probes the metadata server by accident. google-auth is
synchronous: loading and refreshing run in a worker thread, one at a time, and the token is
refreshed a few minutes before it expires so no request goes out with a dying token.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from bot.upstream._errors import AuthKind

logger = logging.getLogger(__name__)

SCOPE = "https://www.googleapis.com/auth/cloud-platform"


class Auth(Protocol):
    kind: AuthKind

    async def headers(self) -> dict[str, str]: ...

    def secrets(self) -> list[str]: ...

    def close(self) -> None: ...


class NoAuth:
    kind: AuthKind = "none"

    async def headers(self) -> dict[str, str]:
        return {}

    def secrets(self) -> list[str]:
        return []

    def close(self) -> None:
        return None


class ApiKeyAuth:
    kind: AuthKind = "api_key"

    def __init__(self, key: str) -> None:
        self._key = key

    async def headers(self) -> dict[str, str]:
        return {"X-Goog-Api-Key": self._key}

    def secrets(self) -> list[str]:
        return [self._key]

    def close(self) -> None:
        return None


def __getattr__(name: str) -> Any:
    # OAuth and its google-auth transport live in _oauth, imported on first use
    if name in ("OAuth", "HttpxRequest"):
        from bot.upstream import _oauth

        return getattr(_oauth, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
