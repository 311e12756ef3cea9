"""Several writes as one store operation: `Store.batch([...])`.

    results = await store.batch([
        Op.add("lease:Ev1", owner, TEXT, ttl=120),
        Op.add("work:Ev1", record, RECORD, ttl=960, only_if=0),  # only when the lease was free
    ])

A batch is one SQLite transaction, one Redis script (atomic on the server, one round trip)
and one step of the memory store: every operation in it is applied, or (on an error) none.
`only_if=i` applies an operation only when the earlier operation `i` returned True (a claim
that succeeded, a compare-and-set that matched); else its result is False (0 for `incr`).
Results: None for `set` and `delete`, a bool for `add`, `replace` and `delete_if`, the new
value for `incr`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bot.store._api import Codec, T

OpKind = Literal["set", "add", "replace", "delete", "delete_if", "incr"]
_CONDITIONS = frozenset({"add", "replace", "delete_if"})


@dataclass(frozen=True)
class Op:
    """One write of a batch; build it with the class methods (they mirror the Store's)."""

    kind: OpKind
    key: str
    value: Any = None
    codec: Codec[Any] | None = None
    ttl: float = 0.0
    expected: Any = None
    amount: int = 0
    #: apply only when the operation at this index (earlier in the batch) returned True
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
    def replace(
        cls,
        key: str,
        expected: T,
        value: T,
        codec: Codec[T],
        ttl: float,
        *,
        only_if: int | None = None,
    ) -> Op:
        return cls("replace", key, value, codec, ttl, expected=expected, only_if=only_if)

    @classmethod
    def delete(cls, key: str, *, only_if: int | None = None) -> Op:
        return cls("delete", key, only_if=only_if)

    @classmethod
    def delete_if(cls, key: str, expected: T, codec: Codec[T], *, only_if: int | None = None) -> Op:
        return cls("delete_if", key, codec=codec, expected=expected, only_if=only_if)

    @classmethod
    def incr(cls, key: str, amount: int, ttl: float, *, only_if: int | None = None) -> Op:
        return cls("incr", key, ttl=ttl, amount=amount, only_if=only_if)

    def encoded(self) -> tuple[bytes, bytes]:
        """(value, expected) as the codec's bytes (b"" where there is none)."""
        codec = self.codec
        value = b"" if codec is None or self.value is None else codec.encode(self.value)
        expected = b"" if codec is None or self.expected is None else codec.encode(self.expected)
        return value, expected


def check(ops: Sequence[Op]) -> None:
    """ValueError for a batch no backend should run: a TTL of 0 or less where one is needed,
    or `only_if` naming something other than an earlier claim or compare-and-set."""
    for index, op in enumerate(ops):
        if op.kind in ("set", "add", "replace", "incr") and op.ttl <= 0:
            raise ValueError(f"batch op {index} ({op.kind}): ttl must be > 0")
        if op.only_if is not None and not (
            0 <= op.only_if < index and ops[op.only_if].kind in _CONDITIONS
        ):
            raise ValueError(
                f"batch op {index}: only_if must name an earlier add/replace/delete_if"
            )


def skipped(op: Op) -> object:
    """The result of an operation its condition skipped."""
    return 0 if op.kind == "incr" else (None if op.kind in ("set", "delete") else False)


def applies(op: Op, results: Sequence[object]) -> bool:
    return op.only_if is None or results[op.only_if] is True


class BatchWrites:
    """The single writes of a `Store` as batches of one (for a backend whose `batch` does it
    all: one transaction or script either way)."""

    async def batch(self, ops: Sequence[Op]) -> list[object]:
        raise NotImplementedError

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
