"""answer_query's quota: the ledger and governor (`AnswerQuota`), and Pacific-time days.

decision = await quota.acquire(user)       # Permit (counted) or Refusal (which limit)
pause = await quota.refused(signal, user)  # after the server's 429
state = await quota.state(user)            # for /gdocs quota, gdocs-bot check, /metrics
"""

from __future__ import annotations

from bot.quota._ledger import UNKNOWN_SIGNAL, AnswerQuota, Tally
from bot.quota._model import (
    PACIFIC,
    SLOT_MARGIN_SECONDS,
    Limit,
    Pause,
    Permit,
    QuotaConfig,
    QuotaState,
    Refusal,
    next_pacific_midnight,
    pacific_day,
)

__all__ = [
    "PACIFIC",
    "SLOT_MARGIN_SECONDS",
    "UNKNOWN_SIGNAL",
    "AnswerQuota",
    "Limit",
    "Pause",
    "Permit",
    "QuotaConfig",
    "QuotaState",
    "Refusal",
    "Tally",
    "next_pacific_midnight",
    "pacific_day",
]
