"""The SQLite store on real files: WAL readers, restarts, several stores on one file, writes
kept through a kill -9, all-or-none batches, and the files it must refuse at start-up (one
line naming STATE_URL)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bot.store import JSON, TEXT, Op, ResilientStore, SqliteStore, StoreConfigError, open_store
from tests.store_backends import FakeClock

pytestmark = pytest.mark.timeout(60)


async def _open(
    path: Path, clock: FakeClock | None = None, *, busy_timeout: float = 2, sweep_every: float = 60
) -> SqliteStore:
    return await SqliteStore.open(
        path, clock=clock or FakeClock(), busy_timeout=busy_timeout, sweep_every=sweep_every
    )


async def test_a_second_store_reads_the_file_while_the_first_keeps_writing(
    tmp_path: Path,
) -> None:
    """Another connection (as a CLI command would open) reads every committed value while the
    bot writes, and holding a read open does not stall the bot's writes (WAL)."""
    bot, cli = await _open(tmp_path / "s.db"), await _open(tmp_path / "s.db")
    try:
        await bot.set("answer:0", 0, JSON, ttl=60)

        async def keep_writing() -> None:
            for i in range(1, 100):
                await bot.set(f"answer:{i}", i, JSON, ttl=60)

        async def keep_reading() -> list[int | None]:
            return [await cli.get("answer:0", JSON) for _ in range(100)]

        _, seen = await asyncio.gather(keep_writing(), keep_reading())
        assert [0] * 100 == seen
        assert 99 == await cli.get("answer:99", JSON)

        reader = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM entries").fetchone()[0] > 0
        async with asyncio.timeout(1):  # a rollback journal would wait for the reader
            await bot.set("answer:during-read", 1, JSON, ttl=60)
        reader.execute("COMMIT")
        assert "wal" == reader.execute("PRAGMA journal_mode").fetchone()[0]
        reader.close()
    finally:
        await bot.aclose()
        await cli.aclose()


async def test_a_reopened_store_still_has_its_values_counters_and_windows(
    tmp_path: Path,
) -> None:
    """A restart keeps the state: values, counters with their expiry, limiter events."""
    clock = FakeClock()
    store = await _open(tmp_path / "s.db", clock)
    await store.set("answer:q", {"text": "kept"}, JSON, ttl=3600)
    await store.incr("quota:today", 7, ttl=100)
    await store.hit("rate:U1", limit=3, window=60, now=clock.now)
    await store.aclose()

    clock.advance(50)
    async with contextlib.aclosing(await _open(tmp_path / "s.db", clock)) as again:
        assert {"text": "kept"} == await again.get("answer:q", JSON)
        assert 8 == await again.incr("quota:today", 1, ttl=100)
        assert [clock.now - 50] == await again.window_events("rate:U1", 60, now=clock.now)
        clock.advance(51)
        assert await again.get("quota:today", JSON) is None


async def test_two_stores_on_one_file_give_each_claim_to_exactly_one(tmp_path: Path) -> None:
    """Two stores (two threads, two connections) racing for the same claims: one winner each."""
    first, second = await _open(tmp_path / "s.db"), await _open(tmp_path / "s.db")
    try:
        keys = [f"dedupe:Ev{i}" for i in range(30)]
        claims = []
        for key in keys:
            claims += [first.add(key, "first", TEXT, ttl=60), second.add(key, "second", TEXT, 60)]
        results = await asyncio.gather(*claims)
        pairs = list(zip(results[::2], results[1::2], strict=True))
        assert all(a != b for a, b in pairs)
        for key, (first_won, _) in zip(keys, pairs, strict=True):
            assert ("first" if first_won else "second") == await second.get(key, TEXT)
    finally:
        await first.aclose()
        await second.aclose()


def _keys(path: Path, table: str = "entries") -> list[str]:
    with contextlib.closing(sqlite3.connect(path)) as raw:
        query = f"SELECT key FROM {table} ORDER BY key"  # noqa: S608 (the test's own names)
        return [key for (key,) in raw.execute(query)]


