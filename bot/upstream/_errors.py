"""What a server said (HTTP status, error JSON, JSON-RPC error, `isError` result, tool output) or
a failed exchange as the typed errors of `bot.errors`; which quota a 429 names; quotes redacted."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import aiohttp
import httpx
from pydantic import BaseModel, ConfigDict, ValidationError

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

AuthKind = Literal["api_key", "oauth", "none"]

# all linear: alternations of fixed words, the only gaps bounded
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
_DENIED = re.compile(r"PERMISSION_DENIED|\b403\b", re.IGNORECASE)
_BAD_KEY = re.compile(r"API key not valid|API_KEY_INVALID|invalid api key", re.IGNORECASE)
_INVALID = re.compile(r"INVALID_ARGUMENT|\b400\b", re.IGNORECASE)
_DOC_NAME = re.compile(r"documents/[A-Za-z0-9._~!$()*+,;=:@%/-]+")
_VERSION_REFUSED = re.compile(
    r"session id|protocol version|unsupported.{0,20}version|initiali[sz]", re.IGNORECASE
)
# quota windows: "PerMinutePerProject" -> "Per Minute Per Project", "Per100Seconds" too
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Za-z])(?=[0-9])")
_WINDOW = re.compile(
    r"\bper\s*(?:\d+\s*)?(seconds?|secs?|minutes?|mins?|hours?|days?)\b|\b(daily)\b",
    re.IGNORECASE,
)
_UNIT = {"sec": "minute", "min": "minute", "day": "day", "dai": "day"}  # hours are neither
_QUOTA_LIMIT = re.compile(r'"quota_limit"\s*:\s*"([^"]*)"')
_LIMIT_VALUE = re.compile(r'"quota_limit_value"\s*:\s*"?(\d{1,9})\b')
_RETRY_DELAY = re.compile(r'"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"')
_RETRY_TEXT = re.compile(r"retry\s+(?:in|after)\s+(\d+(?:\.\d+)?)\s*s(?:ec\w*)?\b", re.I)


def quota_signal(text: str, retry_after: str | None = None) -> QuotaSignal:
    """Which limit a quota refusal names, how long to wait and the limit's size: Google's
    ErrorInfo and RetryInfo wherever they sit in `text` (a body, JSON-RPC data, a tool's text),
    else its words, then `Retry-After`. No window, an hour, or both: "unknown"."""
    text = "" if "<html" in text[:500].lower() else text.replace('\\"', '"')
    window = _window(_QUOTA_LIMIT.findall(text))
    if window == "unknown":
        window = _window([text])
    delay = _RETRY_DELAY.search(text) or _RETRY_TEXT.search(text)
    retry = _seconds(delay.group(1)) if delay else _seconds(retry_after)
    value = next((int(v) for v in _LIMIT_VALUE.findall(text) if int(v) > 0), None)
    return QuotaSignal(limit=window, retry_after=retry, limit_value=value)


def _window(texts: list[str]) -> Any:
    found = set()
    for text in texts:
        for match in _WINDOW.finditer(_CAMEL.sub(" ", text.replace("_", " "))):
            found.add(_UNIT.get((match.group(1) or match.group(2)).lower()[:3], "other"))
    return found.pop() if found in ({"minute"}, {"day"}) else "unknown"


def _seconds(value: str | None) -> float | None:
    try:
        seconds = float(value or "")
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


class Output(BaseModel):
    """A tool's output: unknown fields are ignored, the ones we use are required."""

    model_config = ConfigDict(defer_build=True, extra="ignore", frozen=True)


class ToolInfo(Output):
    name: str


class ListToolsOutput(Output):
    tools: list[ToolInfo]


_M = TypeVar("_M", bound=Output)


class Transient(Unavailable):
    """503/504/502, connection refused or reset: worth another try."""


class VersionRefused(Exception):
    """The server refuses the revision sent; `supported`: the revisions it names (-32022)."""

    def __init__(self, data: object = None) -> None:
        super().__init__("protocol version refused")
        names = data.get("supported") if isinstance(data, dict) else None
        ok = isinstance(names, list) and all(isinstance(v, str) for v in names)
        self.supported: tuple[str, ...] = tuple(names) if ok else ()  # type: ignore[arg-type]


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
        where: dict[str, Any] = {"server": self.key, "api_service": self.api_service}
        return ErrorFacts(reason, url_setting=self.url_setting, **where, **details)

    def timeout_error(self) -> Unavailable:
        return UpstreamTimeout(facts=self.facts(Reason.TIMED_OUT, seconds=self.timeout))

    def unavailable(self, why: str, *, transient: bool) -> Unavailable:
        cls = Transient if transient else Unavailable
        return cls(facts=self.facts(Reason.UNAVAILABLE, detail=why))

    def protocol(self, why: str) -> ProtocolError:
        return ProtocolError(facts=self.facts(Reason.UNREADABLE, detail=why))

    def parse(self, model: type[_M], data: object, tool: str) -> _M:
        """`data` as `model`, or ProtocolError naming the first field that is wrong."""
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            first = exc.errors(include_input=False, include_url=False)[0]
            detail = f"{'.'.join(str(p) for p in first['loc']) or 'result'}: {first['msg']}"
            facts = ErrorFacts(Reason.UNREADABLE_RESULT, server=self.key, tool=tool, detail=detail)
            raise ProtocolError(facts=facts) from None

    def from_http(
        self,
        status: int,
        body: bytes,
        *,
        tool: str,
        modern: bool | str = False,
        retry_after: str | None = None,
    ) -> Exception:
        """The error for a non-2xx HTTP answer (VersionRefused is a signal)."""
        raw = body.decode("utf-8", errors="replace")
        text, rpc_code, data = _error_text(raw)
        if status == 400 and modern and (rpc_code == -32022 or _VERSION_REFUSED.search(text)):
            return VersionRefused(data)
        if status == 408:
            return self.timeout_error()
        if status >= 500:
            return self.unavailable(f"HTTP {status}", transient=status in (502, 503, 504))
        if status == 404 and not _DOC_NAME.search(text):
            return self._not_enabled()  # Google's answer on /mcp when the API is off
        if known := self._classify(text, tool, status, raw, wait=retry_after):
            return known
        return self._refused(text) if status == 400 else self.protocol(f"HTTP {status}")

    def from_rpc_error(self, error: object, *, tool: str, modern: bool | str) -> Exception:
        if not isinstance(error, dict):
            return self.protocol("malformed JSON-RPC error")
        code, data = error.get("code"), error.get("data")
        message = str(error.get("message", ""))
        if code == -32022 and modern:
            return VersionRefused(data)
        text = message + (" " + json.dumps(data) if data is not None else "")
        if known := self._classify(text, tool):
            return known
        if code == -32601:
            return self.protocol(f"it does not offer {tool or 'that method'}")
        if code in (-32600, -32602, -32700):
            return self.protocol(f"error {code}: {self.quote(message)}")
        return self.unavailable(f"error {code}: {self.quote(message)}", transient=False)

    def from_transport(self, exc: httpx.HTTPError) -> Exception:
        """No answer, a broken one, or a request httpx would not send."""
        # httpx-aiohttp reports every aiohttp connection error as ConnectTimeout: aiohttp's says
        cause = exc.__cause__
        if isinstance(cause, aiohttp.ClientConnectionError) and not isinstance(cause, TimeoutError):
            refused = isinstance(cause, aiohttp.ClientConnectorError)
        elif isinstance(exc, httpx.TimeoutException):
            return self.timeout_error()
        elif isinstance(exc, httpx.UnsupportedProtocol | httpx.LocalProtocolError):
            return self.protocol(f"bad request URL or headers: {type(exc).__name__}")
        elif isinstance(exc, httpx.TransportError):
            refused = isinstance(exc, httpx.ConnectError)
        else:
            return self.protocol(type(exc).__name__)  # DecodingError, TooManyRedirects…
        return self.unavailable("cannot connect" if refused else "connection lost", transient=True)

    def from_tool_error(self, text: str, *, tool: str) -> GdocsError:
        """A tool result with isError: true."""
        if known := self._classify(text, tool):
            return known
        if _INVALID.search(text):
            return self._refused(text)
        return self.unavailable(f"{tool} failed: {self.quote(text)}", transient=False)

    def _classify(
        self, text: str, tool: str, status: int = 0, raw: str = "", wait: str | None = None
    ) -> GdocsError | None:
        """The error a server's words (and HTTP 4xx status, if any) name; None: no known one.
        A quota's signal is read from `raw` (the whole body) and `wait` (Retry-After)."""
        if _NOT_ENABLED.search(text):
            return self._not_enabled()
        quota = status == 429 or (status in (0, 400, 403) and _QUOTA.search(text))
        if quota and not _QUOTA_PROJECT.search(text):
            signal = quota_signal(raw or text, wait)
            return QuotaExceeded(signal=signal, facts=self.facts(Reason.OVER_QUOTA, tool=tool))
        if _BAD_KEY.search(text) or status in (401, 403) or (not status and _AUTH.search(text)):
            return self._auth_error(status, text)
        if status == 404 or (not status and _NOT_FOUND.search(text)):
            name = _DOC_NAME.search(text)
            found = name.group(0).rstrip(".,;:") if name else ""
            return NotFound(facts=self.facts(Reason.NOT_FOUND, name=found))
        return None

    def _auth_error(self, status: int, text: str) -> AuthError:
        if _QUOTA_PROJECT.search(text):
            reason, setting = Reason.QUOTA_PROJECT, "GOOGLE_CLOUD_PROJECT"
        elif self.auth == "api_key":
            reason, setting = Reason.KEY_REFUSED, "GOOGLE_API_KEY"
        elif self.auth == "none" and self.key == "pay":
            reason, setting = Reason.NEEDS_OAUTH, "GOOGLE_APPLICATION_CREDENTIALS"
        elif self.auth == "none":
            reason, setting = Reason.NEEDS_CREDENTIALS, "GOOGLE_API_KEY"
        elif status == 403 or _DENIED.search(text):
            reason, setting = Reason.IAM_DENIED, "GOOGLE_APPLICATION_CREDENTIALS"
        else:
            reason, setting = Reason.OAUTH_REFUSED, "GOOGLE_APPLICATION_CREDENTIALS"
        detail = f"HTTP {status}" if status else ""
        return AuthError(setting=setting, facts=self.facts(reason, detail=detail))

    def _not_enabled(self) -> AuthError:
        return AuthError(setting=self.url_setting, facts=self.facts(Reason.NOT_ENABLED))

    def _refused(self, text: str) -> InvalidInput:
        """The server refused the request (400 / INVALID_ARGUMENT), quoted redacted."""
        return InvalidInput(facts=self.facts(Reason.REFUSED, detail=self.quote(text)))


def _error_text(raw: str) -> tuple[str, int | None, object]:
    """The message, JSON-RPC code and data of an error body (Google JSON, JSON-RPC, text)."""
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
