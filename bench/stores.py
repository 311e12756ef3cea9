"""The state stores the bench compares, shared by `--scenario store` and `--scenario load`:
which to run (`--stores`), the bot started on each, and its own count of store calls.

Each backend takes its turn from a clean state: a fresh SQLite file, a flushed Redis (a
real redis-server on 127.0.0.1, left out with the reason when it is not installed).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from bench.day import redis_or_reason
from bench.driver import Bench

#: `--stores` names → the column each gets, in the order they take turns
STORES = {"memory": "memory://", "sqlite": "SQLite", "redis": "Redis"}
#: the store operations that write (a transaction in SQLite)
WRITES = ("set", "add", "replace", "delete", "delete_if", "incr", "hit", "unhit", "batch")


def stores_arg(text: str) -> tuple[str, ...]:
    """`--stores memory,sqlite,redis`: known names, each once, in the given order."""
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in STORES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"--stores takes a comma-separated list of {', '.join(STORES)}"
        )
    return names


def add_store_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--stores",
        type=stores_arg,
        default=tuple(STORES),
        help="--scenario store and load: the STATE_URL backends, in turn (default: "
        + ",".join(STORES)
        + ")",
    )


class StoreBench(Bench):
    """The bench's bot on a given STATE_URL."""

    def __init__(self, args: argparse.Namespace, state_url: str) -> None:
        super().__init__(args)
        self.state_url = state_url

    def bot_env(self, cap: int) -> dict[str, str]:
        return super().bot_env(cap) | {"STATE_URL": self.state_url, "STATE_PREFIX": "bench:"}


@dataclass(frozen=True)
class Backend:
    name: str
    url: str
    #: called before each of its turns: the state left by the turn before goes
    reset: Callable[[], None]


def _nothing() -> None:
    return None


def _remove_sqlite(path: Path) -> Callable[[], None]:
    def reset() -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)

    return reset


@contextlib.contextmanager
def store_backends(
    args: argparse.Namespace, db_name: str
) -> Iterator[tuple[list[Backend], str | None]]:
    """The backends `args.stores` names, and why Redis is left out (None: it is not);
    redis-server runs until the block ends."""
    wanted = getattr(args, "stores", tuple(STORES))
    redis, reason = redis_or_reason() if "redis" in wanted else (None, None)
    db = Path(args.workdir).resolve() / db_name
    backends = []
    for key in wanted:
        if key == "memory":
            backends.append(Backend(STORES[key], "memory://", _nothing))
        elif key == "sqlite":
            backends.append(Backend(STORES[key], f"sqlite:///{db}", _remove_sqlite(db)))
        elif redis is not None:
            backends.append(Backend(STORES[key], redis.url, redis.flush))  # type: ignore[attr-defined]
    try:
        yield backends, reason
    finally:
        if redis is not None:
            redis.kill()  # type: ignore[attr-defined]


async def store_calls(bench: Bench) -> tuple[int, int, int]:
    """(calls, writes, calls that failed or timed out and were served by per-process state)
    the bot has made to its store so far, from its /metrics."""
    url = f"http://127.0.0.1:{bench.bot_port}/metrics"
    async with aiohttp.ClientSession() as session, session.get(url) as resp:
        text = await resp.text()
    calls = writes = 0
    for op, n in re.findall(r'^gdocs_store_calls_total\{op="(\w+)"\} ([0-9.e+]+)$', text, re.M):
        calls += int(float(n))
        writes += int(float(n)) if op in WRITES else 0
    errors = sum(
        int(float(n))
        for n in re.findall(r"^gdocs_store_errors_total\{.*\} ([0-9.e+]+)$", text, re.M)
    )
    return calls, writes, errors


async def settled_store_calls(
    bench: Bench, *, quiet: float = 0.1, within: float = 5.0
) -> tuple[int, int, int]:
    """`store_calls` once they stopped moving for `quiet` seconds (at most `within`): the
    writes a part leaves behind it (batched after the answers) are counted as its own, not
    as the next part's."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    last = await store_calls(bench)
    while loop.time() < deadline:
        await asyncio.sleep(quiet)  # polled: /metrics has no event to wait on
        now = await store_calls(bench)
        if now == last:
            break
        last = now
    return last


def per_question(
    before: tuple[int, int, int], after: tuple[int, int, int], questions: int
) -> tuple[float, float]:
    """(store calls, of them writes) per question between two `store_calls` readings."""
    count = max(1, questions)
    return (after[0] - before[0]) / count, (after[1] - before[1]) / count
