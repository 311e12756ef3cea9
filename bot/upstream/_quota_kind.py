"""Which quota a refusal was about (per minute, per day, or unknown), in each form it comes in.

Google says it in three places, the most reliable first:

1. `error.details[]` of its error JSON: `google.rpc.ErrorInfo.metadata.quota_limit` (e.g.
   `AnswerQueryRequestsPerMinutePerProject`, `…PerDayPerProject`) and `quota_limit_value`;
2. the text: `error.message` ("… limit 'Answer query requests per minute per project' …") and
   `google.rpc.QuotaFailure.violations[].description`;
3. how long to wait: `google.rpc.RetryInfo.retryDelay` ("37s", "1.5s"), an HTTP `Retry-After`
   header, or "retry in 37s" in the text.

A JSON-RPC error carries the same in `message` and `data` (which may embed Google's error JSON,
as an object or as a JSON string); an `isError` tool result keeps only its text (which may
embed the JSON too).

Windows: seconds or minutes ("per minute", "per 100 seconds", `PerMinute`) are "minute"; a day
("per day", `PerDay`, "daily") is "day"; anything else, nothing, or both at once is "unknown",
which callers turn into a short pause, never a day-long one. The metadata wins over the text.
Everything here is pure: no I/O, and the clock only for a `Retry-After` given as a date.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Literal

from bot.errors import QuotaSignal

Window = Literal["minute", "day", "unknown"]

# Linear in the 429 text: `_CAMEL` inspects two characters per position; `_WINDOW`,
# `_RETRY_TEXT` and `_LIMIT_TEXT` start at a word and read runs of disjoint classes (spaces,
# digits, letters) once; `_DELAY` is anchored on one short header value.
# "PerMinutePerProject" -> "Per Minute Per Project", "Per100Seconds" -> "Per 100 Seconds"
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Za-z])(?=[0-9])")
_WINDOW = re.compile(
    r"\bper\s*(?:\d+\s*)?(seconds?|secs?|minutes?|mins?|hours?|days?)\b|\b(daily)\b",
    re.IGNORECASE,
)
#: a unit's first three letters -> the window it belongs to (hours are neither)
_UNIT: dict[str, str] = {"sec": "minute", "min": "minute", "day": "day", "dai": "day"}
_RETRY_TEXT = re.compile(
    r"retry\s+(?:in|after)\s+(\d+(?:\.\d+)?)\s*(ms|s|secs?|seconds?)\b", re.IGNORECASE
)
_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")
_LIMIT_TEXT = re.compile(r"\blimit(?:_value)?['\"]?\s*[:=]\s*['\"]?(\d{1,9})\b", re.IGNORECASE)
_ERROR_INFO = "google.rpc.ErrorInfo"
_RETRY_INFO = "google.rpc.RetryInfo"
_QUOTA_FAILURE = "google.rpc.QuotaFailure"
#: how many `{` of a text are tried as the start of embedded JSON
_MAX_JSON_STARTS = 3


def http_quota_signal(
    body: bytes, *, retry_after: str | None = None, now: datetime | None = None
) -> QuotaSignal:
    """The signal of an HTTP 429 (or 403 quota) answer: its body and Retry-After header."""
    raw = body.decode("utf-8", errors="replace")
    if "<html" in raw[:500].lower():
        raw = ""  # an HTML error page says nothing we can trust
    header = _retry_after_header(retry_after, now)
    error = _google_error(_loads(raw))
    if error is not None and "data" in error and not _details(error):
        # a JSON-RPC error sent with an HTTP error status
        signal = rpc_quota_signal(str(error.get("message") or ""), error.get("data"))
        if signal.retry_after is None and header is not None:
            signal = dataclasses.replace(signal, retry_after=header)
        return signal
    return _signal(error, [] if error is not None else [raw], header)


def rpc_quota_signal(message: str, data: object) -> QuotaSignal:
    """The signal of a JSON-RPC error: its message, and `data` (maybe Google's error JSON)."""
    error = _google_error(data)
    texts = [message]
    if error is None:
        texts.append(data if isinstance(data, str) else _dumps(data))
    return _signal(error, texts, None)


def text_quota_signal(text: str) -> QuotaSignal:
    """The signal of an `isError` tool result, whose text is all that survives."""
    return _signal(_embedded_error(text), [text], None)


# --- deciding ----------------------------------------------------------------------------
def _signal(
    error: Mapping[str, Any] | None, texts: list[str], retry_hint: float | None
) -> QuotaSignal:
    limits: list[str] = []
    values: list[object] = []
    retry: float | None = None
    if error is not None:
        texts = [str(error.get("message") or ""), *texts]
        for detail in _details(error):
            kind = str(detail.get("@type", ""))
            if kind.endswith(_ERROR_INFO):
                metadata = detail.get("metadata")
                if isinstance(metadata, Mapping):
                    limits.append(str(metadata.get("quota_limit") or ""))
                    values.append(metadata.get("quota_limit_value"))
            elif kind.endswith(_RETRY_INFO) and retry is None:
                retry = _retry_delay(detail.get("retryDelay"))
            elif kind.endswith(_QUOTA_FAILURE):
                texts.extend(_violation_texts(detail.get("violations")))
    window = _window(limits)
    if window == "unknown":
        window = _window(texts)
    if retry is None:
        retry = retry_hint if retry_hint is not None else _retry_in_text(texts)
    value = next((v for v in map(_positive_int, values) if v is not None), None)
    if value is None:
        value = _limit_in_text(texts)
    return QuotaSignal(limit=window, retry_after=retry, limit_value=value)


def _window(texts: Iterable[str]) -> Window:
    """ "minute" or "day" when the texts name exactly that kind of window, else "unknown"."""
    found: set[str] = set()
    for text in texts:
        spaced = _CAMEL.sub(" ", text.replace("_", " "))
        for match in _WINDOW.finditer(spaced):
            unit = (match.group(1) or match.group(2)).lower()
            found.add(_UNIT.get(unit[:3], "other"))
    if found == {"minute"}:
        return "minute"
    if found == {"day"}:
        return "day"
    return "unknown"


# --- reading the parts -------------------------------------------------------------------
def _loads(raw: str) -> object:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _dumps(data: object) -> str:
    if data is None:
        return ""
    try:
        return json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError):
        return ""


