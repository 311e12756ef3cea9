"""Credentials for the MCP servers: an API key header, or OAuth through google-auth (a key file
or Application Default Credentials), which loads and refreshes in a worker thread and is
imported only when OAuth is configured (nothing probes the metadata server by accident)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import httpx

from bot.errors import AuthError, ErrorFacts, Reason
from bot.settings import Settings
from bot.upstream._errors import AuthKind, Transient

SCOPE = "https://www.googleapis.com/auth/cloud-platform"
_REFRESH_MARGIN_SECONDS = 300.0


class ApiKeyAuth:
    """The API key header (`key` None: no credentials at all)."""

    def __init__(self, key: str | None) -> None:
        self.kind: AuthKind = "none" if key is None else "api_key"
        self._headers = {} if key is None else {"X-Goog-Api-Key": key}

    async def headers(self) -> dict[str, str]:
        return self._headers

    def secrets(self) -> list[str]:
        return list(self._headers.values())


class OAuth:
    kind: AuthKind = "oauth"

    def __init__(self, settings: Settings, clock: Callable[[], datetime]) -> None:
        self._file = settings.google_application_credentials
        self._project = settings.google_cloud_project
        self._clock = clock
        self._http = httpx.Client(timeout=settings.mcp_timeout_seconds)
        self._credentials: Any = None
        self._lock = asyncio.Lock()

    async def headers(self) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {await self._token()}"}
        if self._project:
            headers["X-Goog-User-Project"] = self._project
        return headers

    def secrets(self) -> list[str]:
        token = getattr(self._credentials, "token", None)
        return [token] if isinstance(token, str) else []

    def close(self) -> None:
        self._http.close()

    async def _token(self) -> str:
        if self._credentials is None or self._stale(self._credentials):
            async with self._lock:  # one load/refresh at a time; the others reuse its token
                if self._credentials is None:
                    self._credentials = await asyncio.to_thread(self._load)
                if self._stale(self._credentials):
                    await asyncio.to_thread(self._refresh, self._credentials)
        return str(self._credentials.token)

    def _stale(self, creds: Any) -> bool:
        """No token, or one expiring within the margin (google-auth keeps naive UTC)."""
        if not creds.token or creds.expiry is None:
            return not creds.token
        now = self._clock().astimezone(UTC).replace(tzinfo=None)
        return bool((creds.expiry - now).total_seconds() <= _REFRESH_MARGIN_SECONDS)

    def _load(self) -> Any:
        import google.auth
        from google.auth.exceptions import DefaultCredentialsError, GoogleAuthError

        if self._file is None:  # the project-only path: workload identity on GCP
            try:
                return google.auth.default(scopes=[SCOPE])[0]
            except DefaultCredentialsError:
                raise _auth_error(Reason.NO_CREDENTIALS) from None
        from google.oauth2 import service_account

        try:
            info = json.loads(self._file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise _auth_error(Reason.KEY_FILE_UNREADABLE, name=str(self._file)) from None
        try:  # the typed loader for service accounts (the generic one is deprecated for them)
            if isinstance(info, dict) and info.get("type") == "service_account":
                return service_account.Credentials.from_service_account_info(info, scopes=[SCOPE])  # type: ignore[no-untyped-call]
            # authorized_user / external_account files (workload federation)
            return google.auth.load_credentials_from_file(str(self._file), scopes=[SCOPE])[0]  # type: ignore[no-untyped-call]
        except (ValueError, KeyError, GoogleAuthError):
            raise _auth_error(Reason.KEY_FILE_UNUSABLE, name=str(self._file)) from None

    def _refresh(self, creds: Any) -> None:
        from google.auth.exceptions import RefreshError, TransportError

        def request(
            url: str,
            method: str = "GET",
            body: bytes | None = None,
            headers: Mapping[str, str] | None = None,
            **_: Any,
        ) -> SimpleNamespace:  # google-auth's transport interface, on httpx
            try:  # within MCP_TIMEOUT_SECONDS, whatever google-auth asks
                sent = self._http.request(method, url, content=body, headers=headers)
            except httpx.HTTPError as exc:
                raise TransportError(type(exc).__name__) from exc  # type: ignore[no-untyped-call]
            return SimpleNamespace(status=sent.status_code, headers=sent.headers, data=sent.content)

        try:
            creds.refresh(request)
        except RefreshError as exc:
            # "invalid_grant" from google-auth's "('invalid_grant: …', {…})": nothing secret
            code = re.search(r"\b(invalid_[a-z_]+|unauthorized_client|access_denied)\b", str(exc))
            detail = code.group(1) if code else "token refresh failed"
            raise _auth_error(Reason.REFRESH_REFUSED, detail=detail) from None
        except TransportError:
            raise Transient(facts=ErrorFacts(Reason.REFRESH_UNANSWERED)) from None


Auth = ApiKeyAuth | OAuth


def _auth_error(reason: Reason, *, detail: str = "", name: str = "") -> AuthError:
    facts = ErrorFacts(reason, detail=detail, name=name)
    return AuthError(setting="GOOGLE_APPLICATION_CREDENTIALS", facts=facts)
