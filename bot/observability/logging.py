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
_ALWAYS_QUIET = ("aiohttp.access", "google.auth", "mcp")


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
    values = (
        settings.slack_bot_token,
        settings.slack_signing_secret,
        settings.slack_app_token,
        settings.slack_client_secret,
        settings.slack_state_secret,
        settings.slack_token_encryption_key,
        settings.google_api_key,
    )
    secrets = [v.get_secret_value() for v in values if v is not None]
    try:  # STATE_URL=redis://user:PASSWORD@host…
        password = urlsplit(settings.state_url.get_secret_value()).password
    except ValueError:
        password = None
    return [*secrets, password] if password else secrets


class RedactionFilter(logging.Filter):
    """Redacts each record in place (message, exception, stack, `extra=` fields)."""

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
    return {k: v for k, v in vars(record).items() if k not in _STANDARD_ATTRS}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in extra_fields(record).items():
            entry.setdefault(key, value)
        if record.exc_text:  # RedactionFilter formatted the traceback
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = record.stack_info
        return json.dumps(entry, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        extras = [
            f"{k}={json.dumps(t, ensure_ascii=False) if ' ' in t or not t else t}"
            for k, v in extra_fields(record).items()
            for t in [v if isinstance(v, str) else json.dumps(v, default=str, ensure_ascii=False)]
        ]
        return " ".join([super().formatMessage(record), *extras])


class _StderrHandler(logging.StreamHandler[Any]):
    def __init__(self) -> None:
        logging.Handler.__init__(self)

    @property
    def stream(self) -> Any:  # whatever `sys.stderr` is now (pytest swaps it)
        return sys.stderr


def configure_logging(settings: Settings) -> None:
    """The root logger's stderr handler (text or JSON, redacted), in place of an earlier one."""
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
    levels = {name: max(logging.WARNING, level) for name in _NOISY_LOGGERS}
    levels |= dict.fromkeys(_ALWAYS_QUIET, logging.WARNING)
    # Bolt and the SDK build a DEBUG line (a repr of each payload) by their own logger's
    # level, not the effective one: each gets the level itself (the client's may come later)
    names = [*logging.root.manager.loggerDict, "slack_sdk.web.async_base_client"]
    levels |= {n: level for n in names if n.split(".")[0] in ("slack_bolt", "slack_sdk")}
    levels |= {"slack_bolt": level, "slack_sdk": level}
    for name, value in levels.items():
        logging.getLogger(name).setLevel(value)
