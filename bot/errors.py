"""The errors of talking to the documentation servers. Each has a `code` and either `facts`
(from which `bot.render.error_sentence` writes the user's words) or a finished `message`."""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Literal

ServerKey = Literal["developer_knowledge", "pay"]


class ErrorCode(StrEnum):
    INVALID_INPUT = "invalid_input"
    CONFIG = "config"
    AUTH = "auth"
    QUOTA = "quota"
    NOT_FOUND = "not_found"
    UNAVAILABLE = "unavailable"
    TIMEOUT = "timeout"
    PROTOCOL = "protocol"


class Reason(StrEnum):
    """Each one is a sentence in bot.render (`error_sentence`)."""

    # what the user typed
    EMPTY_TEXT = "empty_text"
    TEXT_TOO_LONG = "text_too_long"
    BAD_LANGUAGE = "bad_language"
    NOT_A_PAGE = "not_a_page"
    #: a product scope asked of the MCP backend, which has no filter
    SCOPE_NEEDS_REST = "scope_needs_rest"
    # a team answer being saved (bot/team.py)
    TEAM_EMPTY = "team_empty"
    TEAM_TOO_LONG = "team_too_long"
    TEAM_FULL = "team_full"
    TEAM_CLASH = "team_clash"
    # what a server said about our credentials or project
    QUOTA_PROJECT = "quota_project"
    KEY_REFUSED = "key_refused"
    NEEDS_OAUTH = "needs_oauth"
    NEEDS_CREDENTIALS = "needs_credentials"
    IAM_DENIED = "iam_denied"
    OAUTH_REFUSED = "oauth_refused"
    NOT_ENABLED = "not_enabled"
    # getting an OAuth token
    NO_CREDENTIALS = "no_credentials"
    REFRESH_REFUSED = "refresh_refused"
    REFRESH_UNANSWERED = "refresh_unanswered"
    KEY_FILE_UNREADABLE = "key_file_unreadable"
    KEY_FILE_UNUSABLE = "key_file_unusable"
    # a server's answer
    OVER_QUOTA = "over_quota"
    TIMED_OUT = "timed_out"
    UNAVAILABLE = "unavailable"
    UNREADABLE = "unreadable"
    UNREADABLE_RESULT = "unreadable_result"
    NOT_FOUND = "not_found"
    REFUSED = "refused"
    NO_FETCH_TOOL = "no_fetch_tool"


_NOT_DESCRIBED = frozenset({"reason", "user_text", "api_service", "url_setting"})


@dataclass(frozen=True)
class ErrorFacts:
    """What a sentence about an error needs, every text already redacted, one line and
    bounded. `user_text` (a bit of what the user typed) is never logged."""

    reason: Reason
    server: ServerKey | None = None
    #: the Google API behind the server, e.g. developerknowledge.googleapis.com
    api_service: str = ""
    #: the setting naming the server's URL (DEVELOPER_KNOWLEDGE_MCP_URL, PAY_MCP_URL)
    url_setting: str = ""
    tool: str = ""
    #: a short technical phrase (HTTP 503) or a redacted quote of the server
    detail: str = ""
    #: a documentation page's name, a key file's path
    name: str = ""
    seconds: float | None = None
    count: int | None = None
    limit: int | None = None
    user_text: str = ""

    def describe(self) -> str:
        """`reason key=value …` for logs: the facts that are set, never `user_text`."""
        parts = [self.reason.value]
        for field in fields(self):
            value = getattr(self, field.name)
            if field.name not in _NOT_DESCRIBED and value not in (None, ""):
                parts.append(f"{field.name}={value}")
        return " ".join(parts)


class GdocsError(Exception):
    code: ErrorCode = ErrorCode.PROTOCOL

    def __init__(
        self, message: str = "", *, setting: str | None = None, facts: ErrorFacts | None = None
    ):
        self.message = message
        self.facts = facts
        #: the environment variable that fixes this error, if any
        self.setting = setting
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.facts is not None:
            return f"{self.code.value}: {self.facts.describe()}"
        return self.message or self.code.value


class InvalidInput(GdocsError):
    code = ErrorCode.INVALID_INPUT


class ConfigError(GdocsError):
    code = ErrorCode.CONFIG


class AuthError(GdocsError):
    code = ErrorCode.AUTH


@dataclass(frozen=True)
class QuotaSignal:
    """Which of a server's quota limits a 429 was about: "minute" for any short window,
    "day", or "unknown"; `retry_after` (seconds) and `limit_value` when the server said."""

    limit: Literal["minute", "day", "unknown"]
    retry_after: float | None = None
    limit_value: int | None = None


class QuotaExceeded(GdocsError):
    code = ErrorCode.QUOTA

    def __init__(
        self,
        message: str = "",
        *,
        setting: str | None = None,
        signal: QuotaSignal | None = None,
        facts: ErrorFacts | None = None,
    ) -> None:
        self.signal = signal  # None when the error did not come from a server
        super().__init__(message, setting=setting, facts=facts)


class NotFound(GdocsError):
    code = ErrorCode.NOT_FOUND


class Unavailable(GdocsError):
    code = ErrorCode.UNAVAILABLE


class UpstreamTimeout(Unavailable):
    code = ErrorCode.TIMEOUT


class ProtocolError(GdocsError):
    code = ErrorCode.PROTOCOL
