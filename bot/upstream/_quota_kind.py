"""Which quota a refusal was about ("minute", "day" or "unknown"), how long to wait, and the
limit's size, from each form it comes in: Google's error JSON (ErrorInfo `quota_limit` and
`quota_limit_value`, RetryInfo `retryDelay`, QuotaFailure violations, the message), an HTTP
`Retry-After`, a JSON-RPC error's message and data, or an `isError` result's text. Metadata wins
over text; no window, an hour, or both at once is "unknown" (a short pause, never a day's)."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from bot.errors import QuotaSignal

# all linear: each starts at a word and reads runs of disjoint classes once
# "PerMinutePerProject" -> "Per Minute Per Project", "Per100Seconds" -> "Per 100 Seconds"
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Za-z])(?=[0-9])")
_WINDOW = re.compile(
    r"\bper\s*(?:\d+\s*)?(seconds?|secs?|minutes?|mins?|hours?|days?)\b|\b(daily)\b",
    re.IGNORECASE,
)
_UNIT = {"sec": "minute", "min": "minute", "day": "day", "dai": "day"}  # hours are neither
_RETRY_TEXT = re.compile(
    r"retry\s+(?:in|after)\s+(\d+(?:\.\d+)?)\s*(ms|s|secs?|seconds?)\b", re.IGNORECASE
)
_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")
_LIMIT_TEXT = re.compile(r"\blimit(?:_value)?['\"]?\s*[:=]\s*['\"]?(\d{1,9})\b", re.IGNORECASE)


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
    if error is not None:
        return _signal(error, [message], None)
    try:
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError):
        text = ""
    return _signal(None, [message, "" if data is None else text], None)


def text_quota_signal(text: str) -> QuotaSignal:
    """The signal of an `isError` tool result, whose text may embed Google's error JSON."""
    error, start = None, text.find("{")
    for _ in range(3):  # the first few `{` are tried as the start of JSON
        if start < 0:
            break
        try:
            error = _google_error(json.JSONDecoder().raw_decode(text, start)[0])
            break
        except ValueError:
            start = text.find("{", start + 1)
    return _signal(error, [text], None)


def _signal(error: Mapping[str, Any] | None, texts: list[str], hint: float | None) -> QuotaSignal:
    limits: list[str] = []
    values: list[object] = []
    retry: float | None = None
    if error is not None:
        texts = [str(error.get("message") or ""), *texts]
        for detail in _details(error):
            kind = str(detail.get("@type", ""))
            metadata = detail.get("metadata")
            if kind.endswith("google.rpc.ErrorInfo") and isinstance(metadata, Mapping):
                limits.append(str(metadata.get("quota_limit") or ""))
                values.append(metadata.get("quota_limit_value"))
            elif kind.endswith("google.rpc.RetryInfo") and retry is None:
                retry = _retry_delay(detail.get("retryDelay"))
            elif kind.endswith("google.rpc.QuotaFailure"):
                violations = detail.get("violations")
                texts += [
                    f"{v.get('subject', '')} {v.get('description', '')}"
                    for v in (violations if isinstance(violations, list) else [])
                    if isinstance(v, Mapping)
                ]
    window = _window(limits)
    if window == "unknown":
        window = _window(texts)
    if retry is None:
        retry = hint if hint is not None else _retry_in_text(texts)
    value = next((v for v in map(_positive_int, values) if v is not None), None)
    if value is None:
        found = (_LIMIT_TEXT.search(t) for t in texts)
        value = next((_positive_int(m.group(1)) for m in found if m), None)
    return QuotaSignal(limit=window, retry_after=retry, limit_value=value)


def _window(texts: Iterable[str]) -> Any:
    """ "minute" or "day" when the texts name exactly that kind of window, else "unknown"."""
    found = set()
    for text in texts:
        for match in _WINDOW.finditer(_CAMEL.sub(" ", text.replace("_", " "))):
            found.add(_UNIT.get((match.group(1) or match.group(2)).lower()[:3], "other"))
    return found.pop() if found in ({"minute"}, {"day"}) else "unknown"


def _loads(raw: str) -> object:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _google_error(data: object) -> Mapping[str, Any] | None:
    """Google's `error` object in `data` (itself, wrapped in {"error": …}, in a list, or as a
    JSON string); None when there is none."""
    if isinstance(data, str):
        data = _loads(data) if data.lstrip().startswith(("{", "[")) else None
    if isinstance(data, list) and data:
        data = data[0]
    if not isinstance(data, Mapping):
        return None
    if isinstance(data.get("error"), Mapping):
        return data["error"]  # type: ignore[no-any-return]
    return data if isinstance(data.get("details"), list) or "status" in data else None


def _details(error: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    details = error.get("details")
    return [d for d in details if isinstance(d, Mapping)] if isinstance(details, list) else []


def _retry_delay(value: object) -> float | None:
    """RetryInfo.retryDelay: a protobuf Duration as JSON ("37s") or as {seconds, nanos}."""
    if isinstance(value, str):
        match = _DELAY.match(value)
        return _seconds(float(match.group(1))) if match else None
    if isinstance(value, Mapping):
        try:
            return _seconds(float(value.get("seconds") or 0) + float(value.get("nanos") or 0) / 1e9)
        except (TypeError, ValueError):
            return None
    return None


def _retry_after_header(value: str | None, now: datetime | None) -> float | None:
    """Retry-After: delta-seconds, or an HTTP date (measured from `now`)."""
    if value is None or not value.strip():
        return None
    try:
        return _seconds(float(value.strip()))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    return _seconds(max(0.0, (when - (now or datetime.now(UTC))).total_seconds()))


def _retry_in_text(texts: Iterable[str]) -> float | None:
    for match in filter(None, (_RETRY_TEXT.search(t) for t in texts)):
        amount = float(match.group(1))
        return _seconds(amount / 1000 if match.group(2).lower() == "ms" else amount)
    return None


def _seconds(value: float) -> float | None:
    return value if math.isfinite(value) and value >= 0 else None


def _positive_int(value: object) -> int | None:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
