"""The store interface: keys with TTLs, atomic claims, counters, sliding windows, scans.

The store knows nothing of Slack or MCP. Values are objects; a `Codec` turns them into bytes
only where a backend needs bytes (SQLite, Redis): the memory backend keeps the objects
themselves. Every value has a TTL: nothing is kept forever.

Keys are `namespace:rest`, e.g. `answer:how do i create a bucket`. The namespace (the part
before the first `:`) is what size bounds apply to, so a flood of one kind of key (dedupe
claims) cannot push out another (cached answers).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

if TYPE_CHECKING:
    from bot.store._ops import Op

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


class StoreError(Exception):
    """A store call failed (connection lost, timed out, refused). `message` is one safe line."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class StoreConfigError(StoreError):
    """The store cannot be used as configured (bad STATE_URL, corrupt or unwritable SQLite file,
    wrong Redis password or db): retrying will not help. `message` names STATE_URL and the fix;
    meant for one start-up line and exit 2."""


class StoreUnavailable(StoreError):
    """The store did not answer at start-up (connection refused, timed out): worth retrying."""


class Codec(Protocol[T]):
    """Object <-> bytes at the boundary of a backend that stores bytes."""

    def encode(self, value: T) -> bytes: ...

    def decode(self, raw: bytes) -> T:
        """The value; ValueError when `raw` is not one (a store outlives code versions)."""


class TextCodec:
    def encode(self, value: str) -> bytes:
        return value.encode()

    def decode(self, raw: bytes) -> str:
        return raw.decode("utf-8")


class JsonCodec:
    """Plain JSON values (dicts, lists, str, numbers)."""

    def encode(self, value: Any) -> bytes:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()

    def decode(self, raw: bytes) -> Any:
        return json.loads(raw)


@dataclass(frozen=True)
class ModelCodec(Generic[M]):
    """A pydantic model as its JSON."""

    model: type[M]

    def encode(self, value: M) -> bytes:
        return value.model_dump_json().encode()

    def decode(self, raw: bytes) -> M:
        try:
            return self.model.model_validate_json(raw)
        except ValidationError as exc:
            raise ValueError(f"not a {self.model.__name__}") from exc


@dataclass(frozen=True)
class AdapterCodec(Generic[T]):
    """Any type pydantic can validate (dataclasses, tuples, lists of models) as JSON."""

    adapter: TypeAdapter[T]

    def encode(self, value: T) -> bytes:
        return self.adapter.dump_json(value)

    def decode(self, raw: bytes) -> T:
        try:
            return self.adapter.validate_json(raw)
        except ValidationError as exc:
            raise ValueError("unreadable value") from exc


TEXT = TextCodec()
JSON = JsonCodec()


def namespace(key: str) -> str:
    """The part of a key that size bounds apply to: everything before the first `:`."""
    return key.split(":", 1)[0]


def shared_by_replicas(store: Store) -> bool:
    """Whether other bot processes work with `store` at the same time: Redis's replicas do;
    an SQLite file is one bot's (docs/deployment.md), memory:// one process's. What only
    replicas need (the shared flight's lock, Stop markers) is written only to such a store."""
    return store.kind == "redis"


class Store(Protocol):
    """What every backend offers. All TTLs and windows are in seconds; `ttl` must be > 0.

    Time: expiry runs on the backend's clock (Redis's own; the injected clock of the memory
    and SQLite backends). `hit` takes the caller's `now` (seconds since the epoch) so that
    replicas share one notion of the window.

    A value that cannot be decoded (written by another version) reads as absent.
    """

    #: "memory", "sqlite" or "redis"
    kind: str

    async def get(self, key: str, codec: Codec[T]) -> T | None: ...

    async def get_many(self, keys: Sequence[str], codec: Codec[T]) -> list[T | None]: ...

    async def set(self, key: str, value: T, codec: Codec[T], ttl: float) -> None: ...

    async def add(self, key: str, value: T, codec: Codec[T], ttl: float) -> bool:
        """Set `key` only if it is absent (or expired): an atomic claim. True when set."""

    async def replace(self, key: str, expected: T, value: T, codec: Codec[T], ttl: float) -> bool:
        """Compare-and-set: set `key` to `value` (new TTL) only if it holds `expected` now."""

    async def delete(self, key: str) -> None: ...

    async def delete_if(self, key: str, expected: T, codec: Codec[T]) -> bool:
        """Delete `key` only if it holds `expected` (releasing one's own lock). True if deleted."""

    async def incr(self, key: str, amount: int, ttl: float) -> int:
        """Add `amount` (may be negative) to an integer counter, created at 0 with `ttl`
        (an existing counter keeps its expiry). The new value."""

    async def hit(self, key: str, limit: int, window: float, now: float) -> float | None:
        """A sliding-window limiter: record one event at `now` and return None when fewer than
        `limit` events happened in `(now - window, now]`; otherwise record nothing and
        return the seconds until the oldest of them leaves the window."""

    async def unhit(self, key: str, at: float) -> bool:
        """Take back one event `hit` recorded at exactly `at` (a call the other side did not
        count after all). True when there was one."""

    async def window_events(self, key: str, window: float, now: float) -> list[float]:
        """The times of the events `hit` recorded in `(now - window, now]`, oldest first."""

    async def scan(self, prefix: str, codec: Codec[T], limit: int) -> list[tuple[str, T]]:
        """Up to `limit` live `(key, value)` pairs whose key starts with `prefix`, any order."""

    async def batch(self, ops: Sequence[Op]) -> list[object]:
        """Several writes as one operation (one transaction, one round trip), all or none;
        see `bot.store._ops`. One result per operation."""

    async def ping(self) -> None:
        """Raise StoreError when the backend cannot be used right now."""

    async def aclose(self) -> None: ...
