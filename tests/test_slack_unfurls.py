"""Link previews end to end: `link_shared` → one get_documents call for the message's
documentation links → `chat.unfurl` with the pages' titles, descriptions and Show full doc;
unknown pages and outages stay silent; answer_query is never used."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fakes.mcp_servers import FakeDeveloperKnowledge, Fault
from tests.slack_harness import SlackBot, running_bot

BUCKETS_URL = "https://docs.cloud.google.com/storage/docs/creating-buckets"
BUCKETS = "documents/docs.cloud.google.com/storage/docs/creating-buckets"
PRICING_URL = "https://firebase.google.com/docs/firestore/pricing?hl=en#reads"
PRICING = "documents/firebase.google.com/docs/firestore/pricing"
UNKNOWN_URL = "https://developer.android.com/guide/no-such-page"
UNKNOWN = "documents/developer.android.com/guide/no-such-page"
POSTED_TS = "1710000300.000100"
SAYING = ("chat.postMessage", "chat.postEphemeral", "chat.update")


@pytest.fixture
def described(dk_server: FakeDeveloperKnowledge) -> FakeDeveloperKnowledge:
    """The DK fake's two pages, the buckets one with a description."""
    doc = dk_server.documents[BUCKETS]
    doc["description"] = "Create a bucket with gcloud <or> the console & more."
    return dk_server


def batches(server: FakeDeveloperKnowledge) -> list[list[str]]:
    """The names of each get_documents call, in order."""
    return [list(c.arguments["names"]) for c in server.tool_calls("get_documents")]


def said_anything(bot: SlackBot) -> list[str]:
    return [c.method for c in bot.fake.calls if c.method in SAYING]


async def test_three_links_two_known_get_two_previews_from_one_batch(
    described: FakeDeveloperKnowledge,
) -> None:
    """All three names go out in one get_documents call; its NOT_FOUND is narrowed down by
    halves ([both known] ok, [the unknown] not found: 3 calls in all); one chat.unfurl on the
    posted message carries the two known pages and nothing for the unknown one."""
    async with running_bot(described) as bot:
        sent = await bot.link_shared(
            [BUCKETS_URL, PRICING_URL, UNKNOWN_URL], channel="C7", message_ts=POSTED_TS
        )
        [call] = await bot.fake.await_calls("chat.unfurl")
        await bot.finished(1)
        unfurls = call.args["unfurls"]

        assert 200 == sent.status
        assert [[BUCKETS, PRICING, UNKNOWN], [BUCKETS, PRICING], [UNKNOWN]] == batches(described)
        assert ("C7", POSTED_TS) == (call.args["channel"], call.args["ts"])
        assert "unfurl_id" not in call.args
        assert {BUCKETS_URL, PRICING_URL} == set(unfurls)
        bucket = json.dumps(unfurls[BUCKETS_URL], ensure_ascii=False)
        assert f"<{BUCKETS_URL}|Create buckets>" in bucket
        assert "Create a bucket with gcloud &lt;or&gt; the console &amp; more." in bucket
        assert '"value": "documents/docs.cloud.google.com/storage/docs/creating-buckets"' in bucket
        assert "Show full doc" in bucket
        assert [] == described.tool_calls("answer_query")
        assert [] == said_anything(bot)
        assert [] == bot.fake.invalid_payloads


async def test_the_same_links_again_cost_no_upstream_call(
    described: FakeDeveloperKnowledge,
) -> None:
    """Pages are cached and an unknown one is remembered: the second paste previews the same
    two pages without calling get_documents."""
    async with running_bot(described) as bot:
        links = [BUCKETS_URL, PRICING_URL, UNKNOWN_URL]
        await bot.link_shared(links, message_ts=POSTED_TS)
        await bot.finished(1)
        calls_before = len(batches(described))
        await bot.link_shared(links, message_ts="1710000300.000200")
        second = (await bot.fake.await_calls("chat.unfurl", 2))[1]
        await bot.finished(2)

        assert calls_before == len(batches(described))
        assert {BUCKETS_URL, PRICING_URL} == set(second.args["unfurls"])


