"""Google's answer_query quota, enforced by a fake: N per rolling minute and M per Pacific day.

`QuotaEnforcer` is pure bookkeeping with an injected clock (aware datetimes): it admits or
refuses a call and writes the refusal the way Google does, in one of three forms, which
`FakeDeveloperKnowledge` (tests/fakes/mcp_servers.py) sends when `server.quota` is set:

- "http": HTTP 429 with Google's error JSON and its `google.rpc` details (ErrorInfo with
  `quota_limit` …PerMinutePerProject / …PerDayPerProject and `quota_limit_value`, Help, and for
  the minute a RetryInfo `retryDelay`);
- "jsonrpc": a JSON-RPC error whose `data` is that same error JSON;
- "result": a tool result with `isError: true` whose text is Google's message only.

Refused calls do not count against the quota (Google's do not) and each is recorded with
the moment the quota would next admit a call, so a test can say "at most one refused call
per window". The enforcer is thread-safe (the fake serves from its own thread) and works
with the real clock too (the benchmark runs it in-process).
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

Form = Literal["http", "jsonrpc", "result"]
Limit = Literal["minute", "day"]

_PACIFIC = ZoneInfo("America/Los_Angeles")
_SERVICE = "developerknowledge.googleapis.com"
_QUOTA_LIMIT: dict[Limit, str] = {
    "minute": "AnswerQueryRequestsPerMinutePerProject",
    "day": "AnswerQueryRequestsPerDayPerProject",
}
_LIMIT_WORDS: dict[Limit, str] = {"minute": "per minute", "day": "per day"}


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class RefusedCall:
    limit: Limit
    at: datetime
    #: when this quota admits a call again (the oldest call leaves the minute / Pacific midnight)
    until: datetime
    #: "client" for calls that came over MCP; tests name other users of the project's quota
    who: str = "client"


@dataclass
class QuotaEnforcer:
    """answer_query's quota: `per_minute` calls in any 60 s, `per_day` per Pacific day.

    None (or 0) leaves that limit out. `form` is how a refusal is sent.
    """

    per_minute: int | None = None
    per_day: int | None = None
    form: Form = "http"
    clock: Callable[[], datetime] = _utc_now
    window: float = 60.0
    #: calls admitted, and those refused
    admitted: list[datetime] = field(default_factory=list)
    refused: list[RefusedCall] = field(default_factory=list)
    _recent: deque[datetime] = field(default_factory=deque)
    _day: tuple[str, int] = ("", 0)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def admit(self, who: str = "client") -> RefusedCall | None:
        """Count one call now, or refuse it (and record that) when a limit is reached. `who`
        names a caller other than the MCP client (another app on the same project)."""
        with self._lock:
            now = self.clock()
            refusal = self._over_day(now) or self._over_minute(now)
            if refusal is not None:
                refusal = dataclasses.replace(refusal, who=who)
                self.refused.append(refusal)
                return refusal
            self._recent.append(now)
            day = _pacific_day(now)
            self._day = (day, (self._day[1] if self._day[0] == day else 0) + 1)
            self.admitted.append(now)
            return None

    def _over_day(self, now: datetime) -> RefusedCall | None:
        if not self.per_day:
            return None
        day, used = self._day
        if day != _pacific_day(now) or used < self.per_day:
            return None
        return RefusedCall("day", now, _next_pacific_midnight(now))

    def _over_minute(self, now: datetime) -> RefusedCall | None:
        if not self.per_minute:
            return None
        while self._recent and self._recent[0] <= now - timedelta(seconds=self.window):
            self._recent.popleft()
        if len(self._recent) < self.per_minute:
            return None
        return RefusedCall("minute", now, self._recent[0] + timedelta(seconds=self.window))

    # --- what tests ask ------------------------------------------------------------------
    def refused_for(self, limit: Limit, who: str = "client") -> list[RefusedCall]:
        return [r for r in self.refused if r.limit == limit and r.who == who]

    def most_refused_in_one_window(self, limit: Limit, who: str = "client") -> int:
        """The most refusals of `limit` to `who` made while one refusal's window was shut."""
        calls = self.refused_for(limit, who)
        return max((sum(1 for o in calls if r.at <= o.at < r.until) for r in calls), default=0)

    # --- what a refusal looks like -------------------------------------------------------
    def limit_value(self, limit: Limit) -> int:
        return (self.per_minute if limit == "minute" else self.per_day) or 0

    def message(self, refusal: RefusedCall) -> str:
        return (
            "Quota exceeded for quota metric 'Answer query requests' and limit 'Answer query "
            f"requests {_LIMIT_WORDS[refusal.limit]} per project' of service '{_SERVICE}' "
            "for consumer 'project_number:123456789'."
        )

    def google_error(self, refusal: RefusedCall) -> dict[str, Any]:
        """Google's error JSON for this refusal, `google.rpc` details and all."""
        details: list[dict[str, Any]] = [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "RATE_LIMIT_EXCEEDED",
                "domain": "googleapis.com",
                "metadata": {
                    "quota_limit": _QUOTA_LIMIT[refusal.limit],
                    "quota_limit_value": str(self.limit_value(refusal.limit)),
                    "quota_metric": f"{_SERVICE}/answer_query_requests",
                    "quota_location": "global",
                    "service": _SERVICE,
                    "consumer": "projects/123456789",
                },
            },
            {
                "@type": "type.googleapis.com/google.rpc.Help",
                "links": [
                    {
                        "description": "Request a higher quota limit.",
                        "url": "https://cloud.google.com/docs/quotas/help/request_increase",
                    }
                ],
            },
        ]
        if refusal.limit == "minute":
            delay = max(1, math.ceil((refusal.until - refusal.at).total_seconds()))
            details.append(
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{delay}s"}
            )
        return {
            "error": {
                "code": 429,
                "status": "RESOURCE_EXHAUSTED",
                "message": self.message(refusal),
                "details": details,
            }
        }

    def http_body(self, refusal: RefusedCall) -> bytes:
        return json.dumps(self.google_error(refusal)).encode()

    def rpc_error(self, refusal: RefusedCall) -> dict[str, Any]:
        return {
            "code": -32000,
            "message": f"429 RESOURCE_EXHAUSTED: {self.message(refusal)}",
            "data": self.google_error(refusal),
        }


def _pacific_day(now: datetime) -> str:
    return now.astimezone(_PACIFIC).date().isoformat()


def _next_pacific_midnight(now: datetime) -> datetime:
    tomorrow = now.astimezone(_PACIFIC).date() + timedelta(days=1)
    return datetime(tomorrow.year, tomorrow.month, tomorrow.day, tzinfo=_PACIFIC).astimezone(UTC)
