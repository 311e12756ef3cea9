"""Private answers (`/gdocs private …`) and their Share button: the answer is kept an hour
(`share:<id>`, the id on the button); a click takes it out (a double click posts it once),
posts it where it was asked and replaces the private copy with "Shared"; where the bot may
not post it is put back and the asker told how to invite the bot."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from bot import keys, render
from bot.errors import InvalidInput
from bot.slack.boundary import Outcome
from bot.slack.delivery import posting
from bot.slack.memory import ThreadMemory, ThreadTopic
from bot.slack.work.worklog import Reply
from bot.store import AdapterCodec, Store

SHARE_TTL_SECONDS = 3600


@dataclass(frozen=True)
class PrivateAnswer:
    """What a Share click needs to post "the same answer" again."""

    question: str
    asker: str
    channel: str
    #: the thread it was asked in (a mention's); None for /gdocs, which starts one
    thread_ts: str | None
    #: the rendered answer, without who asked (`render_answer(result)`)
    text: str
    blocks: list[dict[str, Any]]
    #: the answer record its 👍 / 👎 name, the shared copy's too (one answer, one record)
    feedback_id: str | None = None


_CODEC = AdapterCodec(PrivateAnswer)


class PrivateAnswers:
    def __init__(self, store: Store, ttl_seconds: float = SHARE_TTL_SECONDS) -> None:
        self._store = store
        self.ttl_seconds = ttl_seconds

    async def keep(self, answer: PrivateAnswer, answer_id: str | None = None) -> str:
        """Store the answer; its id (URL-safe, unguessable, fits the button's value)."""
        answer_id = answer_id or secrets.token_urlsafe(12)
        await self._store.set(keys.SHARE.key(answer_id), answer, _CODEC, self.ttl_seconds)
        return answer_id

    async def take(self, answer_id: str) -> PrivateAnswer | None:
        """The answer, removed from the store; None when gone (expired, or taken already)."""
        key = keys.SHARE.key(answer_id)
        found = await self._store.get(key, _CODEC)
        if found is None or not await self._store.delete_if(key, found, _CODEC):
            return None
        return found


async def answer_privately(
    answers: PrivateAnswers,
    reply: Reply,
    body: render.Message,
    question: str,
    feedback_id: str | None = None,
) -> None:
    """Show `body` to the asker alone, with a Share button when it could be kept, and 👍 / 👎
    naming the answer record `feedback_id`."""
    answer_id = None
    if reply.user and reply.channel:
        kept = PrivateAnswer(
            question=question,
            asker=reply.user,
            channel=reply.channel,
            thread_ts=reply.thread_ts,
            text=body["text"],
            blocks=list(body.get("blocks") or []),
            feedback_id=feedback_id,
        )
        answer_id = await answers.keep(kept)
    await reply.notify_asker(render.render_private_answer(body, question, answer_id, feedback_id))


async def share(
    answers: PrivateAnswers, threads: ThreadMemory, reply: Reply, value: object
) -> Outcome:
    """A Share click (`value`: its button's) from the asker's private answer."""
    try:
        answer_id = render.decode_share_value(value)
    except InvalidInput:
        await reply.notify_asker(render.notice("share_forged"))
        return Outcome(route="share", outcome="invalid_input")
    kept = await answers.take(answer_id)
    if kept is None:
        await reply.notify_asker(render.render_share_expired(int(answers.ttl_seconds // 60)))
        return Outcome(route="share", outcome="expired")
    if kept.asker != reply.user:  # Slack shows the button to the asker alone
        await answers.keep(kept, answer_id)
        await reply.notify_asker(render.notice("share_forged"))
        return Outcome(route="share", outcome="invalid_input")
    body: render.Message = {"text": kept.text, "blocks": kept.blocks}
    shared = render.render_shared_answer(body, kept.asker, kept.question, kept.feedback_id)
    ts = None
    try:
        ts = await posting.post_visibly(
            reply.client, channel=kept.channel, msg=shared, thread_ts=kept.thread_ts
        )
    finally:
        if ts is None:  # not posted: the asker may invite the bot and press Share again
            await answers.keep(kept, answer_id)
    if ts is None:
        await reply.notify_asker(render.notice("share_not_in_channel"))
        return Outcome(route="share", outcome="not_in_channel")
    session = reply.client.session
    await posting.respond(
        reply.response_url, render.notice("shared_note"), replace_original=True, session=session
    )
    await threads.remember(
        kept.channel, kept.thread_ts or ts, ThreadTopic(kept.question, kept.asker)
    )
    return Outcome(route="share", outcome="ok")
