"""answer_query's quota: the ledger and governor (`AnswerQuota`), and Pacific-time days.

quota = AnswerQuota(store, QuotaConfig(per_minute=10, per_day=50), clock=utc_now)
decision = await quota.acquire(user)   # Permit (counted) or Refusal (which limit, until)
pause = await quota.refused(signal, user)   # after the server's 429
state = await quota.state(user)        # for /gdocs quota, gdocs-bot check, /metrics
"""

from __future__ import annotations

from bot.quota._keys import WINDOW_SECONDS
from bot.quota._ledger import UNKNOWN_SIGNAL, AnswerQuota, Tally
from bot.quota._pacific import PACIFIC, next_pacific_midnight, pacific_day
from bot.quota._types import Limit, Pause, PauseKind, Permit, QuotaConfig, QuotaState, Refusal

__all__ = [
    "PACIFIC",
    "UNKNOWN_SIGNAL",
    "WINDOW_SECONDS",
    "AnswerQuota",
    "Limit",
    "Pause",
    "PauseKind",
    "Permit",
    "QuotaConfig",
    "QuotaState",
    "Refusal",
    "Tally",
    "next_pacific_midnight",
    "pacific_day",
]
