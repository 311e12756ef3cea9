"""What the quota's end-to-end tests share: the clock's start, the 429 forms, and asking the
running bot a question and reading what the channel shows."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.quota import Form
from tests.slack_harness import ASKER, SlackBot

#: 09:00 in Los Angeles, 18:00 in Rome: the next Pacific midnight is 09:00 tomorrow in Rome
T0 = datetime(2026, 12, 1, 17, 0, tzinfo=UTC)
FORMS: list[Form] = ["http", "jsonrpc", "result"]
ROME = "Europe/Rome"
OTHER = "UOTHER1"
#: how a note names the server's per-minute limit: its size is in the 429's details, which a
#: tool error (the "result" form) does not carry
SERVER_MINUTE = {
    "http": "{} answers a minute are in use",
    "jsonrpc": "{} answers a minute are in use",
    "result": "The per-minute limit for generated answers is reached",
}
#: the per-person rate limit works on real time; these tests are about answer_query's quota
NO_RATE_LIMIT = {"rate_limit_per_user_per_minute": 0}


@dataclass
class Shown:
    """One question's answer as the channel sees it."""

    #: "answer" (generated) or "search" (documentation pages)
    kind: str
    #: the note above search results ("" when there is none)
    note: str
    text: str


def shown_in(args: dict[str, Any]) -> Shown:
    blocks = args.get("blocks") or []
    text = json.dumps([args.get("text", ""), blocks], ensure_ascii=False)
    notes = [
        element.get("text", "")
        for block in blocks
        if block.get("type") == "context"
        for element in block.get("elements", [])
        if "generated answer" in element.get("text", "").lower()
    ]
    kind = "answer" if "Here is how" in text else "search"
    return Shown(kind=kind, note=" ".join(notes), text=text)


async def ask(bot: SlackBot, question: str, *, user: str = ASKER) -> Shown:
    """Send `/gdocs <question>` and wait until it is answered; what the channel shows."""
    finished = len(bot.metrics.finished)
    await bot.command(question, user=user)
    await bot.finished(finished + 1)
    posts = [
        c.args
        for c in bot.fake.calls_to("chat.postMessage")
        if question in json.dumps(c.args.get("blocks") or [], ensure_ascii=False)
    ]
    assert posts, f"no answer posted for {question!r}"
    return shown_in(posts[-1])


def answer_calls(dk: FakeDeveloperKnowledge) -> int:
    """answer_query calls that reached the server (refused ones included)."""
    return len(dk.tool_calls("answer_query"))
