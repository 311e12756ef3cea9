"""A question's writes once its answer is out, in ONE store batch with the work log's "done"
marker: the answer record (for votes), the thread memory and the asker's recent questions.

The flow says what to write (`delivering(writes)`, a function of the posted message's ts)
around `reply.deliver(msg)`; the tracked reply (`bot.slack.work.durable.TrackedReply`) takes the
writes (`take`) when it finishes the work record right after the post, so they share its
batch, and hands back their results. A reply that is not tracked leaves them to the flow,
which writes them in a batch of their own (`Staged.write`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from bot.store import Op, Store

Writes = Callable[[str | None], Sequence[Op]]


@dataclass
class Staged:
    writes: Writes
    #: the writes' results, once written (None: not written yet)
    results: list[object] | None = None
    ops: list[Op] = field(default_factory=list)

    async def write(self, store: Store, ts: str | None) -> list[object]:
        """The writes in a batch of their own, unless a finished work record carried them."""
        if self.results is None:
            self.ops = list(self.writes(ts))
            self.results = await store.batch(self.ops) if self.ops else []
        return self.results


_PENDING: ContextVar[Staged | None] = ContextVar("gdocs_after_answer", default=None)


@contextmanager
def delivering(writes: Writes) -> Iterator[Staged]:
    """Within the block, the next finished work record carries `writes`."""
    staged = Staged(writes)
    token = _PENDING.set(staged)
    try:
        yield staged
    finally:
        _PENDING.reset(token)


def take() -> Staged | None:
    """The writes the flow staged for the answer being delivered (None: none, or taken)."""
    staged = _PENDING.get()
    if staged is None or staged.results is not None:
        return None
    return staged
