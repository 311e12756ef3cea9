"""One exception tree for everything that can go wrong talking to the documentation servers.

Every error carries a `code` (what kind of failure) and a one-line `message` that is fit to
show a user as is: no stack trace, no secret, and, for auth errors, the setting to fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal


class ErrorCode(StrEnum):
    INVALID_INPUT = "invalid_input"
    CONFIG = "config"
    AUTH = "auth"
    QUOTA = "quota"
    NOT_FOUND = "not_found"
    UNAVAILABLE = "unavailable"
    TIMEOUT = "timeout"
    PROTOCOL = "protocol"


class GdocsError(Exception):
    """Base of every error the bot reports to a user; `message` is one safe line."""

    code: ErrorCode = ErrorCode.PROTOCOL

    def __init__(self, message: str, *, setting: str | None = None):
        super().__init__(message)
        self.message = message
        #: the configuration setting (environment variable) that fixes this error, if any
        self.setting = setting

    def __str__(self) -> str:
        return self.message


class InvalidInput(GdocsError):
    code = ErrorCode.INVALID_INPUT


class ConfigError(GdocsError):
    code = ErrorCode.CONFIG


class AuthError(GdocsError):
    code = ErrorCode.AUTH


@dataclass(frozen=True)
class QuotaSignal:
    """Which of a server's quota limits a 429 was about, as far as the server said.

    `limit` is "minute" for any short window (per minute, per 100 seconds…), "day" for a
    daily quota, "unknown" when the answer does not say; `retry_after` is seconds to wait
    (RetryInfo.retryDelay, a Retry-After header, "retry in 37s"), `limit_value` the quota's
    size (ErrorInfo's quota_limit_value), each None when not given.
    """

    limit: Literal["minute", "day", "unknown"]
    retry_after: float | None = None
    limit_value: int | None = None


class QuotaExceeded(GdocsError):
    code = ErrorCode.QUOTA

    def __init__(
        self,
        message: str,
        *,
        setting: str | None = None,
        signal: QuotaSignal | None = None,
    ) -> None:
        super().__init__(message, setting=setting)
        #: what the server said about the limit; None when the error did not come from one
        self.signal = signal


class NotFound(GdocsError):
    code = ErrorCode.NOT_FOUND


class Unavailable(GdocsError):
    code = ErrorCode.UNAVAILABLE


class UpstreamTimeout(Unavailable):
    code = ErrorCode.TIMEOUT


class ProtocolError(GdocsError):
    code = ErrorCode.PROTOCOL
