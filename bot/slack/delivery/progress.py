"""The steps of a request, as a flow shows them: `async with progress_of(reply).step(title)
as step: …; step.output = …; step.sources = …`. On a streamed reply each step is a task on
the answer's timeline (bot/slack/delivery/streams.py); on any other reply a step shows
nothing, so a flow never asks which kind of reply it has.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from bot.render import StreamedAnswer


@dataclass
class Step:
    """One step of the timeline; the work sets what it found before the step ends."""

    title: str
    output: str | None = None
    sources: list[dict[str, Any]] = field(default_factory=list)
    #: "complete" unless the work says the step failed without raising
    status: Literal["complete", "error"] = "complete"
    task_id: str = ""
    closed: bool = False


class Progress:
    """Steps on a reply that shows no timeline: nothing is sent."""

    @property
    def streaming(self) -> bool:
        return False

    def decline(self) -> None:
        """This request shows no timeline (a whole page, a private answer)."""

    def stage(self, answer: StreamedAnswer) -> None:
        """The answer as a stream would send it, for the next `deliver`."""

    @asynccontextmanager
    async def step(self, title: str) -> AsyncIterator[Step]:
        """A step shown from its start to its end (error when the work raises)."""
        opened = await self.open_step(title)
        try:
            yield opened
        except BaseException:
            await self.close_step(opened, "error")
            raise
        await self.close_step(opened, opened.status)

    async def open_step(self, title: str) -> Step:
        """A step whose end the caller sees only later (a quota wait)."""
        return Step(title)

    async def close_step(self, step: Step, status: str) -> None:
        """The step's end: its status, output and sources shown."""


NO_PROGRESS = Progress()


def progress_of(reply: object) -> Progress:
    """The reply's timeline, or one that shows nothing."""
    found = getattr(reply, "progress", None)
    return found if isinstance(found, Progress) else NO_PROGRESS
