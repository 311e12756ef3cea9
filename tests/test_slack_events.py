"""Mentions, direct messages, ignored messages, duplicate deliveries and Socket Mode."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from tests.fakes.mcp_servers import FakeDeveloperKnowledge, Fault
from tests.fakes.slack_api import BOT_ID, BOT_USER_ID
from tests.slack_harness import ASKER, running_bot


def shown(args: dict[str, Any]) -> str:
    return json.dumps([args.get("text", ""), args.get("blocks", [])], ensure_ascii=False)


async def test_mention_in_a_channel_is_answered_in_a_thread_under_it(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """`@gdocs question` gets its answer as a reply to the mention, with a progress reaction."""
    async with running_bot(dk_server) as bot:
        sent = await bot.mention("how do I create a bucket?", ts="1710000000.000100")
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)

        assert 200 == sent.status
        assert ("C1", "1710000000.000100") == (post.args["channel"], post.args["thread_ts"])
        assert "show_doc:1" in shown(post.args)
        assert "answer_query" == dk_server.calls[0].tool
        assert "how do I create a bucket?" == dk_server.calls[0].arguments["query"]
        added = bot.fake.calls_to("reactions.add")[0].args
        removed = bot.fake.calls_to("reactions.remove")[0].args
        assert added == removed
        assert "1710000000.000100" == added["timestamp"]
        assert [] == bot.fake.invalid_payloads


async def test_mention_is_acknowledged_before_a_slow_answer(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Slack gets its 200 for a mention while the upstream is still working; the answer
    comes later in the thread."""
    dk_server.latency = 1.0
    async with running_bot(dk_server) as bot:
        sent = await bot.mention("how do I list buckets?", ts="1710000000.000150")
        posted_when_acked = len(bot.fake.calls_to("chat.postMessage"))
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)

        assert (200, 0) == (sent.status, posted_when_acked)
        assert "1710000000.000150" == post.args["thread_ts"]


async def test_mention_inside_a_thread_is_answered_in_that_thread(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A mention in a thread replies in the same thread, not under the mention."""
    async with running_bot(dk_server) as bot:
        await bot.mention(
            "firestore pricing", ts="1710000000.000200", thread_ts="1710000000.000001"
        )
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)

        assert "1710000000.000001" == post.args["thread_ts"]
        assert "search_documents" == dk_server.calls[0].tool


async def test_follow_up_mention_carries_the_threads_question(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """ "what about in Go?" in the thread of an answer is asked with the earlier question."""
    async with running_bot(dk_server) as bot:
        await bot.mention("how do I create a bucket?", ts="1710000000.000300")
        await bot.finished(1)
        await bot.mention(
            "what about in Go?", ts="1710000000.000301", thread_ts="1710000000.000300"
        )
        await bot.mention(
            "what is Cloud Run?", ts="1710000000.000302", thread_ts="1710000000.000300"
        )
        await bot.finished(3)

        asked = [c.arguments["query"] for c in dk_server.tool_calls("answer_query")]
        assert [
            "how do I create a bucket?",
            "how do I create a bucket? — follow-up: what about in Go?",
            "what is Cloud Run?",
        ] == asked


async def test_follow_up_in_the_thread_of_a_command_answer_uses_the_command_question(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A /gdocs answer starts a thread; a follow-up mention there knows what it was about."""
    async with running_bot(dk_server) as bot:
        await bot.command("how do I create a bucket?")
        [answer] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)
        answer_ts = answer.result["ts"]
        assert "C1" == answer.args["channel"]
        await bot.mention("and in Java?", ts="1710000000.000401", thread_ts=answer_ts)
        await bot.finished(2)

        assert (
            "how do I create a bucket? — follow-up: and in Java?"
            == (dk_server.tool_calls("answer_query")[-1].arguments["query"])
        )


