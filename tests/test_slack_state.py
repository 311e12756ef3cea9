"""The Slack app's state in the store: per-user rate limit, profiles (locale and time zone)
and thread memory — each bounded and expiring."""

from __future__ import annotations

from pathlib import Path

from bot.render import render_rate_limited
from bot.slack.memory import (
    RateLimiter,
    ThreadMemory,
    ThreadTopic,
    UserProfile,
    UserProfiles,
)
from bot.store import TEXT, MemoryStore, SqliteStore


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_rate_limiter_is_a_sliding_window_per_user() -> None:
    """The third question in a minute waits until the first leaves the window."""
    clock = FakeClock()
    limiter = RateLimiter(MemoryStore(clock=clock), 2, clock=clock)
    assert await limiter.try_acquire("U1") is None
    clock.now += 10
    assert await limiter.try_acquire("U1") is None
    clock.now += 10
    assert 40.0 == await limiter.try_acquire("U1")
    assert await limiter.try_acquire("U2") is None  # other users are not affected
    clock.now += 40
    assert await limiter.try_acquire("U1") is None


async def test_rate_limiter_keeps_at_most_max_users_and_forgets_idle_ones() -> None:
    """A crowd of askers evicts the least recently active; idle users go first."""
    clock = FakeClock()
    store = MemoryStore(max_entries=3, clock=clock)
    limiter = RateLimiter(store, 1, clock=clock)
    for user in ("U1", "U2", "U3"):
        await limiter.try_acquire(user)
    assert await limiter.try_acquire("U3") is not None  # limited: still remembered
    await limiter.try_acquire("U4")  # the fourth user pushes out U1, the least recent
    assert (3, None) == (store.count("rate"), await limiter.try_acquire("U1"))
    assert await limiter.try_acquire("U3") is not None  # recently active users stay limited
    clock.now += 61
    await limiter.try_acquire("U5")
    assert 1 == store.count("rate")  # a minute later the idle users are forgotten


async def test_rate_limiter_limits_a_lone_user() -> None:
    """With a single user the window still holds (the user is never evicted as idle)."""
    clock = FakeClock()
    limiter = RateLimiter(MemoryStore(max_entries=1, clock=clock), 1, clock=clock)
    assert await limiter.try_acquire("U1") is None
    assert await limiter.try_acquire("U1") is not None


async def test_every_kind_of_state_stays_within_its_bound() -> None:
    """Each namespace stays within max_entries however many keys arrive."""
    clock = FakeClock()
    store = MemoryStore(max_entries=5, clock=clock)
    threads, profiles = ThreadMemory(store), UserProfiles(store)

    async def fetch(user: str) -> UserProfile | None:
        return UserProfile(locale="en-US", tz="Europe/Rome")

    for i in range(50):
        await threads.remember("C1", f"{i}.0", ThreadTopic("q"))
        await profiles.get(f"U{i}", fetch)
    assert [5, 5] == [store.count(n) for n in ("thread", "profile")]


async def test_rate_limiter_zero_means_unlimited() -> None:
    """RATE_LIMIT_PER_USER_PER_MINUTE=0 turns the limit off."""
    limiter = RateLimiter(MemoryStore(), 0, clock=FakeClock())
    assert all([await limiter.try_acquire("U1") is None for _ in range(100)])


def test_rate_limit_notice_names_the_limit_and_rounds_the_wait_up() -> None:
    """The user learns how many questions and how long to wait."""
    assert (
        "You've asked 10 questions in the last minute — try again in 13 s."
        == render_rate_limited(10, 12.2)["text"]
    )


async def test_profiles_ask_slack_once_per_user_and_ttl() -> None:
    """users.info is called once per user until the cached profile expires."""
    clock = FakeClock()
    profiles = UserProfiles(MemoryStore(clock=clock), 100)
    asked: list[str] = []

    async def fetch(user: str) -> UserProfile | None:
        asked.append(user)
        return UserProfile(locale="it-IT", tz="Europe/Rome")

    assert ["it-IT", "it-IT"] == [
        (await profiles.get("U1", fetch) or UserProfile()).locale,
        (await profiles.get("U1", fetch) or UserProfile()).locale,
    ]
    clock.now += 101
    assert "Europe/Rome" == (await profiles.get("U1", fetch) or UserProfile()).tz
    assert ["U1", "U1"] == asked


async def test_profiles_do_not_keep_failures_or_junk() -> None:
    """A failed or malformed lookup gives no language and is retried next time; a zone that
    is not a zone name is dropped."""
    profiles = UserProfiles(MemoryStore(clock=FakeClock()), 100)
    answers: list[UserProfile | None] = [
        None,
        UserProfile(locale="../../etc", tz="<script>"),
        UserProfile(locale="pt-BR", tz="not a zone!"),
    ]

    async def fetch(user: str) -> UserProfile | None:
        return answers.pop(0)

    assert [None, None, "pt-BR"] == [
        (await profiles.get("U1", fetch) or UserProfile()).locale for _ in range(3)
    ]
    assert (await profiles.get("U1", fetch) or UserProfile(tz="x")).tz is None


async def test_thread_memory_remembers_per_thread_until_it_expires() -> None:
    """A thread's question is kept for follow-ups, then forgotten."""
    clock = FakeClock()
    memory = ThreadMemory(MemoryStore(clock=clock), 60)
    await memory.remember("C1", "1.1", ThreadTopic("how do buckets work?"))
    assert ThreadTopic("how do buckets work?") == await memory.topic("C1", "1.1")
    assert await memory.topic("C2", "1.1") is None
    clock.now += 61
    assert await memory.topic("C1", "1.1") is None


async def test_thread_memory_keeps_the_first_asker_and_the_latest_question() -> None:
    """Later answers in a thread update what it is about, never who asked there first; the
    record expires with its TTL."""
    clock = FakeClock()
    threads = ThreadMemory(MemoryStore(clock=clock), ttl_seconds=100)
    await threads.remember("C1", "1.0", ThreadTopic("how do I create a bucket?", "UASKER"))
    await threads.remember("C1", "1.0", ThreadTopic("and in Go?", "UCOLLEAGUE"))
    assert ThreadTopic("and in Go?", "UASKER") == await threads.topic("C1", "1.0")
    clock.now += 101
    assert await threads.topic("C1", "1.0") is None


async def test_a_thread_remembered_by_an_older_version_reads_as_unknown(tmp_path: Path) -> None:
    """A plain-text thread record (before askers were kept) is not a thread with an asker:
    follow-ups there need a mention until the bot answers in it again."""
    store = await SqliteStore.open(tmp_path / "state.db")
    try:
        await store.set("thread:C1:1.0", "how do I create a bucket?", TEXT, 100)
        assert await ThreadMemory(store).topic("C1", "1.0") is None
    finally:
        await store.aclose()
