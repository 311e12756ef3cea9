"""`python -m bench.store_micro`: the store's own CPU per question, in one process.

The store calls one question makes (as the bot makes them, through `ResilientStore` and
`CountingStore`), replayed against memory://, an SQLite file and a real redis-server on
127.0.0.1 (when one can be started), `--concurrency` questions at a time, with value sizes
like the bot's. While it runs, `--busy` keeps the event loop's thread busy between calls
(as the bot's HTTP and rendering work does), since a store that hands work to a thread
behaves differently next to a busy loop than next to an idle one.

It prints the process CPU per question (every thread of this process; a redis-server's own
CPU is not included) and the store calls per question, per backend, side by side. A tool for
working on the store; the figures that count are `--scenario store`'s.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import tempfile
import time
from pathlib import Path

from bench.day import redis_or_reason
from bot.store import JSON, TEXT, CountingStore, MemoryStore, Op, ResilientStore, Store, open_store

_ANSWER = {"text": "Use `gcloud storage buckets create gs://NAME`. " * 60, "sources": ["a"] * 5}
_RECORD = {"channel": "C1", "user": "U1", "question": "how do I create a bucket?" * 4}
_DOC = {"name": "documents/x", "content": "Lorem ipsum dolor sit amet. " * 700}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def fresh_question(store: Store, i: int) -> None:
    """The calls of one fresh answer to /gdocs (see docs/operations-store.md)."""
    await store.batch(
        [
            Op.add(f"lease:E{i}", "owner", TEXT, 120),
            Op.add(f"work:E{i}", _RECORD, JSON, 960, only_if=0),
        ]
    )
    await store.get(f"answer:q{i}", JSON)
    await store.add(f"lock:q{i}", "owner", TEXT, 30)
    await store.get_many([f"doc:a{i}", f"doc:b{i}"], JSON)
    await store.get_many([f"title:a{i}", f"title:b{i}"], JSON)
    await store.batch(
        [
            Op.set(f"answer:q{i}", _ANSWER, JSON, 3600),
            Op.set(f"doc:a{i}", _DOC, JSON, 3600),
            Op.set(f"doc:b{i}", _DOC, JSON, 3600),
            Op.set(f"title:a{i}", "A title", TEXT, 3600),
            Op.set(f"title:b{i}", "B title", TEXT, 3600),
            Op.delete_if(f"lock:q{i}", "owner", TEXT),
        ]
    )
    await store.batch(
        [
            Op.delete(f"work:E{i}"),
            Op.replace(f"lease:E{i}", "owner", "done", TEXT, 600),
            Op.set(f"answer_record:A{i}", _RECORD, JSON, 30 * 86400),
            Op.set(f"thread:C1:{i}", _RECORD, JSON, 86400),
            Op.add(f"recent:U{i % 50}", [_RECORD["question"]], JSON, 86400),
        ]
    )


async def _busy(stop: asyncio.Event, seconds: float) -> float:
    """Keep the loop's thread busy for `seconds` between yields, until `stop`; the CPU
    seconds it spent so."""
    spent = 0.0
    while not stop.is_set():
        start = time.thread_time()
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass
        spent += time.thread_time() - start
        await asyncio.sleep(0)
    return spent


async def measure(
    store: Store, counted: CountingStore, args: argparse.Namespace
) -> dict[str, float]:
    gate = asyncio.Semaphore(args.concurrency)

    async def one(i: int) -> None:
        async with gate:
            await fresh_question(store, i)

    await asyncio.gather(*(one(-1 - k) for k in range(args.concurrency)))  # warm up
    stop = asyncio.Event()
    busy = asyncio.ensure_future(_busy(stop, args.busy / 1000)) if args.busy else None
    calls0, cpu0, wall0 = counted.round_trips, _cpu(), time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(args.questions)))
    cpu, wall = _cpu() - cpu0, time.perf_counter() - wall0
    stop.set()
    if busy is not None:
        cpu -= await busy  # the busy loop's own CPU is not the store's
    return {
        "cpu_ms": cpu * 1000 / args.questions,
        "wall_s": wall,
        "calls": (counted.round_trips - calls0) / args.questions,
    }


async def _open(url: str) -> tuple[Store, CountingStore]:
    if url == "memory://":
        counted = CountingStore(MemoryStore(max_entries=10_000))
        return counted, counted
    counted = CountingStore(await open_store(url, prefix="micro:", max_entries=10_000))
    return ResilientStore(counted, timeout=5.0), counted


async def main(args: argparse.Namespace) -> None:
    redis, reason = redis_or_reason()
    with tempfile.TemporaryDirectory() as tmp:
        backends = [("memory://", "memory://"), ("SQLite", f"sqlite:///{Path(tmp)}/micro.db")]
        if redis is not None:
            backends.append(("Redis", redis.url))  # type: ignore[attr-defined]
        results: dict[str, list[dict[str, float]]] = {name: [] for name, _ in backends}
        try:
            for _ in range(args.passes):
                for name, url in backends:
                    if name == "Redis":
                        redis.flush()  # type: ignore[union-attr]
                    store, counted = await _open(url)
                    try:
                        results[name].append(await measure(store, counted, args))
                    finally:
                        await store.aclose()
        finally:
            if redis is not None:
                redis.kill()  # type: ignore[attr-defined]
    if reason:
        print(f"Redis left out: {reason}")
    print(f"{args.questions} fresh questions, {args.concurrency} at a time, busy {args.busy} ms")
    base = statistics.median(r["cpu_ms"] for r in results["memory://"])
    for name, runs in results.items():
        cpu = statistics.median(r["cpu_ms"] for r in runs)
        print(
            f"{name:10s} CPU/question {cpu:6.3f} ms (+{cpu - base:.3f} over memory)"
            f"  wall {statistics.median(r['wall_s'] for r in runs):5.2f} s"
            f"  calls/question {runs[0]['calls']:.1f}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.store_micro", description=__doc__)
    parser.add_argument("--questions", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--busy", type=float, default=0.0, help="ms of loop work between yields")
    parser.add_argument("--passes", type=int, default=3)
    asyncio.run(main(parser.parse_args()))
