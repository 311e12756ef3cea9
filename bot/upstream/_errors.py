"""Turning what a server said (HTTP status, Google error JSON, JSON-RPC error, `isError` tool
result) into the typed errors of `bot.errors`, with one-line messages a user can act on.

Server text is never trusted to be secret-free: everything quoted from it goes through
`Redactor`, which removes the credentials the client holds and anything shaped like one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from bot.errors import (
    AuthError,
    GdocsError,
    InvalidInput,
    NotFound,
    ProtocolError,
    QuotaExceeded,
    QuotaSignal,
    Unavailable,
    UpstreamTimeout,
)
from bot.redact import Redactor
from bot.text import one_line
from bot.upstream._quota_kind import http_quota_signal, rpc_quota_signal, text_quota_signal

AuthKind = Literal["api_key", "oauth", "none"]

# Linear in an error text: alternations of fixed words; the only gaps (`.{0,40}`, `.{0,20}`)
# are bounded, so each start re-reads at most that many characters.
_QUOTA = re.compile(
    r"RESOURCE_EXHAUSTED|\b429\b|quota\s+(?:exceeded|exhausted|limit)"
    r"|(?:exceeded|exhausted|out\s+of)\b.{0,40}\bquota|rate\s*limit",
    re.IGNORECASE | re.DOTALL,
)
_NOT_ENABLED = re.compile(
    r"SERVICE_DISABLED|has not been used in project|it is disabled|is not enabled"
    r"|API has not been|not been enabled",
    re.IGNORECASE,
)
_QUOTA_PROJECT = re.compile(r"quota project|user project", re.IGNORECASE)
_NOT_FOUND = re.compile(r"NOT_FOUND|\b404\b|not found", re.IGNORECASE)
_AUTH = re.compile(r"UNAUTHENTICATED|PERMISSION_DENIED|\b401\b|\b403\b", re.IGNORECASE)
_BAD_KEY = re.compile(r"API key not valid|API_KEY_INVALID|invalid api key", re.IGNORECASE)
_INVALID = re.compile(r"INVALID_ARGUMENT|\b400\b", re.IGNORECASE)
_DOC_NAME = re.compile(r"documents/[A-Za-z0-9._~!$()*+,;=:@%/-]+")
_VERSION_REFUSED = re.compile(
    r"session id|protocol version|unsupported.{0,20}version|initiali[sz]", re.IGNORECASE
)


class Transient(Unavailable):
    """503/504/502, connection refused or reset: worth another try."""


class VersionRefused(Exception):
    """The server will not speak 2026-07-28 (-32022, or wants a session): use the 2025 lifecycle."""


class SessionExpired(Exception):
    """404 on a request carrying Mcp-Session-Id: initialize again."""


@dataclass(frozen=True)
class ServerContext:
    """What error messages need to know about one server and how we authenticate to it."""

    key: Literal["developer_knowledge", "pay"]
    #: how users know it: "The Google documentation service"
    display: str
    url_setting: str
    api_service: str
    auth: AuthKind
    timeout: float
    redact: Redactor

    def quote(self, text: str) -> str:
        return one_line(self.redact(text), 160)

    # --- messages --------------------------------------------------------------------
    def auth_error(self, status: int | None, text: str = "") -> AuthError:
        if _NOT_ENABLED.search(text):
            return self.not_enabled()
        if _QUOTA_PROJECT.search(text):
            return AuthError(
                f"{self.display} wants a quota project: set GOOGLE_CLOUD_PROJECT to the project "
                f"where {self.api_service} is enabled.",
                setting="GOOGLE_CLOUD_PROJECT",
            )
        if self.auth == "api_key":
            return AuthError(
                f"{self.display} refused the API key: check GOOGLE_API_KEY (a valid key that "
                f"may call {self.api_service}).",
                setting="GOOGLE_API_KEY",
            )
        if self.auth == "none":
            if self.key == "pay":
                return AuthError(
                    f"{self.display} needs OAuth: set GOOGLE_APPLICATION_CREDENTIALS (a service "
                    "account key file) and GOOGLE_CLOUD_PROJECT.",
                    setting="GOOGLE_APPLICATION_CREDENTIALS",
                )
            return AuthError(
                f"{self.display} needs credentials: set GOOGLE_API_KEY (or "
                "GOOGLE_APPLICATION_CREDENTIALS and GOOGLE_CLOUD_PROJECT for OAuth).",
                setting="GOOGLE_API_KEY",
            )
        if status == 403 or re.search(r"PERMISSION_DENIED|\b403\b", text):
            return AuthError(
                f"{self.display} denied access: give the service account the IAM role "
                "roles/mcp.toolUser in GOOGLE_CLOUD_PROJECT (credentials from "
                "GOOGLE_APPLICATION_CREDENTIALS).",
                setting="GOOGLE_APPLICATION_CREDENTIALS",
            )
        return AuthError(
            f"{self.display} refused the OAuth credentials: check GOOGLE_APPLICATION_CREDENTIALS "
            "and GOOGLE_CLOUD_PROJECT.",
            setting="GOOGLE_APPLICATION_CREDENTIALS",
        )

    def not_enabled(self) -> AuthError:
        return AuthError(
            f"{self.display} is not enabled for your Google Cloud project: run `gcloud "
            f"services enable {self.api_service} --project=PROJECT_ID` (or check "
            f"{self.url_setting}).",
            setting=self.url_setting,
        )

    def quota(self, tool: str, signal: QuotaSignal | None = None) -> QuotaExceeded:
        signal = signal or QuotaSignal("unknown")
        message = f"{self.display} is over its quota — try again in a minute."
        if tool == "answer_query" and signal.limit == "day":
            message = f"{self.display} has used up its answer quota for today."
        elif tool == "answer_query":
            message = f"{self.display} is over its answer quota for now — try again in a minute."
        return QuotaExceeded(message, signal=signal)

    def timeout_error(self) -> Unavailable:
        return UpstreamTimeout(
            f"{self.display} did not answer in {self.timeout:g} s — try again in a minute."
        )

    def unavailable(self, why: str, *, transient: bool) -> Unavailable:
        cls = Transient if transient else Unavailable
        return cls(f"{self.display} is unavailable right now ({why}) — try again in a minute.")

    def protocol(self, why: str) -> ProtocolError:
        return ProtocolError(f"{self.display} sent an answer the bot cannot read ({why}).")

    def not_found(self, text: str) -> NotFound:
        name = _DOC_NAME.search(text)
        if name:
            return NotFound(f"Not found in the documentation: {name.group(0).rstrip('.,;:')}")
        return NotFound("That was not found in the documentation.")

    # --- classification --------------------------------------------------------------
    def from_http(
        self,
        status: int,
        body: bytes,
        *,
        tool: str,
        modern: bool,
        retry_after: str | None = None,
    ) -> Exception:
        """The error for a non-2xx HTTP answer (VersionRefused/SessionExpired are signals);
        `retry_after` is the Retry-After header, if any."""
        text, rpc_code = _error_text(body)
        if status == 400 and modern and (rpc_code == -32022 or _VERSION_REFUSED.search(text)):
            return VersionRefused()
        quota = status == 429 or (status in (400, 403) and _QUOTA.search(text))
        if quota and not _QUOTA_PROJECT.search(text):
            return self.quota(tool, http_quota_signal(body, retry_after=retry_after))
        if status == 400 and _BAD_KEY.search(text):
            return self.auth_error(400, text)
        if status in (401, 403):
            return self.auth_error(status, text)
        if status == 404:
            if _DOC_NAME.search(text):
                return self.not_found(text)
            return self.not_enabled()
        if status in (502, 503, 504):
            return self.unavailable(f"HTTP {status}", transient=True)
        if status == 408:
            return self.timeout_error()
        if status >= 500:
            return self.unavailable(f"HTTP {status}", transient=False)
        if status == 400:
            detail = f": {self.quote(text)}" if text else ""
            return InvalidInput(f"{self.display} refused the request{detail}")
        return self.protocol(f"HTTP {status}")

    def from_rpc_error(self, error: object, *, tool: str, modern: bool) -> Exception:
        if not isinstance(error, dict):
            return self.protocol("malformed JSON-RPC error")
        code = error.get("code")
        message = str(error.get("message", ""))
        data = error.get("data")
        text = message + (" " + json.dumps(data) if data is not None else "")
        if code == -32022 and modern:
            return VersionRefused()
        known = self._from_text(text)
        if known is not None:
            if isinstance(known, QuotaExceeded):
                return self.quota(tool, rpc_quota_signal(message, data))
            return known
        if code == -32601:
            return self.protocol(f"it does not offer {tool or 'that method'}")
        if code in (-32600, -32602, -32700):
            return self.protocol(f"error {code}: {self.quote(message)}")
        return self.unavailable(f"error {code}: {self.quote(message)}", transient=False)

    def from_tool_error(self, text: str, *, tool: str) -> GdocsError:
        """A tool result with isError: true."""
        known = self._from_text(text)
        if isinstance(known, QuotaExceeded):
            return self.quota(tool, text_quota_signal(text))
        if known is not None:
            return known
        if _INVALID.search(text):
            return InvalidInput(f"{self.display} refused the request: {self.quote(text)}")
        return self.unavailable(f"{tool} failed: {self.quote(text)}", transient=False)

    def _from_text(self, text: str) -> GdocsError | None:
        if _NOT_ENABLED.search(text):
            return self.not_enabled()
        if _QUOTA.search(text) and not _QUOTA_PROJECT.search(text):
            return QuotaExceeded("quota")
        if _BAD_KEY.search(text) or _AUTH.search(text):
            return self.auth_error(None, text)
        if _NOT_FOUND.search(text):
            return self.not_found(text)
        return None


def _error_text(body: bytes) -> tuple[str, int | None]:
    """The message and JSON-RPC code of an error body (Google JSON, JSON-RPC, or text/HTML)."""
    raw = body.decode("utf-8", errors="replace")
    try:
        data: Any = json.loads(raw)
    except ValueError:
        if "<html" in raw[:500].lower():
            return "", None  # a proxy's or Google's HTML page carries nothing useful
        return raw, None
    if isinstance(data, list) and data:
        data = data[0]
    if not isinstance(data, dict) or not isinstance(data.get("error"), dict):
        return raw, None
    error = data["error"]
    parts = [str(error.get(k, "")) for k in ("status", "message") if error.get(k)]
    code = error.get("code")
    rpc_code = code if isinstance(code, int) and code < 0 else None
    return " ".join(parts), rpc_code
