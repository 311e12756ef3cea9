"""answer_query's quota: the ledger and governor (`AnswerQuota`), and Pacific-time days."""

from __future__ import annotations

from bot.quota._ledger import AnswerQuota as AnswerQuota
from bot.quota._ledger import Tally as Tally
from bot.quota._model import PACIFIC as PACIFIC
from bot.quota._model import SLOT_MARGIN_SECONDS as SLOT_MARGIN_SECONDS
from bot.quota._model import Pause as Pause
from bot.quota._model import Permit as Permit
from bot.quota._model import QuotaConfig as QuotaConfig
from bot.quota._model import QuotaState as QuotaState
from bot.quota._model import Refusal as Refusal
from bot.quota._model import next_pacific_midnight as next_pacific_midnight
from bot.quota._model import pacific_day as pacific_day