async def test_expired_rows_are_swept_from_the_file(tmp_path: Path) -> None:
    """Expired rows do not stay in the file: a write after the sweep interval deletes them."""
    clock = FakeClock()
    async with contextlib.aclosing(await _open(tmp_path / "s.db", clock, sweep_every=60)) as store:
        for i in range(20):
            await store.set(f"answer:{i}", i, JSON, ttl=10)
            await store.hit(f"quota:{i}", 5, 10, clock())
        clock.advance(61)
        await store.set("answer:fresh", 1, JSON, ttl=10)  # this write sweeps
        assert ["answer:fresh"] == _keys(tmp_path / "s.db")
        assert [] == _keys(tmp_path / "s.db", "windows")


async def test_a_long_backlog_of_expired_rows_is_swept(tmp_path: Path) -> None:
    """Many expired rows: the writes after the sweep interval leave none of them."""
    clock = FakeClock()
    async with contextlib.aclosing(await _open(tmp_path / "s.db", clock, sweep_every=60)) as store:
        await store.batch([Op.set(f"answer:{i:04}", i, JSON, ttl=10) for i in range(1200)])
        clock.advance(61)
        for n in range(3):
            await store.set(f"answer:fresh{n}", n, JSON, ttl=100)
        assert ["answer:fresh0", "answer:fresh1", "answer:fresh2"] == _keys(tmp_path / "s.db")


async def test_a_namespace_never_holds_more_than_max_entries(tmp_path: Path) -> None:
    """Writing far past the bound: the file never holds more rows than max_entries in the
    namespace, and the most recently written ones are those kept."""
    async with contextlib.aclosing(
        await SqliteStore.open(tmp_path / "s.db", max_entries=200, clock=FakeClock())
    ) as store:
        with contextlib.closing(sqlite3.connect(tmp_path / "s.db")) as raw:
            for i in range(1000):
                await store.set(f"answer:{i:04}", i, JSON, ttl=60)
                (rows,) = raw.execute("SELECT count(*) FROM entries").fetchone()
                assert rows <= 200
        kept = _keys(tmp_path / "s.db")
        assert len(kept) >= 198
        assert kept[-1] == "answer:0999"
        assert all(key >= "answer:0800" for key in kept)


async def test_rows_another_process_adds_are_bounded_within_a_second(tmp_path: Path) -> None:
    """Another process (here a store with a larger bound) fills the namespace: this store's
    first write over a second later brings it back within its own bound."""
    clock = FakeClock()
    ours = await SqliteStore.open(tmp_path / "s.db", max_entries=100, clock=clock)
    theirs = await SqliteStore.open(tmp_path / "s.db", max_entries=10_000, clock=clock)
    try:
        await ours.set("answer:ours", 0, JSON, ttl=600)
        await theirs.batch([Op.set(f"answer:{i:03}", i, JSON, ttl=600) for i in range(300)])
        clock.advance(1.5)
        await ours.set("answer:later", 1, JSON, ttl=600)
        assert len(_keys(tmp_path / "s.db")) <= 100
        assert 1 == await ours.get("answer:later", JSON)
    finally:
        await ours.aclose()
        await theirs.aclose()


async def test_the_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    """The state holds users' questions: the new file is mode 0600."""
    store = await open_store("sqlite:///state.db", prefix="gdocs:", max_entries=10)
    await store.aclose()
    assert 0o600 == stat.S_IMODE((tmp_path / "state.db").stat().st_mode)


# --- files the store refuses at start-up --------------------------------------------------
async def test_a_corrupt_file_is_refused_with_a_line_naming_state_url(tmp_path: Path) -> None:
    """Garbage where the database should be: StoreConfigError naming STATE_URL, the file and
    the fix."""
    (tmp_path / "state.db").write_bytes(b"this is not an SQLite file\x00\xff" * 200)
    with pytest.raises(StoreConfigError) as caught:
        await open_store("sqlite:///state.db", prefix="gdocs:", max_entries=10)
    message = str(caught.value)
    assert message.startswith("STATE_URL")
    assert str(tmp_path / "state.db") in message
    assert "not a usable SQLite database" in message
    assert "\n" not in message


async def test_a_path_that_cannot_be_created_is_refused(tmp_path: Path) -> None:
    """A directory that cannot exist (its parent is a file): StoreConfigError, not a crash."""
    (tmp_path / "afile").write_text("x")
    with pytest.raises(StoreConfigError) as caught:
        await open_store("sqlite:///afile/state.db", prefix="gdocs:", max_entries=10)
    assert str(caught.value).startswith("STATE_URL: cannot write")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in read-only directories")