async def test_direct_message_is_answered_in_the_dm(dk_server: FakeDeveloperKnowledge) -> None:
    """A DM gets the same routing as /gdocs text, answered in the DM itself."""
    async with running_bot(dk_server) as bot:
        await bot.dm("firestore pricing", channel="D42")
        await bot.dm("help", channel="D42")
        await bot.finished(2)
        usage, search = sorted(
            bot.fake.calls_to("chat.postMessage"), key=lambda c: "Usage" not in c.args["text"]
        )

        assert ("D42", None) == (search.args["channel"], search.args.get("thread_ts"))
        assert "Cloud Firestore pricing" in shown(search.args)
        assert "/gdocs search" in shown(usage.args)
        assert ["search_documents"] == [
            c.tool for c in dk_server.calls if c.tool != "get_documents"
        ]
        assert [] == bot.fake.invalid_payloads


async def test_direct_message_doc_request_posts_the_document(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """`doc <URL>` works in a DM too."""
    async with running_bot(dk_server) as bot:
        await bot.dm("doc https://firebase.google.com/docs/firestore/pricing", channel="D42")
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)
        assert "Firestore bills reads" in shown(post.args)


async def test_bots_edits_and_own_messages_are_ignored(dk_server: FakeDeveloperKnowledge) -> None:
    """Only a person's new message is answered: no loops with ourselves or other bots."""
    async with running_bot(dk_server) as bot:
        base = {
            "type": "message",
            "channel_type": "im",
            "channel": "D1",
            "text": "how do buckets work?",
        }
        ignored = [
            {**base, "user": BOT_USER_ID, "ts": "1.1"},
            {**base, "bot_id": BOT_ID, "ts": "1.2"},
            {**base, "user": "UOTHERBOT", "bot_id": "B999", "ts": "1.3"},
            {**base, "user": ASKER, "subtype": "message_changed", "ts": "1.4"},
            {**base, "subtype": "bot_message", "ts": "1.5"},
            {**base, "user": ASKER, "subtype": "channel_join", "ts": "1.6"},
            {**base, "user": ASKER, "ts": "1.7", "channel_type": "channel"},
        ]
        statuses = [(await bot.event(event)).status for event in ignored]
        await bot.dm("firestore pricing")  # a real one, to know the others were dropped
        await bot.fake.await_calls("chat.postMessage")
        # Bolt drops our own two before any listener; the other five are acked and ignored
        # (the top-level channel message by the follow-up listener)
        outcomes = await bot.finished(6)

        assert [200] * len(ignored) == statuses
        assert 4 == outcomes.count(("dm", "ignored"))
        assert 1 == outcomes.count(("thread", "ignored"))
        assert 1 == len(bot.fake.calls_to("chat.postMessage"))
        assert ["search_documents"] == [
            c.tool for c in dk_server.calls if c.tool != "get_documents"
        ]


async def test_mention_by_another_bot_is_ignored(dk_server: FakeDeveloperKnowledge) -> None:
    """A bot mentioning us does not start a conversation."""
    async with running_bot(dk_server) as bot:
        event = {
            "type": "app_mention",
            "user": "UOTHERBOT",
            "bot_id": "B999",
            "text": f"<@{BOT_USER_ID}> how do buckets work?",
            "ts": "1710000000.000500",
            "channel": "C1",
        }
        assert 200 == (await bot.event(event)).status
        assert [("mention", "ignored")] == await bot.finished(1)
        assert ([], []) == (dk_server.calls, bot.fake.calls_to("chat.postMessage"))


