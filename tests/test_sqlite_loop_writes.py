"""SQLite writes committed on the event loop's thread: one COMMIT per loop iteration, a file
locked by another connection handed to the fallback thread (the loop keeps serving), a
failing write failing only its caller, checkpoints in their own thread (the WAL stays
bounded), and an awaited write kept through a kill -9."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bot.store import JSON, SqliteStore, _sqlite_checkpoint, urgent
from bot.store._sqlite_db import Db
from tests.store_backends import FakeClock

pytestmark = pytest.mark.timeout(60)


async def _open(path: Path, *, busy_timeout: float = 2) -> SqliteStore:
    return await SqliteStore.open(path, clock=FakeClock(), busy_timeout=busy_timeout)


async def test_writes_submitted_in_one_loop_iteration_share_one_commit(tmp_path: Path) -> None:
    """Fifty questions writing at once cost one transaction, and each reads back."""
    store = await _open(tmp_path / "s.db")
    try:
        before = store.writer.groups
        await asyncio.gather(*(store.set(f"answer:{i}", i, JSON, ttl=60) for i in range(50)))
        assert 1 == store.writer.groups - before
        assert list(range(50)) == await store.get_many([f"answer:{i}" for i in range(50)], JSON)
    finally:
        await store.aclose()


async def test_a_group_is_bounded_so_one_commit_stays_short(tmp_path: Path) -> None:
    """300 writes at once go in two transactions (at most 256 writes each)."""
    store = await _open(tmp_path / "s.db")
    try:
        before = store.writer.groups
        await asyncio.gather(*(store.set(f"answer:{i}", i, JSON, ttl=60) for i in range(300)))
        assert 2 == store.writer.groups - before
        assert 299 == await store.get("answer:299", JSON)
    finally:
        await store.aclose()


def _rows(path: Path) -> int:
    other = sqlite3.connect(path)
    try:
        return int(other.execute("SELECT count(*) FROM entries").fetchone()[0])
    finally:
        other.close()


async def test_an_urgent_write_is_committed_before_its_caller_yields(tmp_path: Path) -> None:
    """The acknowledgement's write (inside `urgent()`) is in the file when `set` returns, with
    no turn of the loop in between, in a COMMIT of its own; the writes queued before it keep
    their group."""
    store = await _open(tmp_path / "s.db")
    try:
        queued = [
            asyncio.ensure_future(store.set(f"answer:{i}", i, JSON, ttl=60)) for i in range(3)
        ]
        await asyncio.sleep(0)  # they have submitted their writes: a group waits for next turn
        groups = store.writer.groups
        turns = 0

        def count_turn() -> None:
            nonlocal turns
            turns += 1

        asyncio.get_running_loop().call_soon(count_turn)
        with urgent():
            await store.set("lease:E1", "owner", JSON, ttl=60)
        assert 0 == turns  # the caller went on without giving the loop a turn
        assert groups + 1 == store.writer.groups
        assert 1 == _rows(tmp_path / "s.db")  # in the file, seen by another connection
        assert [None] * 3 == await asyncio.gather(*queued)
        assert groups + 2 == store.writer.groups  # the three queued: one group, as before
        assert 4 == _rows(tmp_path / "s.db")
    finally:
        await store.aclose()


async def test_an_urgent_write_on_a_locked_file_waits_as_any_write_does(tmp_path: Path) -> None:
    """The file's lock is held elsewhere: the urgent write goes to the fallback thread and
    completes once the lock is free; it is neither lost nor an error."""
    store = await _open(tmp_path / "s.db", busy_timeout=30)
    holder = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")

        async def acknowledged() -> None:
            with urgent():
                await store.set("lease:E2", "owner", JSON, ttl=60)

        write = asyncio.ensure_future(acknowledged())
        await asyncio.sleep(0)
        assert not write.done()
        holder.execute("ROLLBACK")
        async with asyncio.timeout(20):
            await write
        assert "owner" == await store.get("lease:E2", JSON)
    finally:
        holder.close()
        await store.aclose()


def _failing(error: type[Exception]) -> object:
    def job(db: Db) -> None:
        db.set("answer:half", b"1", expires=2e9, now=1.0)  # undone with its job
        raise error("this write fails")

    return job


@pytest.mark.parametrize("error", [sqlite3.IntegrityError, KeyError])
async def test_a_failing_write_in_a_group_fails_only_its_caller(
    tmp_path: Path, error: type[Exception]
) -> None:
    """One write of a group raises (an SQLite error or a bug): its caller gets the error and
    none of its changes stay; the others in the same COMMIT are applied."""
    store = await _open(tmp_path / "s.db")

    async def failing_write() -> object:
        return await store.writer.submit(_failing(error))  # type: ignore[arg-type]

    try:
        before = store.writer.groups
        results = await asyncio.gather(
            store.set("answer:a", 1, JSON, ttl=60),
            failing_write(),
            store.set("answer:b", 2, JSON, ttl=60),
            return_exceptions=True,
        )
        assert 1 == store.writer.groups - before
        assert results[0] is None
        assert results[2] is None
        assert isinstance(results[1], error)
        assert [1, 2, None] == await store.get_many(["answer:a", "answer:b", "answer:half"], JSON)
    finally:
        await store.aclose()


async def test_a_lone_failing_write_leaves_nothing_and_the_next_write_works(
    tmp_path: Path,
) -> None:
    """A write alone in its transaction fails: nothing of it stays, the store goes on."""
    store = await _open(tmp_path / "s.db")
    try:
        with pytest.raises(sqlite3.IntegrityError):
            await store.writer.submit(_failing(sqlite3.IntegrityError))  # type: ignore[arg-type]
        await store.set("answer:after", 3, JSON, ttl=60)
        assert [None, 3] == await store.get_many(["answer:half", "answer:after"], JSON)
    finally:
        await store.aclose()


async def test_a_file_locked_by_another_connection_does_not_stall_the_loop(
    tmp_path: Path,
) -> None:
    """Another connection holds the write lock: the write waits in the fallback thread while
    the loop keeps serving reads, and completes once the lock is released. (The holder runs
    on the loop's thread: a loop that waited for the lock could never let it go.)"""
    store = await _open(tmp_path / "s.db", busy_timeout=30)
    holder = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    try:
        await store.set("answer:before", 1, JSON, ttl=60)
        holder.execute("BEGIN IMMEDIATE")
        write = asyncio.ensure_future(store.set("answer:during", 2, JSON, ttl=60))
        served = asyncio.Event()

        async def serve() -> None:
            assert 1 == await store.get("answer:before", JSON)
            served.set()

        reading = asyncio.ensure_future(serve())
        async with asyncio.timeout(5):
            await served.wait()
        await reading
        assert not write.done()  # still waiting for the lock, in the fallback thread
        assert store.writer.handoffs >= 1
        holder.execute("ROLLBACK")
        async with asyncio.timeout(20):
            await write
        assert 2 == await store.get("answer:during", JSON)
        # the lock is free again: the next write is the loop's own
        groups = store.writer.groups
        await store.set("answer:after", 3, JSON, ttl=60)
        assert groups + 1 == store.writer.groups
    finally:
        holder.close()
        await store.aclose()


async def test_the_wal_stays_bounded_and_closing_empties_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 MB written in 200 transactions without a pause (so the WAL never starts over by
    itself): past its bound (8 MB here) a checkpoint in its own thread empties it, and
    closing the store empties it too."""
    monkeypatch.setattr(_sqlite_checkpoint, "MAX_WAL_BYTES", 8 << 20)
    store = await _open(tmp_path / "s.db")
    wal = tmp_path / "s.db-wal"
    doc = {"content": "x" * 20_000}
    largest = 0
    try:
        for group in range(200):
            await asyncio.gather(
                *(store.set(f"doc:{group}:{i}", doc, JSON, ttl=60) for i in range(10))
            )
            largest = max(largest, wal.stat().st_size if wal.exists() else 0)
        checkpointer = store.writer.checkpointer
        assert checkpointer.passive + checkpointer.truncated > 0
        assert largest < 24 << 20  # 40 MB written
    finally:
        await store.aclose()
    assert not wal.exists() or 0 == wal.stat().st_size
    again = await _open(tmp_path / "s.db")
    try:
        assert doc == await again.get("doc:199:9", JSON)
    finally:
        await again.aclose()


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
    store = await SqliteStore.open(path)
    try:
        assert "kept" == await store.get("answer:last", JSON)
        assert list(range(300)) == await store.get_many([f"answer:{i}" for i in range(300)], JSON)
    finally:
        await store.aclose()
