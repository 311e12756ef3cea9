"""OAuth through google-auth: a key file or Application Default Credentials, loaded and
refreshed in a worker thread (google-auth is synchronous), one at a time, a few minutes before
the token expires. Imported only when OAuth is configured: nothing probes the metadata server
by accident."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from google.auth import exceptions as google_exceptions
from google.auth import transport as google_transport

from bot.errors import AuthError, ErrorFacts, Reason
from bot.upstream._errors import AuthKind, Transient

logger = logging.getLogger(__name__)

SCOPE = "https://www.googleapis.com/auth/cloud-platform"


@dataclass(frozen=True)
class _Response:  # what google-auth reads of a response
    status: int
    headers: Mapping[str, str]
    data: bytes


class HttpxRequest(google_transport.Request):
    """google-auth's transport interface on a synchronous httpx client (used in a thread)."""

    def __init__(self, timeout: float) -> None:
        self._client = httpx.Client(timeout=timeout)
        self._timeout = timeout

    def __call__(
        self,
        url: str,
        method: str = "GET",
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> _Response:
        try:
            response = self._client.request(
                method, url, content=body, headers=headers, timeout=timeout or self._timeout
            )
        except httpx.HTTPError as exc:
            raise google_exceptions.TransportError(type(exc).__name__) from exc  # type: ignore[no-untyped-call]
        return _Response(response.status_code, response.headers, response.content)

    def close(self) -> None:
        self._client.close()


class OAuth:
    kind: AuthKind = "oauth"

    def __init__(
        self,
        credentials_file: Path | None,
        project: str | None,
        *,
        timeout: float,
        clock: Callable[[], datetime],
        refresh_margin: float = 300.0,
    ) -> None:
        self._file = credentials_file
        self._project = project
        self._clock = clock
        self._margin = refresh_margin
        self._request = HttpxRequest(timeout)
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
        self._request.close()

    async def _token(self) -> str:
        creds = self._credentials
        if creds is not None and not self._stale(creds):
            return str(creds.token)
        async with self._lock:  # one load/refresh at a time; the others reuse its token
            if self._credentials is None:
                self._credentials = await asyncio.to_thread(self._load)
            creds = self._credentials
            if self._stale(creds):
                await asyncio.to_thread(self._refresh, creds)
            return str(creds.token)

    def _stale(self, creds: Any) -> bool:
        if not creds.token:
            return True
        expiry = creds.expiry  # google-auth keeps naive UTC datetimes
        if expiry is None:
            return False
        now = self._clock().astimezone(UTC).replace(tzinfo=None)
        return bool((expiry - now).total_seconds() <= self._margin)

    def _load(self) -> Any:
        if self._file is not None:
            return _from_file(self._file)
        import google.auth  # the project-only path: workload identity / metadata server on GCP

        try:
            creds, _ = google.auth.default(scopes=[SCOPE])
        except google_exceptions.DefaultCredentialsError:
            raise _auth_error(Reason.NO_CREDENTIALS) from None
        return creds

    def _refresh(self, creds: Any) -> None:
        try:
            creds.refresh(self._request)
        except google_exceptions.RefreshError as exc:
            reason = _oauth_error_code(str(exc))
            raise _auth_error(Reason.REFRESH_REFUSED, detail=reason) from None
        except google_exceptions.TransportError:
            raise Transient(facts=ErrorFacts(Reason.REFRESH_UNANSWERED)) from None
        logger.debug("OAuth token refreshed; expires %s", creds.expiry)


def _from_file(path: Path) -> Any:
    from google.oauth2 import service_account

    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise _auth_error(Reason.KEY_FILE_UNREADABLE, name=str(path)) from None
    try:
        if isinstance(info, dict) and info.get("type") == "service_account":
            return service_account.Credentials.from_service_account_file(  # type: ignore[no-untyped-call]
                str(path), scopes=[SCOPE]
            )
        import google.auth  # authorized_user / external_account files (workload federation)

        creds, _ = google.auth.load_credentials_from_file(  # type: ignore[no-untyped-call]
            str(path), scopes=[SCOPE]
        )
        return creds
    except (ValueError, KeyError, google_exceptions.GoogleAuthError):
        raise _auth_error(Reason.KEY_FILE_UNUSABLE, name=str(path)) from None


def _auth_error(reason: Reason, *, detail: str = "", name: str = "") -> AuthError:
    facts = ErrorFacts(reason, detail=detail, name=name)
    return AuthError(setting="GOOGLE_APPLICATION_CREDENTIALS", facts=facts)


def _oauth_error_code(text: str) -> str:
    """`invalid_grant` from google-auth's "('invalid_grant: …', {…})" (nothing secret)."""
    match = re.search(r"\b(invalid_[a-z_]+|unauthorized_client|access_denied)\b", text)
    return match.group(1) if match else "token refresh failed"
