"""Logging set-up: text or JSON lines on stderr, with every secret redacted."""

from __future__ import annotations

import contextvars
import json
import logging
import sys
import uuid
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from bot.redact import Redactor
from bot.settings import Settings

# attributes every LogRecord has; anything else on a record came from `extra=`
_STANDARD_ATTRS = frozenset(
    vars(logging.LogRecord("x", logging.INFO, "x", 0, "x", None, None)).keys()
    | {"message", "asctime", "taskName"}
)

# libraries whose INFO/DEBUG output is noise (or request URLs) in an operator's log
_NOISY_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2", "hpack", "urllib3", "asyncio")
_ALWAYS_QUIET = ("aiohttp.access", "google.auth", "google_auth_httplib2", "mcp")
#: the SDK's and Bolt's loggers, the Web API client's own by name (it may be created later)
_SLACK_LOGGERS = ("slack_bolt", "slack_sdk", "slack_sdk.web.async_base_client")


#: the Slack request being handled: every log line written while it is handled carries its id
_request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)


def start_request() -> str:
    """A new request id, attached to every log line of the current task from now on."""
    request_id = uuid.uuid4().hex[:16]
    _request_id.set(request_id)
    return request_id


class _RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        request_id = _request_id.get()
        if request_id is not None and not hasattr(record, "request_id"):
            record.request_id = request_id
        return True


def secrets_of(settings: Settings) -> list[str]:
    """The configured secret values of `settings`."""
    values = (
        settings.slack_bot_token,
        settings.slack_signing_secret,
        settings.slack_app_token,
        settings.google_api_key,
    )
    secrets = [v.get_secret_value() for v in values if v is not None]
    try:  # STATE_URL=redis://user:PASSWORD@host…
        password = urlsplit(settings.state_url.get_secret_value()).password
    except ValueError:
        password = None
    return [*secrets, password] if password else secrets


class RedactionFilter(logging.Filter):
    """Rewrites each record in place (message rendered, exception and stack as text, `extra=`
    fields), redacted, so nothing after it can see a secret."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redact = redactor
        self._exc_formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a bad format string must not lose the line
            message = f"{record.msg!s} {record.args!r}"
        record.msg = self.redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._exc_formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        # the traceback is now text: drop the live exception (its str() is unredacted)
        record.exc_info = None
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        for key, value in list(vars(record).items()):
            if key not in _STANDARD_ATTRS:
                setattr(record, key, self.redact.value(value))
        return True


def extra_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The `extra=` fields of a record, in the order they were given."""
    return {k: v for k, v in vars(record).items() if k not in _STANDARD_ATTRS}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, extras, exception."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in extra_fields(record).items():
            entry.setdefault(key, value)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = record.stack_info
        return json.dumps(entry, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """`time LEVEL logger message key=value…`: extras appended so they are not lost."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        line = super().formatMessage(record)
        extras = extra_fields(record)
        if extras:
            line += " " + " ".join(f"{k}={_text_value(v)}" for k, v in extras.items())
        return line


def _text_value(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return json.dumps(text, ensure_ascii=False) if (" " in text or not text) else text


class _StderrHandler(logging.StreamHandler[Any]):
    """Writes to whatever `sys.stderr` is at the time (it may be swapped, e.g. by pytest)."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)

    @property
    def stream(self) -> Any:
        return sys.stderr


def configure_logging(settings: Settings) -> None:
    """Install the stderr handler (text or JSON) with secret redaction on the root logger;
    again, it replaces its own handler and leaves others (a test runner's capture) alone."""
    handler = _StderrHandler()
    handler.setFormatter(JsonFormatter() if settings.log_format == "json" else TextFormatter())
    handler.addFilter(_RequestIdFilter())
    handler.addFilter(RedactionFilter(Redactor(secrets_of(settings))))
    root = logging.getLogger()
    for old in list(root.handlers):
        if isinstance(old, _StderrHandler):
            root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(settings.log_level)
    level = logging.getLevelName(settings.log_level)
    for name in _NOISY_LOGGERS:
        logging.getLogger(name).setLevel(max(logging.WARNING, level))
    for name in _ALWAYS_QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
    # Bolt and the SDK decide whether to build a DEBUG line (a repr of each call's payload)
    # from their own logger's level, not the effective one: each gets the level itself
    for name in _SLACK_LOGGERS:
        logging.getLogger(name).setLevel(level)
    for name, logger in list(logging.root.manager.loggerDict.items()):
        if name.startswith(("slack_bolt.", "slack_sdk.")) and isinstance(logger, logging.Logger):
            logger.setLevel(level)
