"""Replies in a person's direct messages with the bot, for a request that came from
elsewhere: an Ask again click on the Home tab, which has no channel and no response_url.

`chat.postMessage` with the person's user id as `channel` posts in the bot's DM with them
(the app's Messages tab); Slack answers with the DM's own id, used from then on (chat.update
and file uploads need it). So no `conversations.open`, and no `im:write` scope.

Progress is a "Looking that up…" message in the DM, which the answer (or a notice) then
replaces: nothing is left behind, and the person sees at once that the click worked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.render import Message


@dataclass
class DirectReply:
    """`Reply` into `user`'s DM with the bot; everything is for them alone, so "the asker"
    and "the thread" are the same place."""

    client: AsyncWebClient
    user: str | None
    #: the user id until the first post; then the DM's id (D…) that Slack answered with
    channel: str | None = None
    response_url: str | None = None
    thread_ts: str | None = None
    _progress_ts: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.channel is None:
            self.channel = self.user

    async def start_progress(self, msg: Message) -> None:
        self._progress_ts = await self._post(msg)

    async def update_progress(self, msg: Message) -> None:
        if self._progress_ts is not None:
            await self._replace(self._progress_ts, msg)

    async def notify_asker(self, msg: Message) -> None:
        await self._show(msg)

    async def notify_thread(self, msg: Message) -> None:
        await self._show(msg)

    async def deliver(self, msg: Message) -> str | None:
        return await self._show(msg)

    async def post_visibly(self, msg: Message) -> str | None:
        return await self._post(msg)

    async def finish(self) -> None:
        """Nothing to take down: the progress message became the reply."""

    async def _show(self, msg: Message) -> str | None:
        """Replace the progress message with `msg` (once), or post it."""
        ts, self._progress_ts = self._progress_ts, None
        if ts is not None:
            await self._replace(ts, msg)
            return ts
        return await self._post(msg)

    async def _replace(self, ts: str, msg: Message) -> None:
        # `blocks` always sent: without it chat.update keeps the old message's blocks
        await self.client.chat_update(
            channel=self.channel or "", ts=ts, text=msg["text"], blocks=msg.get("blocks") or []
        )

    async def _post(self, msg: Message) -> str | None:
        if not self.channel:
            return None
        response = await self.client.chat_postMessage(
            channel=self.channel, unfurl_links=False, unfurl_media=False, **_payload(msg)
        )
        opened = response.get("channel")
        if isinstance(opened, str) and opened:
            self.channel = opened
        ts = response.get("ts")
        return ts if isinstance(ts, str) and ts else None


def _payload(msg: Message) -> dict[str, Any]:
    payload: dict[str, Any] = {"text": msg["text"]}
    if msg.get("blocks"):
        payload["blocks"] = msg["blocks"]
    return payload
