"""The agent view's suggested prompts: when someone opens the bot's Messages tab, set them
for that DM with `assistant.threads.setSuggestedPrompts` — `channel_id` only: in the agent
view a `thread_ts` makes Slack answer ok and show nothing.

At most once per person per Pacific day (the quota's day): the claim
`prompts:<user>:<day>` (TTL one day) is taken before the call, and given back when the call
fails so the next opening tries again.
"""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import keys
from bot.quota import pacific_day
from bot.render import PROMPTS_TITLE, suggested_prompts
from bot.slack.boundary import Outcome
from bot.slack.deps import SlackDeps
from bot.slack.failures import SLACK_CALL_FAILURES
from bot.store import TEXT

logger = logging.getLogger(__name__)

PROMPTS_CLAIM_SECONDS = 86_400.0


async def set_prompts(
    deps: SlackDeps, client: AsyncWebClient, *, user: str, channel: str
) -> Outcome:
    """Suggested prompts in `user`'s DM `channel`, unless they had them today."""
    key = keys.PROMPTS.key(user, pacific_day(deps.clock()))
    if not await deps.store.add(key, channel, TEXT, PROMPTS_CLAIM_SECONDS):
        return Outcome(route="prompts", outcome="already_today")
    prompts = [{"title": p["title"], "message": p["message"]} for p in suggested_prompts()]
    try:
        await client.assistant_threads_setSuggestedPrompts(
            channel_id=channel, prompts=prompts, title=PROMPTS_TITLE
        )
    except SLACK_CALL_FAILURES as exc:
        why = exc.response.get("error") if isinstance(exc, SlackApiError) else type(exc).__name__
        logger.warning("suggested prompts not set: %s", why)
        await deps.store.delete_if(key, channel, TEXT)
        return Outcome(route="prompts", outcome="failed")
    return Outcome(route="prompts", outcome="ok")
