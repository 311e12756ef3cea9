"""The store interface: objects under `namespace:rest` keys, each with a TTL; a `Codec` turns
them into bytes for SQLite and Redis. `batch([Op.add(...), Op.add(..., only_if=0)])` is one
SQLite transaction or one Redis script: all of it is applied, or none."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Generic, Literal, Protocol, TypeVar

from pydantic import TypeAdapter, ValidationError

T = TypeVar("T")


class StoreError(Exception):
    """A store call failed; `message` is one safe line."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class StoreConfigError(StoreError):
    """STATE_URL cannot work: `message` names STATE_URL and the fix (then exit 2)."""


class StoreUnavailable(StoreError):
    """The store did not answer at start-up: worth retrying."""


class Codec(Protocol[T]):
    """Object <-> bytes; `decode` raises ValueError for bytes that are not a value."""

    def encode(self, value: T) -> bytes: ...
    def decode(self, raw: bytes) -> T: ...


class TextCodec:
    def encode(self, value: str) -> bytes:
        return value.encode()

    def decode(self, raw: bytes) -> str:
        return raw.decode("utf-8")


@dataclass(frozen=True)
class AdapterCodec(Generic[T]):
    """Any type pydantic can validate, as JSON."""

    type: type[T]

    @cached_property
    def adapter(self) -> TypeAdapter[T]:
        # built at the first use: the models defer theirs too, so start-up builds none
        return TypeAdapter(self.type)

    def encode(self, value: T) -> bytes:
        return self.adapter.dump_json(value)

    def decode(self, raw: bytes) -> T:
        try:
            return self.adapter.validate_json(raw)
        except ValidationError as exc:
            raise ValueError("unreadable value") from exc


ModelCodec = AdapterCodec  # for a pydantic model
TEXT = TextCodec()
JSON: AdapterCodec[Any] = AdapterCodec(Any)  # compact JSON, as json.dumps wrote


def decoded(codec: Codec[T], raw: bytes | None) -> T | None:
    """`raw` decoded; None when absent or written by another version (as good as absent)."""
    try:
        return None if raw is None else codec.decode(raw)
    except ValueError:
        return None


def namespace(key: str) -> str:
    return key.split(":", 1)[0]


OpKind = Literal["set", "add", "replace", "delete", "delete_if", "incr"]
_CONDITIONS = frozenset({"add", "replace", "delete_if"})


@dataclass(frozen=True)
class Op:
    """One write of a batch; build it with the class methods."""

    kind: OpKind
    key: str
    value: Any = None
    codec: Codec[Any] | None = None
    ttl: float = 0.0
    expected: Any = None
    amount: int = 0
    only_if: int | None = None

    @classmethod
    def set(
        cls, key: str, value: T, codec: Codec[T], ttl: float, *, only_if: int | None = None
    ) -> Op:
        return cls("set", key, value, codec, ttl, only_if=only_if)

    @classmethod
    def add(
        cls, key: str, value: T, codec: Codec[T], ttl: float, *, only_if: int | None = None
    ) -> Op:
        return cls("add", key, value, codec, ttl, only_if=only_if)

    @classmethod
    def replace(cls, key: str, expected: T, value: T, codec: Codec[T], ttl: float) -> Op:
        return cls("replace", key, value, codec, ttl, expected=expected)

    @classmethod
    def delete(cls, key: str) -> Op:
        return cls("delete", key)

    @classmethod
    def delete_if(cls, key: str, expected: T, codec: Codec[T]) -> Op:
        return cls("delete_if", key, codec=codec, expected=expected)

    @classmethod
    def incr(cls, key: str, amount: int, ttl: float) -> Op:
        return cls("incr", key, ttl=ttl, amount=amount)

    def encoded(self) -> tuple[bytes, bytes]:
        codec = self.codec
        value = b"" if codec is None or self.value is None else codec.encode(self.value)
        expected = b"" if codec is None or self.expected is None else codec.encode(self.expected)
        return value, expected


def check(ops: Sequence[Op]) -> None:
    """ValueError for a TTL <= 0 or an `only_if` that names no earlier conditional write."""
    for index, op in enumerate(ops):
        if op.kind in ("set", "add", "replace", "incr") and op.ttl <= 0:
            raise ValueError(f"batch op {index} ({op.kind}): ttl must be > 0")
        if op.only_if is not None and not (
            0 <= op.only_if < index and ops[op.only_if].kind in _CONDITIONS
        ):
            raise ValueError(
                f"batch op {index}: only_if must name an earlier add/replace/delete_if"
            )


def applied(ops: Sequence[Op], apply: Callable[[Op], object]) -> list[object]:
    results: list[object] = []
    for op in ops:
        if op.only_if is None or results[op.only_if] is True:
            results.append(apply(op))
        else:  # skipped
            results.append(
                0 if op.kind == "incr" else None if op.kind in ("set", "delete") else False
            )
    return results


class Store(ABC):
    """What every backend offers; times in seconds. A value that cannot be decoded reads as
    absent. `add`: set if absent. `replace`: compare-and-set. `incr`: a counter created at 0
    with `ttl`. `hit`: record an event at `now` and return None when fewer than `limit`
    happened in `(now - window, now]`, else the seconds until the oldest leaves. The single
    writes are batches of one."""

    kind: str  # "memory", "sqlite" or "redis"

    @abstractmethod
    async def batch(self, ops: Sequence[Op]) -> list[object]: ...
    @abstractmethod
    async def get_many(self, keys: Sequence[str], codec: Codec[T]) -> list[T | None]: ...
    @abstractmethod
    async def hit(self, key: str, limit: int, window: float, now: float) -> float | None: ...
    @abstractmethod
    async def unhit(self, key: str, at: float) -> bool: ...
    @abstractmethod
    async def window_events(self, key: str, window: float, now: float) -> list[float]: ...
    @abstractmethod
    async def scan(self, prefix: str, codec: Codec[T], limit: int) -> list[tuple[str, T]]: ...
    @abstractmethod
    async def ping(self) -> None: ...
    @abstractmethod
    async def aclose(self) -> None: ...

    async def get(self, key: str, codec: Codec[T]) -> T | None:
        return (await self.get_many([key], codec))[0]

    async def _one(self, op: Op) -> object:
        return (await self.batch([op]))[0]

    async def set(self, key: str, value: T, codec: Codec[T], ttl: float) -> None:
        await self._one(Op.set(key, value, codec, ttl))

    async def add(self, key: str, value: T, codec: Codec[T], ttl: float) -> bool:
        return await self._one(Op.add(key, value, codec, ttl)) is True

    async def replace(self, key: str, expected: T, value: T, codec: Codec[T], ttl: float) -> bool:
        return await self._one(Op.replace(key, expected, value, codec, ttl)) is True

    async def delete(self, key: str) -> None:
        await self._one(Op.delete(key))

    async def delete_if(self, key: str, expected: T, codec: Codec[T]) -> bool:
        return await self._one(Op.delete_if(key, expected, codec)) is True

    async def incr(self, key: str, amount: int, ttl: float) -> int:
        value = await self._one(Op.incr(key, amount, ttl))
        assert isinstance(value, int)
        return value
