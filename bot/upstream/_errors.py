"""What a server said (HTTP status, Google error JSON, JSON-RPC error, `isError` result) as the
typed errors of `bot.errors`: a code and the facts a sentence needs (words: bot.render).
Quoted server text always goes through `Redactor` first.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from bot.errors import (
    AuthError,
    ErrorFacts,
    GdocsError,
    InvalidInput,
    NotFound,
    ProtocolError,
    QuotaExceeded,
    QuotaSignal,
    Reason,
    ServerKey,
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
    """The server refuses the revision sent (-32022, or wants a session); `supported`: the
    revisions it names (error.data.supported)."""

    def __init__(self, supported: object = None) -> None:
        super().__init__("protocol version refused")
        ok = isinstance(supported, list) and all(isinstance(v, str) for v in supported)
        self.supported: tuple[str, ...] = tuple(supported) if ok else ()  # type: ignore[arg-type]


class SessionExpired(Exception):
    """404 on a request carrying Mcp-Session-Id: initialize again."""


@dataclass(frozen=True)
class ServerContext:
    """What an error needs to say about one server and how we authenticate to it."""

    key: ServerKey
    url_setting: str
    api_service: str
    auth: AuthKind
    timeout: float
    redact: Redactor

    def quote(self, text: str) -> str:
        return one_line(self.redact(text), 160)

    def facts(self, reason: Reason, **details: Any) -> ErrorFacts:
        """`reason` about this server, with what every sentence about it may name."""
        return ErrorFacts(
            reason,
            server=self.key,
            api_service=self.api_service,
            url_setting=self.url_setting,
            **details,
        )

    def auth_error(self, status: int | None, text: str = "") -> AuthError:
        if _NOT_ENABLED.search(text):
            return self.not_enabled()
        if _QUOTA_PROJECT.search(text):
            return self._auth(Reason.QUOTA_PROJECT, "GOOGLE_CLOUD_PROJECT", status)
        if self.auth == "api_key":
            return self._auth(Reason.KEY_REFUSED, "GOOGLE_API_KEY", status)
        if self.auth == "none":
            if self.key == "pay":
                return self._auth(Reason.NEEDS_OAUTH, "GOOGLE_APPLICATION_CREDENTIALS", status)
            return self._auth(Reason.NEEDS_CREDENTIALS, "GOOGLE_API_KEY", status)
        if status == 403 or re.search(r"PERMISSION_DENIED|\b403\b", text):
            return self._auth(Reason.IAM_DENIED, "GOOGLE_APPLICATION_CREDENTIALS", status)
        return self._auth(Reason.OAUTH_REFUSED, "GOOGLE_APPLICATION_CREDENTIALS", status)

    def _auth(self, reason: Reason, setting: str, status: int | None) -> AuthError:
        detail = f"HTTP {status}" if status else ""
        return AuthError(setting=setting, facts=self.facts(reason, detail=detail))

    def not_enabled(self) -> AuthError:
        return AuthError(setting=self.url_setting, facts=self.facts(Reason.NOT_ENABLED))

    def quota(self, tool: str, signal: QuotaSignal | None = None) -> QuotaExceeded:
        return QuotaExceeded(
            signal=signal or QuotaSignal("unknown"),
            facts=self.facts(Reason.OVER_QUOTA, tool=tool),
        )

    def timeout_error(self) -> Unavailable:
        return UpstreamTimeout(facts=self.facts(Reason.TIMED_OUT, seconds=self.timeout))

    def unavailable(self, why: str, *, transient: bool) -> Unavailable:
        cls = Transient if transient else Unavailable
        return cls(facts=self.facts(Reason.UNAVAILABLE, detail=why))

    def protocol(self, why: str) -> ProtocolError:
        return ProtocolError(facts=self.facts(Reason.UNREADABLE, detail=why))

    def refused(self, quoted: str) -> InvalidInput:
        """The server refused the request (400 / INVALID_ARGUMENT); `quoted` is redacted."""
        return InvalidInput(facts=self.facts(Reason.REFUSED, detail=quoted))

    def not_found(self, text: str) -> NotFound:
        name = _DOC_NAME.search(text)
        found = name.group(0).rstrip(".,;:") if name else ""
        return NotFound(facts=self.facts(Reason.NOT_FOUND, name=found))

    def from_http(
        self,
        status: int,
        body: bytes,
        *,
        tool: str,
        modern: bool = False,
        retry_after: str | None = None,
    ) -> Exception:
        """The error for a non-2xx HTTP answer (VersionRefused is a signal)."""
        text, rpc_code, data = _error_text(body)
        if status == 400 and modern and (rpc_code == -32022 or _VERSION_REFUSED.search(text)):
            return VersionRefused(data.get("supported") if isinstance(data, dict) else None)
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
            return self.refused(self.quote(text) if text else "")
        return self.protocol(f"HTTP {status}")

    def from_rpc_error(self, error: object, *, tool: str, modern: bool) -> Exception:
        if not isinstance(error, dict):
            return self.protocol("malformed JSON-RPC error")
        code = error.get("code")
        message = str(error.get("message", ""))
        data = error.get("data")
        text = message + (" " + json.dumps(data) if data is not None else "")
        if code == -32022 and modern:
            return VersionRefused(data.get("supported") if isinstance(data, dict) else None)
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
            return self.refused(self.quote(text))
        return self.unavailable(f"{tool} failed: {self.quote(text)}", transient=False)

    def _from_text(self, text: str) -> GdocsError | None:
        if _NOT_ENABLED.search(text):
            return self.not_enabled()
        if _QUOTA.search(text) and not _QUOTA_PROJECT.search(text):
            return QuotaExceeded(facts=ErrorFacts(Reason.OVER_QUOTA))  # replaced by the caller
        if _BAD_KEY.search(text) or _AUTH.search(text):
            return self.auth_error(None, text)
        if _NOT_FOUND.search(text):
            return self.not_found(text)
        return None


def _error_text(body: bytes) -> tuple[str, int | None, object]:
    """The message, JSON-RPC code and data of an error body (Google JSON, JSON-RPC, text)."""
    raw = body.decode("utf-8", errors="replace")
    try:
        data: Any = json.loads(raw)
    except ValueError:
        # a proxy's or Google's HTML page carries nothing useful
        return ("" if "<html" in raw[:500].lower() else raw), None, None
    if isinstance(data, list) and data:
        data = data[0]
    if not isinstance(data, dict) or not isinstance(data.get("error"), dict):
        return raw, None, None
    error = data["error"]
    parts = [str(error.get(k, "")) for k in ("status", "message") if error.get(k)]
    code = error.get("code")
    rpc_code = code if isinstance(code, int) and code < 0 else None
    return " ".join(parts), rpc_code, error.get("data")
