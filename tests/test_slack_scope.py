"""Product scope per channel and per question (issue 41, item 3), over signed HTTP against
the recording fake Slack: with DEVELOPER_KNOWLEDGE_API=rest a channel's `products` and a
question's `in:` reach Developer Knowledge's REST fake as its `filter` and are said on the
answer; on the default MCP backend they get one line naming the setting, and a channel's
stored products are said not to apply rather than dropped silently."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from bot.channels import ChannelSettings
from bot.report import collect
from tests.fakes.dk_rest import FakeDeveloperKnowledgeRest
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.slack_harness import API_KEY, ASKER, SlackBot, rest_bot, running_bot

pytestmark = pytest.mark.timeout(60)

QUESTION = "how do I add sign-in to my app?"
FIREBASE_FILTER = 'data_source = "firebase.google.com"'
PAGES = [
    ("documents/firebase.google.com/docs/auth", "Firebase Authentication"),
    ("documents/developer.android.com/identity/sign-in", "Sign in on Android"),
    ("documents/docs.cloud.google.com/identity-platform/docs", "Identity Platform"),
]
SCOPE_LINE = "Firebase docs only · change with `/gdocs channel products`"


@pytest.fixture
def rest_server() -> Iterator[FakeDeveloperKnowledgeRest]:
    server = FakeDeveloperKnowledgeRest()
    server.api_key = API_KEY
    for name, title in PAGES:
        server.add_document(name, title, f"# {title}\n\nAdd sign-in to your app.")
    server.start()
    yield server
    server.stop()


def told(bot: SlackBot, key: str | None) -> str:
    """What the asker of a command was told (ack and response_url), as one string."""
    assert key is not None
    return json.dumps(bot.fake.responses_to(key), ensure_ascii=False)


def posted(bot: SlackBot) -> str:
    return json.dumps(
        [[c.args.get("text"), c.args.get("blocks")] for c in bot.fake.calls_to("chat.postMessage")],
        ensure_ascii=False,
    )


def filters(rest: FakeDeveloperKnowledgeRest) -> list[tuple[str, str | None]]:
    return [(r.route, r.filter) for r in rest.requests if r.route != "batchGet"]


async def test_a_channel_limited_to_firebase_sends_the_filter_and_says_so_on_the_answer(
    rest_server: FakeDeveloperKnowledgeRest,
) -> None:
    """`/gdocs channel products firebase` posts who limited the channel; a mention there is
    asked of Firebase's pages only (answer and search alike) and its answer says so."""
    async with rest_bot(rest_server) as bot:
        sent = await bot.command("channel products firebase")
        await bot.finished(1)
        assert "limited my answers here to Firebase docs" in posted(bot)
        assert "Products" not in told(bot, sent.key)

        await bot.mention(QUESTION)
        await bot.mention("firebase auth")  # a keyword lookup: search
        assert [("mention", "ok"), ("mention", "ok")] == (await bot.finished(3))[1:]
        assert [("answerQuery", FIREBASE_FILTER), ("searchDocumentChunks", FIREBASE_FILTER)] == (
            filters(rest_server)
        )
        [_, answer, found] = bot.fake.calls_to("chat.postMessage")
        assert SCOPE_LINE in json.dumps(answer.args["blocks"], ensure_ascii=False)
        assert SCOPE_LINE in json.dumps(found.args["blocks"], ensure_ascii=False)
        assert "developer.android.com" not in json.dumps(answer.args["blocks"])


async def test_every_way_of_asking_in_a_scoped_channel_is_limited_to_its_products(
    rest_server: FakeDeveloperKnowledgeRest,
) -> None:
    """An answer channel's top-level question, a follow-up in the bot's thread, `/gdocs`
    in the channel and the message shortcut all take the channel's products."""
    async with rest_bot(rest_server) as bot:
        await bot.command("channel auto")
        await bot.command("channel products firebase")
        await bot.finished(2)
        await bot.channel_message(QUESTION)
        await bot.finished(3)
        root = bot.fake.calls_to("chat.postMessage")[-1].args["thread_ts"]
        await bot.channel_message(
            "and what about it on the web?", thread_ts=root, parent_user_id=ASKER
        )
        await bot.command("how do I sign users out of my app?")
        await bot.message_shortcut("how do I link two sign-in providers?", author="UCOLLEAGUE")
        outcomes = await bot.finished(6)
        assert ["ok"] * 4 == [outcome for _, outcome in outcomes[2:]]
        assert [FIREBASE_FILTER] * 4 == [f for _, f in filters(rest_server)]


async def test_a_questions_own_in_wins_over_the_channels_products(
    rest_server: FakeDeveloperKnowledgeRest,
) -> None:
    """In a Firebase channel, `/gdocs in:android …` is asked of Android's pages and says
    only that; `in:all` is asked of every product, with no scope line."""
    async with rest_bot(rest_server) as bot:
        await bot.command("channel products firebase")
        await bot.command(f"in:android {QUESTION}")
        await bot.command(f"in:all {QUESTION}")
        await bot.finished(3)
        assert [
            ("answerQuery", 'data_source = "developer.android.com"'),
            ("answerQuery", None),
        ] == filters(rest_server)
        [_, android, every] = bot.fake.calls_to("chat.postMessage")
        assert "Android docs only" in json.dumps(android.args["blocks"], ensure_ascii=False)
        assert "docs only" not in json.dumps(every.args["blocks"], ensure_ascii=False)
        assert "change with" not in posted(bot)