async def test_a_read_only_directory_is_refused(tmp_path: Path) -> None:
    """No write permission where the file would be: StoreConfigError saying what to fix."""
    locked = tmp_path / "ro"
    locked.mkdir(mode=0o500)
    try:
        with pytest.raises(StoreConfigError) as caught:
            await open_store(f"sqlite:///{locked}/state.db", prefix="gdocs:", max_entries=10)
        assert "writable" in str(caught.value)
    finally:
        locked.chmod(0o700)


async def test_a_file_locked_by_another_process_is_refused(tmp_path: Path) -> None:
    """A file another program keeps locked: StoreConfigError once the busy timeout passes."""
    holder = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
    holder.execute("CREATE TABLE other (x)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreConfigError) as caught:
            await _open(tmp_path / "state.db", busy_timeout=0.1)
        assert "locked" in str(caught.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


async def test_a_lock_held_by_another_process_stalls_a_write_briefly_and_loses_nothing(
    tmp_path: Path,
) -> None:
    """The calls run on the event loop: a write waiting for another process's lock gives up
    within a quarter of a second, and the bot keeps the value in per-process state."""
    store = ResilientStore(await _open(tmp_path / "state.db"), timeout=5)
    holder = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = asyncio.get_running_loop().time()
        await store.set("answer:q", "kept", TEXT, 60)
        assert asyncio.get_running_loop().time() - started < 1.0
        assert not store.up
        assert await store.get("answer:q", TEXT) == "kept"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        await store.aclose()


async def test_a_file_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    """A schema this version does not know: refused rather than misread."""
    store = await _open(tmp_path / "state.db")
    await store.aclose()
    with sqlite3.connect(tmp_path / "state.db") as raw:
        raw.execute("UPDATE meta SET value = '99' WHERE name = 'schema'")
    with pytest.raises(StoreConfigError) as caught:
        await _open(tmp_path / "state.db")
    assert "newer gdocs-bot" in str(caught.value)


async def test_a_closed_store_raises_store_error(tmp_path: Path) -> None:
    """Calls after aclose fail as StoreError (which ResilientStore absorbs), not RuntimeError."""
    from bot.store import StoreError

    store = await _open(tmp_path / "state.db")
    await store.aclose()
    with pytest.raises(StoreError, match="closed"):
        await store.get("answer:x", JSON)


async def test_a_failing_batch_leaves_nothing_and_the_next_write_works(tmp_path: Path) -> None:
    """An operation of a batch fails (a value its codec cannot encode): none of the batch
    stays, and the store goes on."""
    async with contextlib.aclosing(await _open(tmp_path / "s.db")) as store:
        with pytest.raises((TypeError, ValueError)):  # the codec cannot encode it
            await store.batch(
                [Op.set("answer:a", 1, JSON, ttl=60), Op.set("answer:b", object(), JSON, ttl=60)]
            )
        await store.set("answer:after", 3, JSON, ttl=60)
        assert [None, None, 3] == await store.get_many(
            ["answer:a", "answer:b", "answer:after"], JSON
        )


_WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from bot.store import JSON, SqliteStore

    async def main():
        store = await SqliteStore.open(sys.argv[1])
        await asyncio.gather(*(store.set(f"answer:{i}", i, JSON, ttl=3600) for i in range(300)))
        await store.set("answer:last", "kept", JSON, ttl=3600)
        print("written", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

    asyncio.run(main())
    """
)


def _write_then_kill(path: Path) -> None:
    """Run `_WRITER` on `path` and SIGKILL it once it says its writes returned."""
    root = Path(__file__).resolve().parent.parent
    with subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    ) as child:
        try:
            assert child.stdout is not None
            assert b"written\n" == child.stdout.readline()
            child.send_signal(signal.SIGKILL)
            assert -signal.SIGKILL == child.wait(timeout=10)
        finally:
            if child.poll() is None:
                child.kill()


async def test_an_awaited_write_survives_a_kill_9(tmp_path: Path) -> None:
    """A process is killed (SIGKILL) right after its writes returned: every one is in the file."""
    path = tmp_path / "s.db"
    await asyncio.to_thread(_write_then_kill, path)
    async with contextlib.aclosing(await SqliteStore.open(path)) as store:
        assert "kept" == await store.get("answer:last", JSON)
        assert list(range(300)) == await store.get_many([f"answer:{i}" for i in range(300)], JSON)
