"""Writes an acknowledgement waits on: committed at once, not at the loop's next turn.

The SQLite store commits the writes of one loop iteration together, at the next iteration,
and the caller resumes at the one after: two turns of the loop, which under load are tens of
milliseconds each, before Slack gets its acknowledgement. A write made inside `urgent()` is
committed on the caller's own stack instead, in a transaction of its own (the writes queued
for the next group are not its to wait for), and the caller goes on without yielding. The
other backends do as they always do.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_URGENT: ContextVar[bool] = ContextVar("gdocs_store_urgent", default=False)


@contextmanager
def urgent() -> Iterator[None]:
    """Store writes inside are committed at once (what an acknowledgement waits for)."""
    token = _URGENT.set(True)
    try:
        yield
    finally:
        _URGENT.reset(token)


def is_urgent() -> bool:
    return _URGENT.get()
