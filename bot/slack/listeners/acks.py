"""Acknowledging a slash command once: the work's first reply can ride on the ack itself."""

from __future__ import annotations

import asyncio

from slack_bolt.async_app import AsyncAck

from bot.render import Message


class OnceAck:
    """Bolt's `ack` for one request, used at most once: by the first reply (which then
    shows as the command's ephemeral response), or empty if no reply came in time."""

    def __init__(self, ack: AsyncAck | None) -> None:
        self._ack = ack
        #: no `ack`: the request was acknowledged already (work resumed after a restart)
        self._claimed = ack is None
        #: set once the acknowledgement is recorded (and Bolt may send it), or once the work
        #: ended without replying (`InFlight.start`)
        self.done = asyncio.Event()

    async def __call__(self, msg: Message | None = None) -> bool:
        """Acknowledge, with `msg` shown to the asker; False when already acknowledged."""
        if self._claimed:
            return False
        self._claimed = True  # before any await: two callers cannot both acknowledge
        try:
            await self._send(msg)
        finally:
            self.done.set()
        return True

    async def _send(self, msg: Message | None) -> None:
        assert self._ack is not None
        if msg is None:
            await self._ack()
        else:
            await self._ack(
                text=msg["text"],
                blocks=msg.get("blocks") or None,
                response_type="ephemeral",
                unfurl_links=False,
                unfurl_media=False,
            )