def _google_error(data: object) -> Mapping[str, Any] | None:
    """Google's `error` object in `data` (itself, wrapped in {"error": …}, in a list, or as a
    JSON string); None when there is none."""
    if isinstance(data, str):
        data = _loads(data) if data.lstrip().startswith(("{", "[")) else None
    if isinstance(data, list) and data:
        data = data[0]
    if not isinstance(data, Mapping):
        return None
    inner = data.get("error")
    if isinstance(inner, Mapping):
        return inner
    if isinstance(data.get("details"), list) or "status" in data:
        return data
    return None


def _embedded_error(text: str) -> Mapping[str, Any] | None:
    """Google's error JSON when a text embeds it ("429 …: {"error": {…}}")."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    for _ in range(_MAX_JSON_STARTS):
        if start < 0:
            return None
        try:
            data, _end = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        return _google_error(data)
    return None


def _details(error: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    details = error.get("details")
    if not isinstance(details, list):
        return []
    return [d for d in details if isinstance(d, Mapping)]


def _violation_texts(violations: object) -> list[str]:
    if not isinstance(violations, list):
        return []
    return [
        " ".join(str(v.get(k, "")) for k in ("subject", "description"))
        for v in violations
        if isinstance(v, Mapping)
    ]


def _retry_delay(value: object) -> float | None:
    """RetryInfo.retryDelay: a protobuf Duration as JSON ("37s") or as {seconds, nanos}."""
    if isinstance(value, str):
        match = _DELAY.match(value)
        return _seconds(float(match.group(1))) if match else None
    if isinstance(value, Mapping):
        try:
            seconds = float(value.get("seconds") or 0) + float(value.get("nanos") or 0) / 1e9
        except (TypeError, ValueError):
            return None
        return _seconds(seconds)
    return None


def _retry_after_header(value: str | None, now: datetime | None) -> float | None:
    """Retry-After: delta-seconds, or an HTTP date (measured from `now`)."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        return _seconds(float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return _seconds(max(0.0, (when - (now or datetime.now(UTC))).total_seconds()))


def _retry_in_text(texts: Iterable[str]) -> float | None:
    for text in texts:
        match = _RETRY_TEXT.search(text)
        if match:
            amount = float(match.group(1))
            return _seconds(amount / 1000 if match.group(2).lower() == "ms" else amount)
    return None


def _limit_in_text(texts: Iterable[str]) -> int | None:
    for text in texts:
        match = _LIMIT_TEXT.search(text)
        if match:
            return _positive_int(match.group(1))
    return None


def _seconds(value: float) -> float | None:
    return value if math.isfinite(value) and value >= 0 else None


def _positive_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
        return number if number > 0 else None
    return None