async def test_a_follow_up_keeps_the_products_its_threads_question_named(
    rest_server: FakeDeveloperKnowledgeRest,
) -> None:
    """A thread started with `in:firebase …` (in a channel with no products) stays with
    Firebase's pages on its follow-ups, unless one names its own."""
    async with rest_bot(rest_server) as bot:
        await bot.mention(f"in:firebase {QUESTION}")
        await bot.finished(1)
        root = bot.fake.calls_to("chat.postMessage")[-1].args["thread_ts"]
        await bot.channel_message(
            "and what about it on the web?", thread_ts=root, parent_user_id=ASKER
        )
        await bot.finished(2)
        await bot.channel_message(
            "in:all and what about it on iOS?", thread_ts=root, parent_user_id=ASKER
        )
        assert ["ok"] * 3 == [outcome for _, outcome in await bot.finished(3)]
        assert [FIREBASE_FILTER, FIREBASE_FILTER, None] == [f for _, f in filters(rest_server)]
        [_, follow_up, _] = bot.fake.calls_to("chat.postMessage")
        assert "Firebase docs only" in json.dumps(follow_up.args["blocks"], ensure_ascii=False)


async def test_an_unknown_product_is_refused_with_the_known_names_and_nothing_is_asked(
    rest_server: FakeDeveloperKnowledgeRest,
) -> None:
    async with rest_bot(rest_server) as bot:
        sent = await bot.command(f"in:firestore {QUESTION}")
        changed = await bot.command("channel products firestore")
        await bot.finished(2)
        assert "I don't know the product “firestore”: try `cloud`, `firebase`" in told(
            bot, sent.key
        )
        assert "Nothing was changed." in told(bot, changed.key)
        assert [] == rest_server.requests
        assert [] == bot.fake.calls_to("chat.postMessage")


async def test_channel_products_follow_the_admins_only_rule(
    rest_server: FakeDeveloperKnowledgeRest,
) -> None:
    async with rest_bot(rest_server, channel_settings_admins_only=True) as bot:
        bot.fake.admins.add("UADMIN1")
        refused = await bot.command("channel products firebase")
        await bot.finished(1)
        assert "Only workspace admins and owners" in told(bot, refused.key)
        assert () == (await bot.deps.channels.get("C1")).products
        await bot.command("channel products firebase", user="UADMIN1")
        await bot.finished(2)
        assert ("firebase.google.com",) == (await bot.deps.channels.get("C1")).products


# --- the default MCP backend -------------------------------------------------------------------
async def test_on_mcp_channel_products_are_refused_naming_the_setting_and_not_stored(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    async with running_bot(dk_server) as bot:
        sent = await bot.command("channel products firebase")
        assert [("command", "refused")] == await bot.finished(1)
        said = told(bot, sent.key)
        assert "needs the bot's REST setting (DEVELOPER_KNOWLEDGE_API=rest)" in said
        assert "Nothing was changed." in said
        assert () == (await bot.deps.channels.get("C1")).products
        assert [] == bot.fake.calls_to("chat.postMessage")


async def test_on_mcp_a_questions_in_gets_the_one_line_refusal_and_no_call(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    async with running_bot(dk_server) as bot:
        sent = await bot.command(f"in:firebase {QUESTION}")
        await bot.finished(1)
        assert (
            "Limiting answers to products needs the bot's REST setting "
            "(DEVELOPER_KNOWLEDGE_API=rest): ask whoever runs the bot."
        ) in told(bot, sent.key)
        assert [] == dk_server.calls
        assert [] == bot.fake.calls_to("chat.postMessage")


async def test_on_mcp_a_channels_stored_products_are_said_not_to_apply(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A channel scoped while the bot ran REST, now on MCP: its mention is answered from all
    products, and the answer's head says the channel's limit was not applied."""
    async with running_bot(dk_server) as bot:
        await bot.deps.channels.save("C1", ChannelSettings(products=("firebase.google.com",)))
        await bot.mention(QUESTION)
        assert [("mention", "ok")] == await bot.finished(1)
        assert "answer_query" in [c.tool for c in dk_server.calls]
        [answer] = bot.fake.calls_to("chat.postMessage")
        head = json.dumps(answer.args["blocks"][:2], ensure_ascii=False)
        assert "Answered from all products: this channel's limit to Firebase needs" in head
        assert "Firebase docs only" not in head


async def test_a_scoped_question_is_kept_with_its_products_for_home_and_the_report(
    rest_server: FakeDeveloperKnowledgeRest,
) -> None:
    """Home's recent questions keep the products; the report counts the question under
    them (by names, nothing of the asker or the text); an unscoped one adds no counter."""
    async with rest_bot(rest_server) as bot:
        await bot.command(f"in:firebase {QUESTION}")
        await bot.command("how do I sign users out of my app?")
        await bot.finished(2)
        recent = await bot.deps.recent.of(ASKER)
        assert [(), ("firebase.google.com",)] == [a.scope for a in recent]
        counters = (await collect(bot.deps.store)).counters
        assert [("scope:firebase", 1)] == [(n, c) for _, n, c in counters if "scope" in n]


@pytest.mark.parametrize(
    "typed",
    [
        "in:firebase doc https://firebase.google.com/docs/auth",
        "in:firebase pay google wallet passes",
    ],
)
async def test_a_page_or_pay_asked_with_in_is_told_they_are_not_limited(
    rest_server: FakeDeveloperKnowledgeRest, typed: str
) -> None:
    async with rest_bot(rest_server) as bot:
        sent = await bot.command(typed)
        await bot.finished(1)
        assert "`in:` limits questions and searches, not whole pages or Pay's docs" in told(
            bot, sent.key
        )
        assert [] == rest_server.requests
