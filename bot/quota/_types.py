"""The governor's values: its configuration, its decisions and the state it reports."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

Limit = Literal["minute", "day", "user", "unknown"]
PauseKind = Literal["minute", "day", "unknown"]
#: a stored pause's kind, read back
PAUSE_KINDS: dict[str, PauseKind] = {"minute": "minute", "day": "day", "unknown": "unknown"}


@dataclass(frozen=True)
class QuotaConfig:
    """The limits the bot keeps to; 0 turns per_minute, per_day or per_user_per_day off."""

    per_minute: int = 10
    per_day: int = 50
    per_user_per_day: int = 10
    #: wait for the minute window when it opens within this many seconds (0: never wait)
    wait_seconds: float = 10.0
    #: how long a 429 that does not say which limit pauses answer_query
    unknown_pause_seconds: float = 60.0
    #: how long "no pause" read from the store is trusted (0: read before every call)
    pause_check_seconds: float = 0.0

    def __post_init__(self) -> None:
        for name in ("per_minute", "per_day", "per_user_per_day"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be 0 or more")
        if self.wait_seconds < 0 or self.unknown_pause_seconds <= 0:
            raise ValueError("wait_seconds must be >= 0 and unknown_pause_seconds > 0")


@dataclass(frozen=True)
class Permit:
    """answer_query may go out now; the call is already counted (unless `counted` is False:
    the ledger was unreachable and the server decides alone)."""

    user: str | None
    day: str
    counted: bool = True
    #: the permit's time in the minute window (seconds since the epoch; None: not recorded)
    stamp: float | None = None


@dataclass(frozen=True)
class Refusal:
    """Not now: which limit, when answers come back, and (minute only) how long to wait when
    the window opens within `wait_seconds`. `limit_value` is the size of the limit that said
    no: the bot's own setting, or the number in the server's 429 (None when it gave none)."""

    limit: Limit
    until: datetime
    wait: float | None = None
    limit_value: int | None = None


@dataclass(frozen=True)
class Pause:
    """The server said no: answer_query waits until `until`. `limit_value` is the limit's
    size as the server gave it (ErrorInfo's quota_limit_value; None when it did not)."""

    kind: PauseKind
    until: datetime
    limit_value: int | None = None


@dataclass(frozen=True)
class QuotaState:
    """Where the team stands, for `/gdocs quota`, `gdocs-bot check`, App Home and /metrics.
    `*_left_*` are None when that limit is not enforced by the bot (or no user was given)."""

    per_minute: int
    per_day: int
    per_user_per_day: int
    used_today: int
    left_today: int | None
    used_this_minute: int
    left_this_minute: int | None
    #: when the next call may go out (a pause ends, a minute slot frees); None: now. While
    #: paused, left_this_minute is 0
    next_slot: datetime | None
    user_used_today: int | None
    user_left_today: int | None
    pause: Pause | None
    next_reset: datetime