async def test_known_links_alone_take_exactly_one_call(described: FakeDeveloperKnowledge) -> None:
    """No unknown page: one get_documents call with both names (the same page linked twice
    is asked once, and previewed under each URL)."""
    async with running_bot(described) as bot:
        again = BUCKETS_URL + "#console"
        await bot.link_shared([BUCKETS_URL, PRICING_URL, again], message_ts=POSTED_TS)
        [call] = await bot.fake.await_calls("chat.unfurl")
        await bot.finished(1)

        assert [[BUCKETS, PRICING]] == batches(described)
        assert {BUCKETS_URL, PRICING_URL, again} == set(call.args["unfurls"])


async def test_a_composer_preview_is_unfurled_by_its_unfurl_id(
    described: FakeDeveloperKnowledge,
) -> None:
    """A link typed into the message box: chat.unfurl with unfurl_id and source "composer"."""
    async with running_bot(described) as bot:
        await bot.link_shared([BUCKETS_URL], source="composer", unfurl_id="UNF-draft-1")
        [call] = await bot.fake.await_calls("chat.unfurl")
        await bot.finished(1)

        assert ("UNF-draft-1", "composer") == (call.args["unfurl_id"], call.args["source"])
        assert "ts" not in call.args
        assert [BUCKETS_URL] == list(call.args["unfurls"])
        assert [] == bot.fake.invalid_payloads


async def test_an_upstream_outage_means_no_preview_and_no_message() -> None:
    """Nothing answers at the documentation server: no chat.unfurl and nothing posted."""
    async with running_bot(None) as bot:
        await bot.link_shared([BUCKETS_URL, PRICING_URL], message_ts=POSTED_TS)
        [outcome] = await bot.finished(1)

        assert ("unfurl", "unavailable") == outcome
        assert [] == bot.fake.calls_to("chat.unfurl")
        assert [] == said_anything(bot)


async def test_a_server_error_on_the_batch_means_no_preview(
    described: FakeDeveloperKnowledge,
) -> None:
    """Any failure other than NOT_FOUND (here a 403): no preview, no narrowing, no message."""
    described.faults.append(
        Fault(
            status=403,
            body=b'{"error": {"code": 403, "message": "denied", "status": "PERMISSION_DENIED"}}',
            tool="get_documents",
        )
    )
    async with running_bot(described) as bot:
        await bot.link_shared([BUCKETS_URL, UNKNOWN_URL], message_ts=POSTED_TS)
        await bot.finished(1)

        assert [[BUCKETS, UNKNOWN]] == batches(described)
        assert [] == bot.fake.calls_to("chat.unfurl")
        assert [] == said_anything(bot)


async def test_only_unknown_or_non_documentation_links_stay_silent(
    described: FakeDeveloperKnowledge,
) -> None:
    """A site's front page costs no call; an unknown page a call and a NOT_FOUND; neither
    gets a preview or a message."""
    async with running_bot(described) as bot:
        await bot.link_shared(["https://developers.google.com/"], message_ts=POSTED_TS)
        await bot.link_shared([UNKNOWN_URL], message_ts="1710000300.000300")
        outcomes = await bot.finished(2)

        assert {("unfurl", "no_docs"), ("unfurl", "not_found")} == set(outcomes)
        assert [[UNKNOWN]] == batches(described)
        assert [] == bot.fake.calls_to("chat.unfurl")
        assert [] == said_anything(bot)


async def test_a_previews_show_full_doc_brings_the_page_into_the_thread(
    described: FakeDeveloperKnowledge,
) -> None:
    """The preview's button is the answer's own: clicking it posts the page in a thread under
    the message that had the link."""
    async with running_bot(described) as bot:
        await bot.link_shared([BUCKETS_URL], channel="C7", message_ts=POSTED_TS)
        [call] = await bot.fake.await_calls("chat.unfurl")
        await bot.finished(1)
        button = _button(call.args["unfurls"][BUCKETS_URL])
        await bot.action(
            {k: button[k] for k in ("action_id", "type", "value")},
            channel="C7",
            message_ts=POSTED_TS,
        )
        [page] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(2)

        assert ("C7", POSTED_TS) == (page.args["channel"], page.args["thread_ts"])
        assert "gcloud storage buckets create" in json.dumps(page.args["blocks"])


def _button(unfurl: dict[str, Any]) -> dict[str, Any]:
    [button] = [
        element
        for block in unfurl["blocks"]
        if block["type"] == "actions"
        for element in block["elements"]
    ]
    return button
