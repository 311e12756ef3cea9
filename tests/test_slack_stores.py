"""The Slack app's small state: dedupe, per-user rate limit, locales, thread memory."""

from __future__ import annotations

import asyncio

from bot.slack.stores import (
    InMemoryDedupeStore,
    LocaleCache,
    RateLimiter,
    ThreadMemory,
    wait_message,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_dedupe_store_answers_each_key_once_within_its_ttl() -> None:
    """A retried delivery is seen as a repeat until the TTL has passed."""
    clock = FakeClock()
    store = InMemoryDedupeStore(60, clock=clock)
    assert [True, False, True] == [
        await store.first_time("event:E1"),
        await store.first_time("event:E1"),
        await store.first_time("event:E2"),
    ]
    clock.now += 61
    assert await store.first_time("event:E1")


async def test_dedupe_store_stays_bounded() -> None:
    """The store forgets the oldest keys rather than growing without bound."""
    store = InMemoryDedupeStore(600, max_entries=3, clock=FakeClock())
    for key in "abcd":
        await store.first_time(key)
    assert await store.first_time("a")  # evicted, so new again
    assert not await store.first_time("d")


def test_rate_limiter_is_a_sliding_window_per_user() -> None:
    """The third question in a minute waits until the first leaves the window."""
    clock = FakeClock()
    limiter = RateLimiter(2, clock=clock)
    assert limiter.try_acquire("U1") is None
    clock.now += 10
    assert limiter.try_acquire("U1") is None
    clock.now += 10
    assert 40.0 == limiter.try_acquire("U1")
    assert limiter.try_acquire("U2") is None  # other users are not affected
    clock.now += 40
    assert limiter.try_acquire("U1") is None


def test_rate_limiter_keeps_at_most_max_users_and_forgets_idle_ones() -> None:
    """A crowd of askers evicts the least recently active; idle users go first."""
    clock = FakeClock()
    limiter = RateLimiter(1, max_users=3, clock=clock)
    for user in ("U1", "U2", "U3"):
        limiter.try_acquire(user)
    assert limiter.try_acquire("U3") is not None  # limited: still remembered
    limiter.try_acquire("U4")  # the fourth user pushes out U1, the least recent
    assert (3, None) == (len(limiter), limiter.try_acquire("U1"))
    assert limiter.try_acquire("U3") is not None  # recently active users stay limited
    clock.now += 61
    limiter.try_acquire("U5")
    assert 1 == len(limiter)  # a minute later the idle users are forgotten


def test_rate_limiter_limits_a_lone_user() -> None:
    """With a single user the window still holds (the user is never evicted as idle)."""
    clock = FakeClock()
    limiter = RateLimiter(1, max_users=1, clock=clock)
    assert limiter.try_acquire("U1") is None
    assert limiter.try_acquire("U1") is not None


async def test_every_store_reports_its_size_within_its_bound() -> None:
    """Each store exposes len() and stays within max_entries however many keys arrive."""
    clock = FakeClock()
    dedupe = InMemoryDedupeStore(600, max_entries=5, clock=clock)
    threads = ThreadMemory(600, max_entries=5, clock=clock)
    locales = LocaleCache(600, max_entries=5, clock=clock)

    async def fetch(user: str) -> str | None:
        return "en-US"

    for i in range(50):
        await dedupe.first_time(f"k{i}")
        threads.remember("C1", f"{i}.0", "q")
        await locales.locale(f"U{i}", fetch)
    assert [5, 5, 5] == [len(dedupe), len(threads), len(locales)]


def test_rate_limiter_zero_means_unlimited() -> None:
    """RATE_LIMIT_PER_USER_PER_MINUTE=0 turns the limit off."""
    limiter = RateLimiter(0, clock=FakeClock())
    assert all(limiter.try_acquire("U1") is None for _ in range(100))


def test_wait_message_names_the_limit_and_rounds_the_wait_up() -> None:
    """The user learns how many questions and how long to wait."""
    assert "You've asked 10 questions in the last minute — try again in 13 s." == wait_message(
        10, 12.2
    )


async def test_locale_cache_asks_slack_once_per_user_and_ttl() -> None:
    """users.info is called once per user until the cached locale expires."""
    clock = FakeClock()
    cache = LocaleCache(100, clock=clock)
    asked: list[str] = []

    async def fetch(user: str) -> str | None:
        asked.append(user)
        return "it-IT"

    assert ["it-IT", "it-IT"] == [await cache.locale("U1", fetch), await cache.locale("U1", fetch)]
    clock.now += 101
    assert "it-IT" == await cache.locale("U1", fetch)
    assert ["U1", "U1"] == asked


async def test_locale_cache_shares_one_lookup_between_concurrent_questions() -> None:
    """A burst of questions from one user makes one users.info call."""
    cache = LocaleCache(100, clock=FakeClock())
    release = asyncio.Event()
    asked: list[str] = []

    async def fetch(user: str) -> str | None:
        asked.append(user)
        await release.wait()
        return "de-DE"

    lookups = [asyncio.ensure_future(cache.locale("U1", fetch)) for _ in range(5)]
    await asyncio.sleep(0)  # let every lookup start before the answer arrives
    release.set()
    assert ["de-DE"] * 5 == await asyncio.gather(*lookups)
    assert ["U1"] == asked


async def test_locale_cache_does_not_keep_failures_or_junk() -> None:
    """A failed or malformed lookup gives no language and is retried next time."""
    cache = LocaleCache(100, clock=FakeClock())
    answers: list[str | None] = [None, "../../etc", "pt-BR"]

    async def fetch(user: str) -> str | None:
        return answers.pop(0)

    assert [None, None, "pt-BR"] == [await cache.locale("U1", fetch) for _ in range(3)]


def test_thread_memory_remembers_per_thread_until_it_expires() -> None:
    """A thread's question is kept for follow-ups, then forgotten."""
    clock = FakeClock()
    memory = ThreadMemory(60, clock=clock)
    memory.remember("C1", "1.1", "how do buckets work?")
    assert "how do buckets work?" == memory.question("C1", "1.1")
    assert memory.question("C2", "1.1") is None
    clock.now += 61
    assert memory.question("C1", "1.1") is None
