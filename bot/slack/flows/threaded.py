"""A threaded reply, streamed when STREAM_ANSWERS is on: one place for every listener whose
answer goes into a thread (mentions, DMs, follow-ups; a message shortcut's reply likewise)."""

from __future__ import annotations

import logging

from bot.slack.delivery.replies import ThreadReply
from bot.slack.delivery.streams import StreamReply
from bot.slack.deps import SlackDeps
from bot.store import StoreError
from bot.worklog import WorkRecord

logger = logging.getLogger(__name__)


def streamed_reply(
    deps: SlackDeps,
    direct: ThreadReply,
    *,
    team: str | None,
    record: WorkRecord | None,
    resumed: bool = False,
) -> StreamReply | None:
    """`direct` streamed (None when STREAM_ANSWERS is off), the stream's ts kept with the
    work `record`; resumed work finishes the message the stopped process had started."""
    if not deps.config.stream_answers:
        return None

    async def keep_ts(ts: str) -> None:
        if record is None:
            return
        try:
            await deps.work.note_reply(record, ts)
        except StoreError as exc:  # a restart would post anew: worse, not broken
            logger.info("could not keep the stream's ts with its work: %s", exc.message)

    existing = record.reply_ts if record is not None and resumed else None
    return StreamReply(
        direct, team_id=team, existing_ts=existing, resumed=resumed, on_started=keep_ts
    )
