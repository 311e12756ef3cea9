"""The answer_query governor on the memory store with an injected clock (no sleeps): the
minute window, the Pacific day, the per-person cap, the server's 429s (which win), two
replicas on one store, a store outage, and the metrics."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.errors import QuotaSignal
from bot.observability.metrics import Metrics
from bot.quota import SLOT_MARGIN_SECONDS, AnswerQuota, Pause, Permit, QuotaConfig, Refusal
from bot.store import JSON, Codec, MemoryStore, StoreError

T0 = datetime(2026, 12, 1, 17, 0, tzinfo=UTC)  # 09:00 PST
MIDNIGHT = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)  # the next 00:00 PST


class Clock:
    """One settable time for the governor (datetimes) and the store (epoch seconds)."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def epoch(self) -> float:
        return self.now.timestamp()

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class FakeSleep:
    """`sleep` that moves the clock instead of waiting, and records each wait."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.clock.advance(seconds)


def _governor(
    clock: Clock, store: MemoryStore | None = None, metrics: Metrics | None = None, **config: Any
) -> AnswerQuota:
    store = store if store is not None else MemoryStore(clock=clock.epoch)
    return AnswerQuota(
        store, QuotaConfig(**config), clock=clock, metrics=metrics, sleep=FakeSleep(clock)
    )


async def _permits(quota: AnswerQuota, count: int, user: str | None = None) -> None:
    for _ in range(count):
        assert isinstance(await quota.acquire(user), Permit)


async def _refusal(quota: AnswerQuota, user: str | None = None) -> Refusal:
    decision = await quota.acquire(user)
    assert isinstance(decision, Refusal), decision
    return decision


# --- the minute --------------------------------------------------------------------------
async def test_a_burst_past_the_minute_is_refused_until_the_oldest_call_leaves() -> None:
    """3 a minute: three calls 10 s apart, the fourth is refused until the first is 60 s old
    and a margin (Google counts from the call's arrival, a little later than the permit);
    the wait is offered only once the window opens within ANSWER_QUOTA_WAIT_SECONDS."""
    clock = Clock()
    quota = _governor(clock, per_minute=3, per_day=0, per_user_per_day=0)
    for _ in range(3):
        await _permits(quota, 1)
        clock.advance(10)
    refusal = await _refusal(quota)
    assert ("minute", T0 + timedelta(seconds=60 + SLOT_MARGIN_SECONDS), None) == (
        refusal.limit,
        refusal.until,
        refusal.wait,
    )
    clock.advance(21)  # T0 + 51 s
    assert pytest.approx(9.0 + SLOT_MARGIN_SECONDS) == (await _refusal(quota)).wait
    clock.advance(9.0)  # T0 + 60 s: Google's window has freed the slot, the ledger's not yet
    assert (await _refusal(quota)).limit == "minute"
    clock.advance(SLOT_MARGIN_SECONDS + 0.001)
    await _permits(quota, 1)


async def test_waiting_for_the_minute_sleeps_then_answers() -> None:
    """acquire_waiting: a window opening in 4 s is waited for (told first), then permitted."""
    clock = Clock()
    quota = _governor(clock, per_minute=2, per_day=0, per_user_per_day=0, wait_seconds=10)
    await _permits(quota, 2)
    clock.advance(56)
    told: list[float] = []

    async def on_wait(seconds: float) -> None:
        told.append(seconds)

    assert isinstance(await quota.acquire_waiting(None, on_wait=on_wait), Permit)
    assert [pytest.approx(4.0 + SLOT_MARGIN_SECONDS)] == told
    assert T0 + timedelta(seconds=60 + SLOT_MARGIN_SECONDS) <= clock.now


async def test_waiting_gives_up_when_the_window_opens_too_late() -> None:
    """A window 30 s away is not waited for: the Refusal comes back at once, no sleep."""
    clock = Clock()
    quota = _governor(clock, per_minute=1, per_day=0, per_user_per_day=0, wait_seconds=10)
    await _permits(quota, 1)
    clock.advance(30)
    decision = await quota.acquire_waiting(None)
    assert isinstance(decision, Refusal)
    assert (decision.limit, decision.wait) == ("minute", None)
    assert T0 + timedelta(seconds=30) == clock.now


# --- the day -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("start", "reset"),
    [
        (T0, MIDNIGHT),
        # 20:00 PDT on 8 March 2026 (clocks went forward that morning): 00:00 PDT is 07:00 UTC
        (datetime(2026, 3, 9, 3, 0, tzinfo=UTC), datetime(2026, 3, 9, 7, 0, tzinfo=UTC)),
        # 20:00 PST on 1 November 2026 (clocks went back that morning): 00:00 PST is 08:00 UTC
        (datetime(2026, 11, 2, 4, 0, tzinfo=UTC), datetime(2026, 11, 2, 8, 0, tzinfo=UTC)),
    ],
    ids=["winter", "after-spring-forward", "after-fall-back"],
)
async def test_a_spent_day_is_refused_until_midnight_pacific(
    start: datetime, reset: datetime
) -> None:
    """3 a day: the fourth call is refused until 00:00 America/Los_Angeles, then permitted."""
    clock = Clock(start)
    quota = _governor(clock, per_minute=0, per_day=3, per_user_per_day=0)
    await _permits(quota, 3)
    refusal = await _refusal(quota)
    assert ("day", reset, None) == (refusal.limit, refusal.until, refusal.wait)
    clock.now = reset - timedelta(seconds=1)
    assert "day" == (await _refusal(quota)).limit
    clock.now = reset
    await _permits(quota, 3)


async def test_a_server_day_429_pauses_until_midnight_pacific_across_the_fall_back() -> None:
    """A per-day 429 at 23:30 PDT on 31 Oct pauses until 00:00 PDT, and one the next evening
    (the 25-hour day) until 00:00 PST; the day reads as spent in between."""
    clock = Clock(datetime(2026, 11, 1, 6, 30, tzinfo=UTC))
    quota = _governor(clock, per_minute=10, per_day=50, per_user_per_day=0)
    pause = await quota.refused(QuotaSignal("day"), None)
    assert Pause("day", datetime(2026, 11, 1, 7, 0, tzinfo=UTC)) == pause
    assert 0 == (await quota.state(None)).left_today
    clock.now = datetime(2026, 11, 1, 7, 0, tzinfo=UTC)
    await _permits(quota, 1)
    clock.now = datetime(2026, 11, 2, 4, 0, tzinfo=UTC)
    pause = await quota.refused(QuotaSignal("day"), None)
    assert datetime(2026, 11, 2, 8, 0, tzinfo=UTC) == pause.until
    clock.now = datetime(2026, 11, 2, 7, 59, tzinfo=UTC)
    assert "day" == (await _refusal(quota)).limit


# --- the person --------------------------------------------------------------------------
async def test_one_person_past_their_cap_leaves_answers_for_the_rest() -> None:
    """2 a person a day: Ann's third is refused until midnight Pacific; Bob still gets his."""
    clock = Clock()
    quota = _governor(clock, per_minute=0, per_day=50, per_user_per_day=2)
    await _permits(quota, 2, "U0ANN")
    refusal = await _refusal(quota, "U0ANN")
    assert ("user", MIDNIGHT) == (refusal.limit, refusal.until)
    await _permits(quota, 2, "U0BOB")
    state = await quota.state("U0ANN")
    assert (4, 46, 2, 0) == (
        state.used_today,
        state.left_today,
        state.user_used_today,
        state.user_left_today,
    )
    clock.now = MIDNIGHT
    await _permits(quota, 1, "U0ANN")


async def test_a_refused_call_is_given_back_to_the_person_and_the_day() -> None:
    """A minute 429 after a Permit: the call did not count at Google, so not here either."""
    clock = Clock()
    quota = _governor(clock, per_minute=10, per_day=50, per_user_per_day=2)
    await _permits(quota, 2, "U0ANN")
    await quota.refused(QuotaSignal("minute", 5.0), "U0ANN")
    state = await quota.state("U0ANN")
    assert (1, 1) == (state.used_today, state.user_used_today)
    clock.advance(5)
    await _permits(quota, 1, "U0ANN")


async def test_a_day_429_spends_the_teams_day_but_not_the_persons_allowance() -> None:
    """The server refuses the person's call for the day: the team's day is spent, and the
    refused call is not counted against that person's own answers."""
    clock = Clock()
    quota = _governor(clock, per_minute=10, per_day=50, per_user_per_day=10)
    await _permits(quota, 2, "U0ANN")
    await quota.refused(QuotaSignal("day"), "U0ANN")
    state = await quota.state("U0ANN")
    assert (50, 1, 9) == (state.used_today, state.user_used_today, state.user_left_today)


async def test_a_call_that_failed_otherwise_stays_counted() -> None:
    """Google counts a call that went out and failed (timeout, 500): the Permit is not refunded."""
    clock = Clock()
    quota = _governor(clock, per_minute=10, per_day=50, per_user_per_day=10)
    await _permits(quota, 1, "U0ANN")
    state = await quota.state("U0ANN")
    assert (1, 49, 1, 1) == (
        state.used_today,
        state.left_today,
        state.used_this_minute,
        state.user_used_today,
    )


# --- the server has the last word --------------------------------------------------------
async def test_a_minute_429_before_the_ledger_expected_one_is_followed() -> None:
    """10 a minute, 2 sent, the server says 429 per minute (retry in 40 s): the ledger pauses
    for 40 s, not for the day, then permits again."""
    clock = Clock()
    quota = _governor(clock, per_minute=10, per_day=50, per_user_per_day=0)
    await _permits(quota, 2)
    pause = await quota.refused(QuotaSignal("minute", 40.0, 10), None)
    assert Pause("minute", T0 + timedelta(seconds=40), limit_value=10) == pause
    clock.advance(39)
    refusal = await _refusal(quota)
    assert ("minute", T0 + timedelta(seconds=40)) == (refusal.limit, refusal.until)
    assert pytest.approx(1.0) == refusal.wait
    clock.advance(1)
    await _permits(quota, 1)


async def test_a_minute_429_without_a_delay_waits_for_the_window() -> None:
    """No retryDelay: the pause ends when the ledger's oldest call of the minute leaves it."""
    clock = Clock()
    quota = _governor(clock, per_minute=10, per_day=0, per_user_per_day=0)
    await _permits(quota, 1)
    clock.advance(25)
    await _permits(quota, 1)
    assert T0 + timedelta(seconds=60) == (await quota.refused(QuotaSignal("minute"), None)).until


async def test_a_refused_call_gives_its_place_in_the_minute_window_back() -> None:
    """Google does not count a call it refused: after the pause the minute has its slot
    back (3 a minute, one refused: three more go out, not two)."""
    clock = Clock()
    quota = _governor(clock, per_minute=3, per_day=0, per_user_per_day=0)
    await _permits(quota, 2)
    refused = await quota.acquire(None)
    assert isinstance(refused, Permit)
    assert refused.stamp is not None
    pause = await quota.refused(QuotaSignal("unknown", retry_after=5.0), None, refused)
    clock.now = pause.until
    assert 2 == (await quota.state(None)).used_this_minute
    await _permits(quota, 1)
    assert "minute" == (await _refusal(quota)).limit


async def test_a_day_429_before_the_ledger_expected_one_spends_the_day() -> None:
    """5 of 50 counted, the server says the day is spent: 50 used, search until midnight."""
    clock = Clock()
    quota = _governor(clock, per_minute=10, per_day=50, per_user_per_day=0)
    await _permits(quota, 5)
    await quota.refused(QuotaSignal("day", None, 50), None)
    state = await quota.state(None)
    expected = (50, 0, Pause("day", MIDNIGHT, limit_value=50))
    assert expected == (state.used_today, state.left_today, state.pause)
    clock.advance(3600)
    assert ("day", MIDNIGHT) == ((r := await _refusal(quota)).limit, r.until)


async def test_an_ambiguous_429_pauses_for_a_moment_only() -> None:
    """A 429 that names no limit: a pause of ANSWER_QUOTA_UNKNOWN_PAUSE (60 s), not a day."""
    clock = Clock()
    quota = _governor(clock, per_minute=10, per_day=50, per_user_per_day=0)
    pause = await quota.refused(QuotaSignal("unknown"), None)
    assert Pause("unknown", T0 + timedelta(seconds=60)) == pause
    refusal = await _refusal(quota)
    assert ("unknown", None) == (refusal.limit, refusal.wait)
    clock.advance(60)
    await _permits(quota, 1)
    assert 49 == (await quota.state(None)).left_today


async def test_no_retry_delay_makes_a_short_limit_pause_for_a_day() -> None:
    """A minute or unknown 429 asking for a day's wait is capped at 15 minutes."""
    clock = Clock()
    quota = _governor(clock)
    pause = await quota.refused(QuotaSignal("unknown", 86_400.0), None)
    assert T0 + timedelta(minutes=15) == pause.until
    pause = await quota.refused(QuotaSignal("minute", 86_400.0), None)
    assert T0 + timedelta(minutes=15) == pause.until


async def test_a_shorter_pause_never_cuts_a_longer_one() -> None:
    """A day pause stays when a minute 429 arrives late from another replica."""
    clock = Clock()
    quota = _governor(clock)
    await quota.refused(QuotaSignal("day"), None)
    await quota.refused(QuotaSignal("minute", 10.0), None)
    clock.advance(11)
    assert ("day", MIDNIGHT) == ((r := await _refusal(quota)).limit, r.until)


# --- replicas, restarts and faults -------------------------------------------------------
async def test_two_replicas_on_one_store_share_the_counts_and_the_pause() -> None:
    """Two governors on one store act as one: the minute, the day and a pause are shared."""
    clock = Clock()
    store = MemoryStore(clock=clock.epoch)
    one = _governor(clock, store, per_minute=3, per_day=5, per_user_per_day=0)
    two = _governor(clock, store, per_minute=3, per_day=5, per_user_per_day=0)
    await _permits(one, 2)
    await _permits(two, 1)
    assert "minute" == (await _refusal(one)).limit
    assert "minute" == (await _refusal(two)).limit
    clock.advance(60 + SLOT_MARGIN_SECONDS)
    await _permits(two, 2)
    assert "day" == (await _refusal(one)).limit
    assert 5 == (await one.state(None)).used_today
    clock.now = MIDNIGHT
    await one.refused(QuotaSignal("unknown"), None)
    assert "unknown" == (await _refusal(two)).limit


async def test_a_new_governor_on_the_same_store_remembers_everything() -> None:
    """A restart (a new AnswerQuota on the same store) keeps the day's count (3 sent, one
    refused by the server) and the pause."""
    clock = Clock()
    store = MemoryStore(clock=clock.epoch)
    first = _governor(clock, store, per_minute=10, per_day=50, per_user_per_day=0)
    await _permits(first, 3)
    await first.refused(QuotaSignal("minute", 30.0), None)
    again = _governor(clock, store, per_minute=10, per_day=50, per_user_per_day=0)
    state = await again.state(None)
    assert (2, Pause("minute", T0 + timedelta(seconds=30))) == (state.used_today, state.pause)


async def test_every_quota_key_is_namespaced_and_expires() -> None:
    """Everything the ledger writes is under `quota:` with a TTL of at most two days."""
    clock = Clock()
    store = MemoryStore(clock=clock.epoch)
    quota = _governor(clock, store, per_minute=10, per_day=50, per_user_per_day=5)
    await _permits(quota, 1, "U0ANN")
    await quota.refused(QuotaSignal("unknown"), "U0ANN")
    assert len(store) == store.count("quota")
    clock.advance(2 * 86_400 + 1)
    assert [] == await store.scan("quota:", JSON, 100)
    assert [] == await store.window_events("quota:minute", 60, clock.epoch())


async def test_an_unreadable_pause_is_ignored() -> None:
    """A pause written by another version (or garbage) does not stop answers."""
    clock = Clock()
    store = MemoryStore(clock=clock.epoch)
    await store.set("quota:pause", {"kind": "forever", "until": "never"}, JSON, ttl=600)
    quota = _governor(clock, store)
    await _permits(quota, 1)
    await quota.refused(QuotaSignal("minute", 20.0), None)
    assert "minute" == (await _refusal(quota)).limit


class BrokenStore(MemoryStore):
    """A store whose backend is down: every call raises StoreError (`get` reads get_many)."""

    async def get_many(self, keys: Sequence[str], codec: Codec[Any]) -> list[Any]:
        raise StoreError("state store unreachable")

    async def incr(self, key: str, amount: int, ttl: float) -> int:
        raise StoreError("state store unreachable")

    async def hit(self, key: str, limit: int, window: float, now: float) -> float | None:
        raise StoreError("state store unreachable")

    async def window_events(self, key: str, window: float, now: float) -> list[float]:
        raise StoreError("state store unreachable")


async def test_a_store_outage_lets_answers_through_uncounted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Store down: Permits (uncounted) so the bot keeps answering, the server decides; a 429
    still returns its pause; one warning, not one per question; state() says it cannot tell."""
    clock = Clock()
    quota = _governor(clock, BrokenStore(clock=clock.epoch), metrics=Metrics())
    for _ in range(3):
        decision = await quota.acquire("U0ANN")
        assert isinstance(decision, Permit)
        assert not decision.counted
    assert Pause("day", MIDNIGHT) == await quota.refused(QuotaSignal("day"), None)
    assert Pause("minute", T0 + timedelta(seconds=7)) == await quota.refused(
        QuotaSignal("minute", 7.0), None
    )
    assert 1 == sum("quota ledger unavailable" in r.getMessage() for r in caplog.records)
    with pytest.raises(StoreError):
        await quota.state(None)


# --- metrics and config ------------------------------------------------------------------
async def test_metrics_show_answers_left_and_429s_by_limit() -> None:
    """Gauges for today and this minute, set before each scrape, follow the calls (not
    read again after each call: two store reads per answer for a gauge nobody saw); 429s
    are counted by limit."""
    clock = Clock()
    metrics = Metrics()
    quota = _governor(clock, metrics=metrics, per_minute=10, per_day=50, per_user_per_day=0)
    await _permits(quota, 3)
    assert None is metrics.registry.get_sample_value("gdocs_answers_left_today")
    await quota.publish()  # what /metrics does before it answers
    assert 47 == metrics.registry.get_sample_value("gdocs_answers_left_today")
    assert 7 == metrics.registry.get_sample_value("gdocs_answers_left_this_minute")
    await quota.refused(QuotaSignal("minute", 30.0), None)
    await quota.refused(QuotaSignal("unknown"), None)
    assert 0 == metrics.registry.get_sample_value("gdocs_answers_left_this_minute")
    assert 1 == metrics.counter_value("gdocs_quota_refusals_total", limit="minute")
    assert 1 == metrics.counter_value("gdocs_quota_refusals_total", limit="unknown")
    assert 0 == metrics.counter_value("gdocs_quota_refusals_total", limit="day")
    assert 'gdocs_quota_refusals_total{limit="minute"} 1' in metrics.render()


async def test_state_reports_the_minute_and_when_the_next_slot_frees() -> None:
    """Window full: 0 left this minute, the next slot when the oldest call leaves."""
    clock = Clock()
    quota = _governor(clock, per_minute=2, per_day=0, per_user_per_day=0)
    await _permits(quota, 1)
    clock.advance(15)
    await _permits(quota, 1)
    state = await quota.state("U0ANN")
    assert (2, 0, T0 + timedelta(seconds=60 + SLOT_MARGIN_SECONDS)) == (
        state.used_this_minute,
        state.left_this_minute,
        state.next_slot,
    )
    assert (None, None, None, MIDNIGHT) == (
        state.left_today,
        state.user_left_today,
        state.pause,
        state.next_reset,
    )


async def test_another_replicas_429_is_followed_within_the_pause_check_seconds() -> None:
    """With ANSWER_QUOTA_PAUSE_CHECK_SECONDS, "no pause" is trusted that long: B lets one
    more call out right after A's 429, none once the seconds have passed; A stops at once."""
    clock = Clock()
    store = MemoryStore(clock=clock.epoch)
    a = _governor(clock, store, pause_check_seconds=1.0, per_minute=0, per_day=0)
    b = _governor(clock, store, pause_check_seconds=1.0, per_minute=0, per_day=0)
    await _permits(b, 1)
    await _permits(a, 1)
    await a.refused(QuotaSignal("minute", 30.0), None)
    assert "minute" == (await _refusal(a)).limit  # its own 429: at once
    await _permits(b, 1)  # its look a moment ago said "no pause"
    clock.advance(1.1)
    assert "minute" == (await _refusal(b)).limit
