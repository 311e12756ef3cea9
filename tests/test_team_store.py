"""Team answers in the state store (bot.team.TeamAnswers) on a real SQLite file and a real
redis-server: found by the cache's normalised question where their visibility allows, never
as drafts; edits, removals and restarts; two replicas sharing them; a store that is down
refuses to save instead of keeping the answer in one process; bounds and clashes refused."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import redis

from bot import keys
from bot.errors import InvalidInput, Reason
from bot.render import error_sentence
from bot.serving.assembly import open_core
from bot.settings import Settings
from bot.store import (
    TEXT,
    MemoryStore,
    Op,
    ResilientStore,
    SqliteStore,
    Store,
    StoreError,
    StoreUnavailable,
    redis_store,
)
from bot.team import (
    DRAFT_DAYS,
    EVERYWHERE,
    KEPT_PAST_REVIEW_DAYS,
    MAX_QUESTION_CHARS,
    TeamAnswer,
    TeamAnswers,
    new_team_id,
    review_date,
)
from tests.fakes.redis_server import RedisServer

NOW = datetime(2026, 12, 3, 9, 30, tzinfo=UTC)
QUESTION = "How do we deploy to Cloud Run?"


def team_answer(
    question: str = QUESTION,
    *,
    also: Sequence[str] = (),
    answer: str = "We deploy with Terraform, not gcloud.",
    channel: str | None = None,
    status: str = "approved",
    answer_id: str | None = None,
    saved_at: datetime = NOW,
) -> TeamAnswer:
    return TeamAnswer.model_validate(
        {
            "id": answer_id or new_team_id(),
            "question": question,
            "also": tuple(also),
            "answer": answer,
            "author": "U_ANA",
            "saved_at": saved_at,
            "review_at": review_date(saved_at, 180),
            "visibility": "channel" if channel else "workspace",
            "channel": channel,
            "channel_name": "infra" if channel else None,
            "status": status,
        }
    )


def team_on(store: Store, clock: datetime = NOW) -> TeamAnswers:
    return TeamAnswers(store, 180, lambda: clock)


@pytest.fixture
async def sqlite(tmp_path: Path) -> AsyncIterator[Store]:
    store = await SqliteStore.open(tmp_path / "state.db", max_entries=5000)
    yield store
    await store.aclose()


async def test_saved_answer_is_found_by_its_question_and_by_an_also_phrasing(
    sqlite: Store,
) -> None:
    """Found for the question and a saved phrasing in another case, spacing, punctuation and
    filler (the cache's normal form); a different question finds nothing."""
    team = team_on(sqlite)
    saved = await team.save(team_answer(also=["Cloud Run deployment steps"]))
    assert saved == await team.find("how do we deploy to cloud run", "C1")
    assert saved == await team.find("  HOW DO WE DEPLOY TO CLOUD RUN?! ", None)
    assert saved == await team.find("Please, cloud run deployment step.", "C9")
    assert None is await team.find("How do we deploy to App Engine?", "C1")
    assert None is await team.find("???", "C1")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_team_answers_are_never_evicted_while_cache_entries_are(
    kind: str, tmp_path: Path
) -> None:
    """A tiny CACHE_MAX_ENTRIES cuts the cache's namespaces, never a saved team answer, its
    phrasings' index entries or its use counts: those are bounded by MAX_TEAM_ANSWERS."""
    url = "memory://" if kind == "memory" else f"sqlite:///{tmp_path / 'state.db'}"
    async with open_core(Settings(state_url=url, cache_max_entries=2), clock=lambda: NOW) as core:
        team, store = core.team, core.store
        saved = [await team.save(team_answer(f"q{n}", also=[f"also {n}"])) for n in range(4)]
        for answer in saved:
            await team.count_use(answer.id)
        cached = [keys.ANSWER.key(str(n)) for n in range(6)]
        for key in cached:
            await store.set(key, "generated", TEXT, 3600)

        assert 2 >= sum(v is not None for v in await store.get_many(cached, TEXT))
        assert saved == [await team.find(f"also {n}", None) for n in range(4)]
        assert saved == [await team.find(f"q{n}", None) for n in range(4)]
        assert {a.id: 1 for a in saved} == await team.uses([a.id for a in saved])


async def test_a_channel_answer_is_found_only_in_its_channel_a_workspace_one_anywhere(
    sqlite: Store,
) -> None:
    """Visibility: a channel's answer is not found in another channel nor outside Slack (None:
    the CLI); a workspace answer is found everywhere; the channel's own answer goes first."""
    team = team_on(sqlite)
    mine = await team.save(team_answer("Which region do we use?", channel="C1"))
    assert mine == await team.find("which region do we use", "C1")
    assert None is await team.find("which region do we use", "C2")
    assert None is await team.find("which region do we use", None)
    everywhere = await team.save(team_answer("Which region do we use?", answer="us-central1"))
    assert everywhere == await team.find("which region do we use", "C2")
    assert everywhere == await team.find("which region do we use", None)
    assert mine == await team.find("which region do we use", "C1")
    assert [everywhere] == await team.visible("C2")
    assert {mine.id, everywhere.id} == {a.id for a in await team.visible("C1")}


async def test_a_draft_is_never_found_until_approved(sqlite: Store) -> None:
    """A 👎 suggestion is kept as a draft: no index entry, not found, not visible; listed in
    drafts; approved (as edited), it is found and due for review from the approval."""
    later = NOW + timedelta(days=2)
    team = team_on(sqlite, later)
    draft = await team.save(team_answer(status="draft"))
    assert None is await team.find(QUESTION, "C1")
    assert [] == await team.visible("C1")
    assert [draft] == [a for a in await team.all() if a.status == "draft"]
    assert [] == [k for k, _ in await sqlite.scan(keys.TEAM_INDEX.prefix, TEXT, 10)]
    edited = draft.model_copy(update={"answer": "Terraform, always."})
    approved = await team.approve(draft.id, edited)
    assert approved is not None
    assert "approved" == approved.status
    assert review_date(later, 180) == approved.review_at
    assert approved == await team.find(QUESTION, "C1")
    assert "Terraform, always." == approved.answer
    assert [] == [a for a in await team.all() if a.status == "draft"]
    assert None is await team.approve("gone")


async def test_an_edit_replaces_the_answer_and_its_old_phrasing_stops_finding_it(
    sqlite: Store,
) -> None:
    team = team_on(sqlite)
    first = await team.save(team_answer(also=["cloud run rollout"]))
    edited = first.model_copy(update={"also": ("run deploys",), "answer": "Use the pipeline."})
    await team.save(edited)
    assert None is await team.find("cloud run rollout", "C1")
    assert edited == await team.find("run deploys", "C1")
    assert edited == await team.find(QUESTION, "C1")
    assert [edited] == await team.all()
    assert 2 == len(await sqlite.scan(keys.TEAM_INDEX.prefix, TEXT, 10))


async def test_remove_drops_the_answer_its_index_entries_and_its_count(sqlite: Store) -> None:
    team = team_on(sqlite)
    saved = await team.save(team_answer(also=["cloud run rollout"]))
    await team.count_use(saved.id)
    assert True is await team.remove(saved.id)
    assert None is await team.find(QUESTION, "C1")
    assert None is await team.get(saved.id)
    assert False is await team.remove(saved.id)
    assert {saved.id: 0} == await team.uses([saved.id])
    for family in (keys.TEAM, keys.TEAM_INDEX, keys.TEAM_USED):
        assert [] == await sqlite.scan(family.prefix, TEXT, 10), family.prefix


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_uses_count_each_time_an_answer_is_given_and_survive_an_edit(
    kind: str, sqlite: Store
) -> None:
    team = team_on(MemoryStore() if kind == "memory" else sqlite)
    one, two = await team.save(team_answer()), await team.save(team_answer("Other question"))
    await team.count_use(one.id)
    await team.count_use(one.id)
    await team.count_use("nobody")
    await team.save(one.model_copy(update={"answer": "Edited."}))
    await team.count_use(one.id)
    assert {one.id: 3, two.id: 0} == await team.uses([one.id, two.id])


async def test_team_answers_survive_a_restart_on_the_same_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    first = await SqliteStore.open(path, max_entries=5000)
    saved = await team_on(first).save(team_answer(also=["cloud run rollout"]))
    draft = await team_on(first).save(team_answer("a suggestion", status="draft"))
    await team_on(first).count_use(saved.id)
    await first.aclose()
    second = await SqliteStore.open(path, max_entries=5000)
    try:
        team = team_on(second)
        assert saved == await team.find("Cloud Run rollout!", "C3")
        assert [draft] == [a for a in await team.all() if a.status == "draft"]
        assert {saved.id: 1} == await team.uses([saved.id])
    finally:
        await second.aclose()


async def test_scanning_team_answers_never_picks_up_index_entries_or_counters(
    sqlite: Store, redis_server: RedisServer
) -> None:
    """`team:` is a prefix of neither `team_q:` nor `team_used:` in any backend."""
    on_redis = redis_store(redis_server.url, prefix="gdocs:")
    try:
        for store in (sqlite, MemoryStore(max_entries=100), on_redis):
            team = team_on(store, datetime.now(UTC))
            saved = await team.save(team_answer(also=["a", "b b"], saved_at=datetime.now(UTC)))
            await team.count_use(saved.id)
            assert [saved] == await team.all()
            scanned = [k for k, _ in await store.scan("team:", TEXT, 50)]
            assert [keys.TEAM.key(saved.id)] == scanned, store.kind
    finally:
        await on_redis.aclose()


async def test_two_replicas_on_one_redis_share_saves_and_removes(
    redis_server: RedisServer,
) -> None:
    a_store = ResilientStore(redis_store(redis_server.url, prefix="gdocs:"))
    b_store = ResilientStore(redis_store(redis_server.url, prefix="gdocs:"))
    try:
        a, b = team_on(a_store, datetime.now(UTC)), team_on(b_store, datetime.now(UTC))
        saved = await a.save(team_answer(also=["cloud run rollout"], channel="C1"))
        assert saved == await b.find("cloud run rollout", "C1")
        await b.count_use(saved.id)
        assert {saved.id: 1} == await a.uses([saved.id])
        edited = saved.model_copy(update={"also": ()})
        await b.save(edited)
        assert None is await a.find("cloud run rollout", "C1")
        assert True is await b.remove(saved.id)
        assert None is await a.find(QUESTION, "C1")
        assert [] == await a.all()
    finally:
        await a_store.aclose()
        await b_store.aclose()


async def test_every_team_key_in_redis_expires_with_its_answer(
    redis_server: RedisServer, inspect: redis.Redis
) -> None:
    """An approved answer, its index entries and its counter: until 365 days past its review
    date; a draft: DRAFT_DAYS."""
    now = datetime.now(UTC)
    store = redis_store(redis_server.url, prefix="gdocs:")
    try:
        team = team_on(store, now)
        saved = await team.save(team_answer(also=["rollout"], saved_at=now))
        await team.count_use(saved.id)
        await team.save(saved.model_copy(update={"answer": "Edited."}))  # the counter kept
        assert {saved.id: 1} == await team.uses([saved.id])
        await team.save(team_answer("a suggestion", status="draft", answer_id="d1"))
    finally:
        await store.aclose()
    kept = (saved.review_at + timedelta(days=KEPT_PAST_REVIEW_DAYS) - now).total_seconds()
    names = [k.decode() if isinstance(k, bytes) else k for k in inspect.keys("gdocs:team*")]
    assert 5 == len(names)  # answer, two index entries, counter, draft
    for name in names:
        expected = DRAFT_DAYS * 86_400 if name == "gdocs:team:d1" else kept
        assert abs(inspect.ttl(name) - expected) < 60, name


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_a_redis_that_is_down_refuses_the_save_and_keeps_nothing() -> None:
    """The resilient store would serve per-process state: a save raises StoreUnavailable and
    nothing is found afterwards, on this replica or any other."""
    store = ResilientStore(redis_store(f"redis://127.0.0.1:{_closed_port()}/0", prefix="g:"))
    try:
        team = team_on(store)
        with pytest.raises(StoreUnavailable):
            await team.save(team_answer())
        assert None is await team.find(QUESTION, None)
        with pytest.raises(StoreUnavailable):
            await team.remove("any")
        with pytest.raises(StoreUnavailable):
            await team.approve("any")
    finally:
        await store.aclose()


async def test_with_redis_down_management_reads_raise_and_only_find_answers_none() -> None:
    """Not the per-process stand-in's empty answer, which would read as "none saved" or
    "gone already": the list, one answer and the use counts raise StoreUnavailable; `find`
    finds nothing (the question goes to Google's docs) and counting a use is no error."""
    store = ResilientStore(redis_store(f"redis://127.0.0.1:{_closed_port()}/0", prefix="g:"))
    try:
        team = team_on(store)
        for read in (team.all(), team.visible("C1"), team.get("any"), team.uses(["any"])):
            with pytest.raises(StoreUnavailable):
                await read
        assert None is await team.find(QUESTION, "C1")
        await team.count_use("any")
    finally:
        await store.aclose()


class _Failing(MemoryStore):
    """A primary whose reads work and whose writes fail (a store gone read-only)."""

    async def batch(self, ops: Sequence[Op]) -> list[object]:
        raise StoreError("disk full")


async def test_a_write_that_fails_on_the_primary_is_store_unavailable() -> None:
    store = ResilientStore(_Failing(max_entries=100))
    team = team_on(store)
    with pytest.raises(StoreUnavailable, match="disk full"):
        await team.save(team_answer())
    assert None is await team.find(QUESTION, None)


class _Hanging(MemoryStore):
    """A primary that stops answering (a Redis behind a dropped network)."""

    async def batch(self, ops: Sequence[Op]) -> list[object]:
        await asyncio.sleep(60)
        return []


async def test_a_write_the_primary_does_not_answer_in_time_is_store_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Said within WRITE_TIMEOUT_SECONDS (a modal's answer is due within 3 s), not hung."""
    monkeypatch.setattr("bot.team.WRITE_TIMEOUT_SECONDS", 0.2)
    team = team_on(ResilientStore(_Hanging(max_entries=100)))
    async with asyncio.timeout(5):
        with pytest.raises(StoreUnavailable, match="did not answer in time"):
            await team.save(team_answer())


class _HangingReads(MemoryStore):
    """A primary whose reads stop answering."""

    async def scan(self, *args: object, **kwargs: object) -> list[tuple[str, TeamAnswer]]:
        await asyncio.sleep(60)
        return []


async def test_a_read_the_primary_does_not_answer_in_time_is_store_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The list is bounded as a save is (the asker hears within seconds), not hung."""
    monkeypatch.setattr("bot.team.WRITE_TIMEOUT_SECONDS", 0.2)
    team = team_on(ResilientStore(_HangingReads(max_entries=100)))
    async with asyncio.timeout(5):
        with pytest.raises(StoreUnavailable, match="did not answer in time"):
            await team.visible("C1")


def _reason(exc: pytest.ExceptionInfo[InvalidInput]) -> Reason | None:
    return exc.value.facts.reason if exc.value.facts else None


async def test_bounds_are_refused_with_one_sentence_each(sqlite: Store) -> None:
    team = team_on(sqlite)
    too_long = team_answer().model_copy(update={"question": "q" * (MAX_QUESTION_CHARS + 1)})
    with pytest.raises(InvalidInput) as refused:
        await team.save(too_long)
    assert Reason.TEAM_TOO_LONG == _reason(refused)
    said = error_sentence(refused.value)
    assert "The question is too long (501 characters): keep it to 500 characters at most." == said
    too_many = team_answer().model_copy(update={"also": tuple("abcdef")})
    with pytest.raises(InvalidInput) as refused:
        await team.save(too_many)
    assert "6 phrasings" in error_sentence(refused.value)
    for empty in (team_answer("?!"), team_answer(answer="  ")):
        with pytest.raises(InvalidInput) as refused:
            await team.save(empty)
        assert "A team answer needs a question and an answer." == error_sentence(refused.value)
    assert [] == await team.all()


async def test_saving_past_the_maximum_is_refused(
    sqlite: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("bot.team.MAX_TEAM_ANSWERS", 2)
    team = team_on(sqlite)
    first = await team.save(team_answer("one"))
    await team.save(team_answer("two", status="draft"))
    with pytest.raises(InvalidInput) as refused:
        await team.save(team_answer("three"))
    assert "The team already keeps 2 answers: remove one to save another." == error_sentence(
        refused.value
    )
    await team.save(first.model_copy(update={"answer": "an edit is not one more"}))


async def test_a_phrasing_another_answer_has_in_the_same_place_is_refused(
    sqlite: Store,
) -> None:
    """It names the question it clashes with; the same phrasing in another channel, or a
    channel's own answer over a workspace one, is not a clash; nor is a draft."""
    team = team_on(sqlite)
    await team.save(team_answer(also=["cloud run rollout"]))
    with pytest.raises(InvalidInput) as refused:
        await team.save(team_answer("Cloud Run rollout?"))
    assert Reason.TEAM_CLASH == _reason(refused)
    assert f"{QUESTION!r}" in error_sentence(refused.value)
    await team.save(team_answer("Cloud Run rollout?", channel="C1"))
    await team.save(team_answer("cloud run rollout", channel="C2"))
    await team.save(team_answer("cloud run rollout", status="draft"))
    assert 4 == len(await team.all())


async def test_a_stale_index_entry_finds_nothing_and_does_not_block_a_save(
    sqlite: Store,
) -> None:
    """An entry pointing at an answer that is gone (or no longer answers it) is ignored."""
    team = team_on(sqlite)
    saved = await team.save(team_answer())
    entry = next(iter(await sqlite.scan(keys.TEAM_INDEX.prefix, TEXT, 1)))[0]
    assert entry.startswith(keys.TEAM_INDEX.key(EVERYWHERE, ""))
    await sqlite.batch([Op.delete(keys.TEAM.key(saved.id))])
    assert None is await team.find(QUESTION, "C1")
    await team.save(team_answer())
