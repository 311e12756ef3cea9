"""One exception tree for everything that can go wrong talking to the documentation servers.

Every error carries a `code` (what kind of failure) and a one-line `message` that is fit to
show a user as is: no stack trace, no secret, and, for auth errors, the setting to fix.
"""

from __future__ import annotations

from enum import StrEnum


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


class QuotaExceeded(GdocsError):
    code = ErrorCode.QUOTA


class NotFound(GdocsError):
    code = ErrorCode.NOT_FOUND


class Unavailable(GdocsError):
    code = ErrorCode.UNAVAILABLE


class UpstreamTimeout(Unavailable):
    code = ErrorCode.TIMEOUT


class ProtocolError(GdocsError):
    code = ErrorCode.PROTOCOL
