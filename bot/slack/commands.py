"""`/gdocs …`: answers in the channel, everything else ephemeral to the asker."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack import flows
from bot.slack.context import BotContext
from bot.slack.guard import RequestRecord, guarded
from bot.slack.manifest_facts import COMMANDS
from bot.slack.replies import CommandReply
from bot.slack.routing import clean_text, route_text


def register(app: AsyncApp, ctx: BotContext) -> None:
    async def on_command(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        await handle_command(ctx, client, body)

    for command in COMMANDS:
        app.command(command)(on_command)


async def handle_command(ctx: BotContext, client: AsyncWebClient, body: dict[str, Any]) -> None:
    text = body.get("text") if isinstance(body.get("text"), str) else ""
    command = str(body.get("command") or COMMANDS[0])
    reply = CommandReply(
        client,
        channel=body.get("channel_id"),
        user=body.get("user_id"),
        response_url=body.get("response_url"),
    )

    async def work(record: RequestRecord) -> None:
        settings = ctx.settings
        route = route_text(
            text or "",
            answer_min_words=settings.answer_min_words,
            route_pay_questions=settings.route_pay_questions,
        )
        await flows.answer(
            ctx,
            client,
            reply,
            route,
            record,
            question=clean_text(text or ""),
            name_asker=True,
            command=command,
        )

    await guarded(ctx, "command", work, reply.notice)
