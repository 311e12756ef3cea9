"""`/gdocs channel …`: show or change the channel's settings. A change is checked (a
channel, not a DM; with CHANNEL_SETTINGS_ADMINS_ONLY the asker is a workspace admin), saved,
then announced in the channel; where the bot may not post it would do nothing there, so it
is undone and the asker told how to invite the bot. Products are kept only where they
apply: the MCP backend has no filter, so it takes `products all` alone."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot import render
from bot.channels import (
    ChangeSetting,
    ChannelSettings,
    ChannelUsage,
    ShowSettings,
    UnknownProducts,
    parse_channel_request,
)
from bot.settings import Settings
from bot.slack.boundary import Outcome
from bot.slack.memory import ChannelSettingsStore, UserProfiles
from bot.slack.work.worklog import Reply
from bot.store import StoreError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChannelCommand:
    channels: ChannelSettingsStore
    profiles: UserProfiles
    #: THREAD_FOLLOWUPS (the default shown), CHANNEL_SETTINGS_ADMINS_ONLY, and
    #: DEVELOPER_KNOWLEDGE_API: only "rest" limits answers to products
    settings: Settings

    @property
    def _products_apply(self) -> bool:
        return self.settings.developer_knowledge_api == "rest"

    async def __call__(self, reply: Reply, words: str, *, command: str) -> Outcome:
        """Answer `/gdocs channel <words>` through the command's `reply`."""
        channel, user = reply.channel, reply.user
        request = parse_channel_request(words)
        if isinstance(request, ChannelUsage):
            await reply.notify_asker(
                render.render_channel_usage(command, products=self._products_apply)
            )
            return Outcome(route="channel", outcome="help")
        if isinstance(request, UnknownProducts):
            await reply.notify_asker(render.render_scope_refused(request.error, channel=True))
            return Outcome(route="channel", outcome="invalid_input")
        if not channel or not user or channel.startswith("D"):
            await reply.notify_asker(render.notice("channel_not_a_channel"))
            return Outcome(route="channel", outcome="invalid_input")
        try:
            current = await self.channels.stored(channel)
        except StoreError:
            await reply.notify_asker(render.notice("channel_unavailable"))
            return Outcome(route="channel", outcome="unavailable")
        if isinstance(request, ShowSettings):
            shown = render.render_channel_settings(
                channel,
                current,
                default_followups=self.settings.thread_followups,
                fixed_auto=self.channels.is_fixed_auto(channel),
                command=command,
                products_apply=self._products_apply,
            )
            await reply.notify_asker(shown)
            return Outcome(route="channel", outcome="ok")
        return await self._change(reply, request, current, command=command)

    async def _change(
        self,
        reply: Reply,
        request: ChangeSetting,
        current: ChannelSettings,
        *,
        command: str,
    ) -> Outcome:
        channel, user = reply.channel or "", reply.user or ""
        if request.products and not self._products_apply:
            await reply.notify_asker(render.render_scope_refused("needs_rest", channel=True))
            return Outcome(route="channel", outcome="refused")
        if request.field == "mode" and self.channels.is_fixed_auto(channel):
            await reply.notify_asker(render.notice("channel_fixed", command))
            return Outcome(route="channel", outcome="refused")
        if self.settings.channel_settings_admins_only:
            admin = await self.profiles.is_admin(reply.client, user)
            if not admin:
                refusal = "channel_role_unknown" if admin is None else "channel_admins_only"
                await reply.notify_asker(render.notice(refusal))
                return Outcome(route="channel", outcome="refused")
        changed = request.apply(current)
        if changed == current:
            await reply.notify_asker(render.notice("channel_unchanged", command))
            return Outcome(route="channel", outcome="ok")
        try:
            await self.channels.save(channel, changed)
        except StoreError:
            await reply.notify_asker(render.notice("channel_unavailable"))
            return Outcome(route="channel", outcome="unavailable")
        notice = render.render_channel_notice(user, request.field, changed, command)
        if await reply.post_visibly(notice) is None:
            # not in the channel: the settings would do nothing there, so they are not kept
            try:
                await self.channels.save(channel, current)
            except StoreError:
                logger.info("channel setting not undone: the store did not answer")
            await reply.notify_asker(render.notice("channel_not_member"))
            return Outcome(route="channel", outcome="not_in_channel")
        return Outcome(route="channel", outcome="ok")