async def test_retried_and_repeated_events_are_answered_once(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Slack's retries (X-Slack-Retry-Num) and repeated event ids give one answer."""
    async with running_bot(dk_server) as bot:
        event = {
            "type": "app_mention",
            "user": ASKER,
            "text": f"<@{BOT_USER_ID}> firestore pricing",
            "ts": "1710000000.000600",
            "channel": "C1",
        }
        statuses = [
            (await bot.event(event, event_id="Ev0DUPE")).status,
            (await bot.event(event, event_id="Ev0DUPE", retry_num=1)).status,
            (await bot.event(event, event_id="Ev0DUPE", retry_num=2)).status,
        ]
        outcomes = await bot.finished(3)

        assert [200, 200, 200] == statuses
        assert 2 == outcomes.count(("dedupe", "duplicate"))
        assert 1 == len(bot.fake.calls_to("chat.postMessage"))


async def test_repeated_command_delivery_is_answered_once(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The same slash command delivered twice (same trigger id) is answered once."""
    async with running_bot(dk_server) as bot:
        body, _ = bot.command_body("firestore pricing")
        for _ in range(2):
            sent = await bot.post_signed(body, content_type="application/x-www-form-urlencoded")
            assert 200 == sent.status
        outcomes = await bot.finished(2)

        assert [("dedupe", "duplicate")] == [o for o in outcomes if o[0] == "dedupe"]
        assert 1 == len(bot.fake.calls_to("chat.postMessage"))


async def test_url_verification_echoes_the_challenge(dk_server: FakeDeveloperKnowledge) -> None:
    """Slack's Request URL check gets its challenge back."""
    async with running_bot(dk_server) as bot:
        body = json.dumps({"token": "t", "challenge": "c-123", "type": "url_verification"})
        sent = await bot.post_signed(body, content_type="application/json")
        assert (200, "c-123") == (sent.status, json.loads(sent.body)["challenge"])


async def test_socket_mode_requests_are_dispatched_without_signatures(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Socket Mode payloads (unsigned, already parsed) reach the same listeners."""
    async with running_bot(dk_server, slack_app_token="xapp-1-test") as bot:
        command, key = bot.command_body("firestore pricing")
        command_response = await bot.socket_mode(dict(parse_qsl(command)))
        event_response = await bot.socket_mode(
            json.loads(bot.event_body({
                "type": "app_mention", "user": ASKER, "channel": "C1", "ts": "1710000000.000700",
                "text": f"<@{BOT_USER_ID}> how do I create a bucket?",
            }))
        )  # fmt: skip
        await bot.finished(2)

        assert (200, 200) == (command_response.status, event_response.status)
        posts = bot.fake.calls_to("chat.postMessage")
        assert {None, "1710000000.000700"} == {p.args.get("thread_ts") for p in posts}
        assert "Looking that up…" == json.loads(command_response.body)["text"]  # progress…
        [deleted] = bot.fake.responses_to(key)  # …then deleted
        assert deleted.get("delete_original") is True
        assert [] == bot.fake.invalid_payloads


async def test_upstream_failure_on_a_mention_is_a_short_reply_in_the_thread(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """When the docs server is down the thread gets a short reason and the hourglass goes."""
    dk_server.faults.extend(Fault(status=503) for _ in range(4))
    async with running_bot(dk_server, mcp_max_retries=1) as bot:
        await bot.mention("how do I create a bucket?", ts="1710000000.000800")
        [post] = await bot.fake.await_calls("chat.postMessage")
        outcomes = await bot.finished(1)

        assert "1710000000.000800" == post.args["thread_ts"]
        assert "isn't answering right now" in post.args["text"].lower()
        assert "Traceback" not in post.args["text"]
        assert len(post.args["text"]) < 300
        assert [("mention", "unavailable")] == outcomes
        assert 1 == len(bot.fake.calls_to("reactions.remove"))


async def test_rate_limited_mention_is_told_privately_in_the_thread(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Over the limit, a mention gets an ephemeral wait message instead of a public reply."""
    async with running_bot(dk_server, rate_limit_per_user_per_minute=1) as bot:
        await bot.mention("firestore pricing", ts="1710000000.000900")
        await bot.mention("bucket naming", ts="1710000000.000901")
        await bot.finished(2)
        [note] = bot.fake.calls_to("chat.postEphemeral")

        assert (ASKER, "1710000000.000901") == (note.args["user"], note.args["thread_ts"])
        assert note.args["text"].startswith("You've asked 1 questions in the last minute")
        assert 1 == len(bot.fake.calls_to("chat.postMessage"))
