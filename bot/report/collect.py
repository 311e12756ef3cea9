"""The store reads behind a report: every answer record, every vote and every per-day
counter the store holds (each read bounded). A store that does not answer raises
StoreError: a report is never made of nothing."""

from __future__ import annotations

from dataclasses import dataclass

from bot.feedback import ANSWER_PREFIX, EXPORT_LIMIT, VOTE_PREFIX, AnswerRecord, VoteRecord
from bot.report.tally import PREFIX, parse_key
from bot.store import JSON, ModelCodec, Store

_ANSWER = ModelCodec(AnswerRecord)
_VOTE = ModelCodec(VoteRecord)
#: per-day counters read at most (a day has a few dozen names; 30 days are kept)
COUNTER_LIMIT = 20_000


@dataclass(frozen=True)
class Collected:
    """What the store holds for a report, as it is (the aggregation filters by day)."""

    answers: tuple[AnswerRecord, ...] = ()
    votes: tuple[VoteRecord, ...] = ()
    #: (pacific day, counter name) -> count
    counters: tuple[tuple[str, str, int], ...] = ()


async def collect(store: Store, *, limit: int = EXPORT_LIMIT) -> Collected:
    """Read what a report needs from `store` (three scans, nothing written)."""
    answers = [record for _, record in await store.scan(ANSWER_PREFIX, _ANSWER, limit)]
    votes = [vote for _, vote in await store.scan(VOTE_PREFIX, _VOTE, limit)]
    counters: list[tuple[str, str, int]] = []
    for key, value in await store.scan(PREFIX, JSON, COUNTER_LIMIT):
        parsed = parse_key(key)
        if parsed is None or isinstance(value, bool) or not isinstance(value, int):
            continue  # another version's key, or not a counter
        counters.append((*parsed, value))
    return Collected(tuple(answers), tuple(votes), tuple(counters))
