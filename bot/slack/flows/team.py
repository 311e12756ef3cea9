"""Team answers in Slack (bot/team.py): who manages them; the form behind the
`save_team_answer` shortcut, the list's Edit and a draft's review (opened at once: a
trigger_id lives 3 s; what needs Slack's answers comes after, by views.update); its Save,
written before the form is acknowledged so a store that does not take it is said in the
form; and `/gdocs team`'s list with its Remove."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot import render, tenant
from bot.errors import InvalidInput
from bot.slack import SLACK_CALL_FAILURES
from bot.slack.boundary import Outcome, as_dict, as_str
from bot.slack.delivery import posting
from bot.slack.memory import UserProfiles
from bot.slack.work.worklog import Reply
from bot.store import StoreError
from bot.team import TeamAnswer, TeamAnswers, new_team_id, review_date

logger = logging.getLogger(__name__)

#: the form is answered within Slack's 3 s: what Save does before the ack, at most
FORM_SAVE_SECONDS = 2.2
#: the permalink is a nicety: saved without it when Slack is slow
PERMALINK_SECONDS = 0.6


async def is_team_admin(
    profiles: UserProfiles, admin_ids: frozenset[str], client: AsyncWebClient, user: str
) -> bool:
    """A workspace admin or owner, or one of TEAM_ANSWERS_ADMINS (`settings.team_admin_ids`):
    who approves 👎 suggestions and edits or removes any team answer."""
    return user in admin_ids or await profiles.is_admin(client, user) is True


def message_markdown(message: dict[str, Any]) -> str:
    """A message's words as Markdown: its text or, when its sections say more (the bot's
    answers, whose text is a short fallback), those."""
    blocks = message.get("blocks")
    sections = [
        as_str(as_dict(block.get("text")).get("text"))
        for block in (blocks if isinstance(blocks, list) else [])
        if isinstance(block, dict) and block.get("type") == "section"
    ]
    text, said = as_str(message.get("text")) or "", "\n\n".join(s for s in sections if s)
    return render.markdown_from_mrkdwn(said if len(said) > len(text) else text).strip()


def shortcut_form(body: dict[str, Any]) -> render.TeamForm:
    """The form for the message a `save_team_answer` shortcut was used on."""
    message, channel = as_dict(body.get("message")), as_dict(body.get("channel"))
    name = as_str(channel.get("name"))  # a DM's is Slack's placeholder: no "from #…"
    return render.TeamForm(
        answer_id=new_team_id(),
        answer=message_markdown(message),
        channel=as_str(channel.get("id")),
        channel_name=None if name in ("directmessage", "privategroup") else name,
        message_ts=as_str(message.get("ts")),
    )


async def open_team_form(
    client: AsyncWebClient,
    trigger_id: str,
    form: render.TeamForm,
    *,
    question: Callable[[], Awaitable[str | None]] | None = None,
) -> bool:
    """Open the form for `form` at once, then (views.update) offer "the whole workspace"
    once Slack says the channel is public, and fill in `question()` when the form has none.
    False: Slack did not open it (e.g. the trigger expired)."""
    try:
        opened = await client.views_open(trigger_id=trigger_id, view=render.team_form_modal(form))
    except SLACK_CALL_FAILURES as exc:
        logger.info("team answer form not opened: %s", posting.why(exc))
        return False
    view = as_dict(opened.get("view"))

    async def asked() -> str | None:  # a nicety: without it the form stays as opened
        try:
            return await question() if question is not None and not form.question else None
        except StoreError as exc:
            logger.info("the thread's question not found: %s", exc.message)
            return None

    public, found = await asyncio.gather(is_public(client, form.channel), asked())
    better = replace(form, public=form.public or public, question=form.question or found or "")
    view_id = as_str(view.get("id"))
    if better != form and view_id is not None:
        try:  # the hash: never over a view that changed meanwhile
            modal = render.team_form_modal(better)
            await client.views_update(view_id=view_id, hash=view.get("hash"), view=modal)
        except SLACK_CALL_FAILURES as exc:
            logger.info("team answer form not completed: %s", posting.why(exc))
    return True


async def is_public(client: AsyncWebClient, channel: str | None) -> bool:
    """Slack says `channel` is a public channel; anything else (a DM, a group DM, a private
    channel, no answer) keeps a team answer there."""
    if not channel or not channel.startswith("C"):
        return False
    try:
        found = as_dict((await client.conversations_info(channel=channel)).get("channel"))
    except SLACK_CALL_FAILURES as exc:
        logger.info("conversations.info failed: %s", posting.why(exc))
        return False
    return found.get("is_private") is False and not found.get("is_im") and not found.get("is_mpim")


async def permalink(client: AsyncWebClient, channel: str | None, ts: str | None) -> str | None:
    if not channel or not ts:
        return None
    try:
        async with asyncio.timeout(PERMALINK_SECONDS):
            found = await client.chat_getPermalink(channel=channel, message_ts=ts)
    except SLACK_CALL_FAILURES as exc:  # TimeoutError among them
        logger.info("chat.getPermalink failed: %s", posting.why(exc))
        return None
    link = found.get("permalink")
    return link if isinstance(link, str) and render.is_http_url(link) else None


@dataclass(frozen=True)
class TeamFlow:
    team: TeamAnswers
    profiles: UserProfiles
    admin_ids: frozenset[str]
    clock: Callable[[], datetime]

    async def may_change(self, client: AsyncWebClient, user: str, answer: TeamAnswer) -> bool:
        """Its author (not of a draft: a suggestion is approved by an admin) or an admin."""
        own = answer.author == user and answer.status == "approved"
        return own or await is_team_admin(self.profiles, self.admin_ids, client, user)

    async def submit(
        self, client: AsyncWebClient, view: object, user: str
    ) -> tuple[dict[str, str], render.TeamForm | None]:
        """Save the submitted form: ({}, the form) when saved, else the form's errors by
        field (its text stays in the form)."""
        asked = render.question_block(view)  # where a sentence about the whole form goes
        try:
            form, errors = render.team_form_from_view(view)
        except InvalidInput as exc:
            return {asked: render.error_sentence(exc)}, None
        if errors:
            return errors, None
        try:
            async with asyncio.timeout(FORM_SAVE_SECONDS):
                answer = await self._answer(client, form, user)
                if isinstance(answer, str):
                    return {asked: answer}, None
                if form.mode != "draft":
                    await self.team.save(answer)
                elif await self.team.approve(form.answer_id, answer) is None:
                    return {asked: render.team_note("draft_gone")}, None
        except (StoreError, TimeoutError) as exc:
            logger.warning("a team answer was not saved: %s", getattr(exc, "message", "too slow"))
            return {render.ANSWER_BLOCK: render.TEAM_STORE_DOWN}, None
        except InvalidInput as exc:  # another answer has the question, or too many
            return {asked: render.error_sentence(exc)}, None
        return {}, form

    async def _answer(
        self, client: AsyncWebClient, form: render.TeamForm, user: str
    ) -> TeamAnswer | str:
        """What the form saves, or why not (the sentence)."""
        now = self.clock()
        fields: dict[str, Any] = {
            "question": form.question, "also": form.also, "answer": form.answer,
            "visibility": form.visibility, "review_at": review_date(now, self.team.review_days),
        }  # fmt: skip
        if form.mode == "new":
            link = await permalink(client, form.channel, form.message_ts)
            return TeamAnswer(
                id=form.answer_id, author=user, saved_at=now, channel=form.channel,
                channel_name=form.channel_name, permalink=link, workspace=tenant.current(),
                **fields,
            )  # fmt: skip
        found = await self.team.get(form.answer_id)
        if found is None or (found.status == "draft") != (form.mode == "draft"):
            return render.team_note("gone")
        if not await self.may_change(client, user, found):
            return render.team_note("refused")
        return found.model_copy(update=fields)  # its id, author, date and origin kept

    async def listing(
        self, client: AsyncWebClient, channel: str | None, user: str, note: str | None = None
    ) -> render.Message:
        """`/gdocs team`'s list for `user` in `channel`; users.info only when it shows an
        answer of someone else's (an admin manages those too)."""
        shown = await self.team.visible(channel)
        admin = any(a.author != user for a in shown) and await is_team_admin(
            self.profiles, self.admin_ids, client, user
        )
        first = [a.id for a in shown[: render.MAX_LISTED]]
        uses = await self.team.uses(first) if first else {}
        entries = [
            render.TeamListEntry(a, uses.get(a.id, 0), admin or a.author == user) for a in shown
        ]
        return render.render_team_list(entries, self.clock(), note=note)

    async def command(self, reply: Reply) -> Outcome:
        """`/gdocs team`: the list, to the asker alone."""
        try:
            shown = await self.listing(reply.client, reply.channel, reply.user or "")
        except StoreError as exc:
            logger.info("team answers unavailable: %s", exc.message)
            await reply.notify_asker(render.render_team_notice("unavailable"))
            return Outcome(route="team", outcome="unavailable")
        await reply.notify_asker(shown)
        return Outcome(route="team", outcome="ok")

    async def editable(
        self, client: AsyncWebClient, user: str, value: object
    ) -> render.TeamForm | str:
        """The form editing the answer an Edit button names, or the notice's kind."""
        try:
            found = await self.team.get(render.decode_team_value(value))
        except InvalidInput:
            return "refused"
        except StoreError:
            return "unavailable"
        return await self.edit_form(client, user, found)

    async def edit_form(
        self, client: AsyncWebClient, user: str, found: TeamAnswer | None
    ) -> render.TeamForm | str:
        """The form editing `found` (read already), or the notice's kind."""
        if found is None or found.status != "approved":
            return "gone"
        if not await self.may_change(client, user, found):
            return "refused"
        if len(found.answer) > render.FORM_ANSWER_CHARS:  # imported: the form would cut it
            return "too_long"
        return render.form_for(found, "edit")

    async def remove(
        self, client: AsyncWebClient, user: str, channel: str | None, value: object
    ) -> tuple[render.Message, bool]:
        """Remove the answer a Remove button names: (the list again with a note, True) or
        (a refusal, False: the list stays)."""
        try:
            found = await self.team.get(render.decode_team_value(value))
            if found is not None and not await self.may_change(client, user, found):
                return render.render_team_notice("refused"), False
            removed = found is not None and await self.team.remove(found.id)
        except InvalidInput:
            return render.render_team_notice("refused"), False
        except StoreError as exc:  # said, not logged as a bug: nothing was removed
            logger.info("team answer not removed: %s", exc.message)
            return render.render_team_notice("unavailable"), False
        if found is None or not removed:
            note = render.team_note("gone")
        else:
            note = render.team_removed_text(found.question)
        return await self.listing(client, channel, user, note=note), True
