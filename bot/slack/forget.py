"""An uninstalled installation's saved things, deleted (OAuth mode): its channel settings and
its team answers (drafts too) with their index entries and use counts. Its tokens are Bolt's
token revocation listeners' (bot/slack/oauth.py calls this after them)."""

from __future__ import annotations

import logging

from bot import keys
from bot.channels import ChannelSettings
from bot.slack.deps import SlackDeps
from bot.store import AdapterCodec, ModelCodec, Op, ResilientStore
from bot.team import MAX_ALL_TEAM_ANSWERS, TeamAnswer, index_keys

logger = logging.getLogger(__name__)

_CHANNEL = AdapterCodec(ChannelSettings)
_TEAM: ModelCodec[TeamAnswer] = ModelCodec(TeamAnswer)


async def forget_installation(deps: SlackDeps, key: str) -> None:
    """Delete what installation `key` saved in the shared store. Refuses "" (one token: the
    only installation, whose settings nothing uninstalls)."""
    if not key:
        raise ValueError("forget_installation needs an installation key")
    # read in the shared store: a per-process stand-in is no one's record
    store = deps.store.primary if isinstance(deps.store, ResilientStore) else deps.store
    # channel settings are kept a year and evicted past CACHE_MAX_ENTRIES: never more
    found = await store.scan(keys.CHANNEL.prefix, _CHANNEL, deps.settings.cache_max_entries)
    channels = [k for k, settings in found if settings.workspace == key]
    kept = await store.scan(keys.TEAM.prefix, _TEAM, MAX_ALL_TEAM_ANSWERS)
    answers = [a for _, a in kept if a.workspace == key]
    gone = [*channels]
    for answer in answers:
        gone += [keys.TEAM.key(answer.id), keys.TEAM_USED.key(answer.id), *index_keys(answer)]
    if gone:  # through the resilient store: a stand-in's copies go too
        await deps.store.batch([Op.delete(k) for k in gone])
    drafts = sum(a.status == "draft" for a in answers)
    logger.info(
        "installation %s forgotten: %d channel settings, %d team answers, %d drafts",
        key,
        len(channels),
        len(answers) - drafts,
        drafts,
    )
