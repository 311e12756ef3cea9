"""Rendering off the event loop: a big answer or document page is converted in a worker
thread, so the acknowledgements Slack wants within 3 s never wait behind it.

Rendering is linear in its input (`bot.render.inline_scan`), but a page of a large document
is still tens of milliseconds of CPU, and many at once would add up on the loop that serves
every request. Below `OFF_LOOP_CHARS` a render costs less than handing it to a thread.
The worker holds the GIL while it converts, but CPython hands it back to the loop's thread
every switch interval (5 ms), so the loop keeps answering while a render runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from bot.models import Answer

#: input size (characters of Markdown) from which a render runs in a worker thread
OFF_LOOP_CHARS = 8_000

_P = ParamSpec("_P")
_T = TypeVar("_T")


async def render_off_loop(
    size: int, render: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs
) -> _T:
    """`render(*args, **kwargs)`, in a worker thread when `size` is at least OFF_LOOP_CHARS."""
    if size < OFF_LOOP_CHARS:
        return render(*args, **kwargs)
    return await asyncio.to_thread(render, *args, **kwargs)


def answer_size(answer: Answer) -> int:
    """How much Markdown rendering `answer` converts (its text, or its hits)."""
    hits = sum(len(hit.title) + len(hit.snippet) for hit in answer.hits)
    refs = sum(len(ref.title) for ref in answer.references)
    return len(answer.text) + hits + refs
