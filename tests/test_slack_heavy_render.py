"""Heavy renders never hold the acknowledgements, over signed HTTP: an answer with a
20,000-backtick run and a long document with one are both delivered, and every command sent
while they are fetched and rendered is acknowledged within a second (Slack allows 3)."""

from __future__ import annotations

import asyncio
import json
import threading

import aiohttp

from bench.render_corpus import corpus
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.slack_harness import SlackBot, running_bot
from tests.slack_requests import SlackRequests

RUN = "`" * 20_000
HEAVY_DOC = "documents/docs.cloud.google.com/storage/docs/markdown-about-markdown"
#: answered (and rendered) meanwhile: small commands whose ack is what Slack times
ACK_BUDGET_SECONDS = 1.0


def _heavy_server(dk: FakeDeveloperKnowledge) -> None:
    dk.answers["how do I quote backticks?"] = (f"Use this: x {RUN} y", [HEAVY_DOC])
    cases = corpus()
    names = ("mixed_delimiters", "huge_table", "strong_openers", "backtick_pairs") * 2
    body = "\n\n".join(cases[name] for name in names)  # ~0.9 MB: seconds of CPU to page
    content = f"A run: {RUN} and on.\n\n{body}"
    dk.add_document(HEAVY_DOC, "About Markdown", content)


def _acks_meanwhile(bot: SlackBot, done: threading.Event) -> list[float]:
    """Send `/gdocs help` every 50 ms until `done`, from another thread and event loop (so
    a blocked bot loop cannot hold the sender too); how long each acknowledgement took."""

    async def probe() -> list[float]:
        client = SlackRequests(bot.fake, bot.url)
        elapsed: list[float] = []
        async with aiohttp.ClientSession() as session:
            client._session = session
            while not done.is_set():
                sent = await client.command("help", key=f"probe{len(elapsed)}")
                assert 200 == sent.status
                elapsed.append(sent.elapsed)
                await asyncio.sleep(0.05)
        return elapsed

    return asyncio.run(probe())


async def test_heavy_answer_and_page_are_delivered_while_other_commands_are_acked_at_once(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Both heavy messages arrive; each command sent meanwhile got its ack within 1 s."""
    _heavy_server(dk_server)
    # paged, not uploaded as a file: every page of the long document is rendered to be cut
    async with running_bot(dk_server, doc_file_threshold_chars=1_000_000) as bot:
        done = threading.Event()
        probes = asyncio.create_task(asyncio.to_thread(_acks_meanwhile, bot, done))
        answer = await bot.command("how do I quote backticks?")
        page = await bot.command(f"doc {HEAVY_DOC}")
        posts = await bot.fake.await_calls("chat.postMessage", 2, timeout=60)
        done.set()
        elapsed = await probes
        await bot.finished(2 + len(elapsed), within=60)

    assert (200, 200) == (answer.status, page.status)
    shown = [json.dumps(post.args, ensure_ascii=False) for post in posts]
    assert any("Use this: x `" in text and text.count("`") >= 2000 for text in shown)
    assert any("Page 1 of" in text and text.count("`") >= 2000 for text in shown)
    assert elapsed, "no command was sent while the heavy ones were handled"
    assert max(elapsed) < ACK_BUDGET_SECONDS, elapsed
    assert [] == bot.fake.invalid_payloads
