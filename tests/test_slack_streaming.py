"""Threaded answers streamed (issue 24), over signed HTTP against the recording fake Slack:
chat.startStream in the reply's thread with a task timeline, the answer's Markdown appended,
chat.stopStream with today's final blocks; a refused or expired stream still ends in one
complete answer; Stop cancels the work."""

from __future__ import annotations

import asyncio
import json
import threading
from datetime import timedelta
from typing import Any

import pytest

from bot.render import decode_vote
from tests.fakes.clock import TestClock
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, Fault
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_streams import Stream
from tests.quota_e2e_support import NO_RATE_LIMIT, T0, ask
from tests.slack_harness import ASKER, running_bot
from tests.test_slack_feedback import feedback_values

pytestmark = pytest.mark.timeout(60)

BUCKET = "documents/docs.cloud.google.com/storage/docs/creating-buckets"


def only_stream(fake: FakeSlack) -> Stream:
    (stream,) = fake.streams.all()
    return stream


def block_types(blocks: list[dict[str, Any]] | None) -> list[str]:
    return [b["type"] for b in blocks or []]


def answer_posts(fake: FakeSlack) -> list[dict[str, Any]]:
    """Messages posted or updated with an answer (feedback buttons: an answer's last block)."""
    calls = fake.calls_to("chat.postMessage") + fake.calls_to("chat.update")
    return [c.args for c in calls if "context_actions" in json.dumps(c.args.get("blocks", []))]


async def test_a_mention_streams_its_steps_then_the_answer_then_the_final_blocks(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A mention in a channel: a stream in the mention's thread (the asker and team named, a
    timeline), the ask step in progress then complete counting the pages it found, the
    answer's Markdown, and at stop the Sources (the one place a page is named), Show full
    doc and feedback blocks; no 🔍, no post."""
    async with running_bot(dk_server, stream_answers=True) as bot:
        await bot.mention("how do I create a bucket?", ts="1710000000.000100")
        await bot.finished(1)
        [start] = bot.fake.calls_to("chat.startStream")
        stream = only_stream(bot.fake)

        assert ("C1", "1710000000.000100") == (start.args["channel"], start.args["thread_ts"])
        assert (ASKER, "T1") == (start.args["recipient_user_id"], start.args["recipient_team_id"])
        assert "timeline" == start.args["task_display_mode"]
        assert [
            ("step-1", "Asking Google's docs", "in_progress"),
            ("step-1", "Asking Google's docs", "complete"),
        ] == stream.tasks()
        done = next(c for c in stream.chunks if c.get("status") == "complete")
        assert ("2 pages found", None) == (done["output"], done.get("sources"))
        rows = [b["elements"] for b in stream.final_blocks or [] if b["type"] == "actions"]
        labels = [e["text"]["text"] for row in rows for e in row if e["type"] == "button"]
        assert ["Show full doc 1", "Show full doc 2"] == labels  # the titles are in Sources only
        assert "Here is how: **how do I create a bucket?**" in stream.text()
        assert not stream.open
        assert "active" == stream.session_status
        final = block_types(stream.final_blocks)
        assert "context_actions" == final[-1]
        assert "actions" in final
        assert "*Sources*" in json.dumps(stream.final_blocks)
        assert [] == bot.fake.calls_to("chat.postMessage")
        assert [] == bot.fake.calls_to("reactions.add")
        assert 1 == len(bot.fake.calls_to("chat.stopStream"))
        assert [] == bot.fake.invalid_payloads


async def test_a_direct_message_streams_in_its_thread_without_the_status_line(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A DM: the stream goes under the asker's message (no recipient needed in a DM), and
    the free-text status line is not set: the timeline shows the progress."""
    async with running_bot(dk_server, stream_answers=True) as bot:
        await bot.dm("how do I create a Cloud Storage bucket?", channel="D42")
        await bot.finished(1)
        [start] = bot.fake.calls_to("chat.startStream")
        stream = only_stream(bot.fake)

        assert "D42" == start.args["channel"]
        assert start.args["thread_ts"].startswith("1710000100.")
        assert "recipient_user_id" not in start.args
        assert ["in_progress", "complete"] == [status for _, _, status in stream.tasks()]
        assert "context_actions" == block_types(stream.final_blocks)[-1]
        assert [] == bot.fake.calls_to("assistant.threads.setStatus")
        assert [] == bot.fake.calls_to("chat.postMessage")
        assert [] == bot.fake.invalid_payloads


@pytest.mark.parametrize(
    "error", ["channel_type_not_supported", "not_in_channel", "ratelimited", "not_allowed"]
)
async def test_a_refused_stream_start_ends_in_one_normal_message(
    dk_server: FakeDeveloperKnowledge, error: str
) -> None:
    """chat.startStream refused for any reason: the 🔍 reaction as today, then one posted
    answer with every block; no stream call after the refusal."""
    async with running_bot(dk_server, stream_answers=True) as bot:
        bot.fake.streams.refuse_start = error
        await bot.mention("how do I create a bucket?", ts="1710000000.000200")
        await bot.finished(1)

        [post] = bot.fake.calls_to("chat.postMessage")
        assert "1710000000.000200" == post.args["thread_ts"]
        assert "context_actions" == block_types(post.args["blocks"])[-1]
        assert "Here is how" in json.dumps(post.args["blocks"])
        assert 1 == len(bot.fake.calls_to("reactions.add"))
        assert [] == bot.fake.calls_to("chat.appendStream") + bot.fake.calls_to("chat.stopStream")
        assert [] == bot.fake.invalid_payloads


async def test_a_stream_that_expires_mid_answer_is_finished_by_one_update(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The stream dies after its first append (Slack's lifetime): the message it started is
    updated once with the whole answer; nothing is posted anew."""
    async with running_bot(dk_server, stream_answers=True) as bot:
        bot.fake.streams.expire_after_appends = 1
        await bot.mention("how do I create a bucket?", ts="1710000000.000300")
        await bot.finished(1)
        stream = only_stream(bot.fake)
        [update] = bot.fake.calls_to("chat.update")

        assert stream.ts == update.args["ts"]
        assert "Here is how" in json.dumps(update.args["blocks"])
        assert "context_actions" == block_types(update.args["blocks"])[-1]
        assert [] == bot.fake.calls_to("chat.postMessage")
        assert [] == bot.fake.calls_to("chat.stopStream")
        assert [update.args] == answer_posts(bot.fake)
        assert [] == bot.fake.invalid_payloads


async def test_a_follow_up_in_the_thread_streams_there_too(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A follow-up without a mention in the bot's thread is streamed in that thread."""
    async with running_bot(dk_server, stream_answers=True) as bot:
        await bot.mention("how do I create a bucket?", ts="1710000000.000400")
        await bot.finished(1)
        await bot.event(
            {
                "type": "message",
                "channel_type": "channel",
                "channel": "C1",
                "user": ASKER,
                "text": "and in Go?",
                "ts": "1710000000.000401",
                "thread_ts": "1710000000.000400",
            }
        )
        await bot.finished(2)
        _, second = bot.fake.streams.all()

        assert "1710000000.000400" == second.thread_ts
        assert "context_actions" == block_types(second.final_blocks)[-1]
        assert [] == bot.fake.calls_to("chat.postMessage")


async def test_hostile_upstream_text_stays_inert_inside_the_stream(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """An answer that tries to ping the channel, mention a user and dress a link up as
    google.com is streamed escaped, its link showing where it really goes; a hostile page
    title in a task source is escaped too."""
    question = "how do I create a bucket?"
    dk_server.documents[BUCKET]["title"] = "<!channel> Create <@U999> buckets"
    dk_server.answers[question] = (
        "Hi <!channel> and <@U12345>: see [google.com](https://evil.example/x) "
        "or <https://evil.example|google.com>.",
        [BUCKET],
    )
    async with running_bot(dk_server, stream_answers=True) as bot:
        await bot.mention(question, ts="1710000000.000500")
        await bot.finished(1)
        stream = only_stream(bot.fake)
        streamed = json.dumps(stream.chunks, ensure_ascii=False)
        # mrkdwn at the end (plain_text button labels render literally, as today)
        mrkdwn = json.dumps(
            [b for b in stream.final_blocks or [] if b["type"] in ("section", "context")]
        )

        for markup in ("<!channel>", "<@U12345>", "<@U999>", "|google.com>"):
            assert markup not in streamed
            assert markup not in mrkdwn
        assert "[google.com](" not in stream.text()
        assert "[evil.example/x](https://evil.example/x)" in stream.text()
        assert "&lt;!channel&gt;" in stream.text()
        assert "&lt;!channel&gt; Create &lt;@U999&gt; buckets" in mrkdwn
        assert [] == bot.fake.invalid_payloads


async def test_a_quota_wait_is_a_step_of_its_own_before_the_answer(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Both answers of this minute are in use and a slot frees in 9 s (8 s and the ledger's
    1 s margin): the timeline shows "Waiting for a free answer slot (about 9 s)" (in
    progress, then complete) while the question waits, then the answer."""
    clock = TestClock(T0)
    async with running_bot(
        dk_server,
        clock=clock,
        sleep=clock.sleep,
        answer_quota_per_minute=2,
        stream_answers=True,
        **NO_RATE_LIMIT,
    ) as bot:
        for n in range(2):
            await ask(bot, f"how do I rotate key {n}?")
            clock.advance(1)
        clock.set(T0 + timedelta(seconds=52))
        await bot.mention("how do I rotate key 2?", ts="1710000000.000600")
        await bot.finished(3)
        stream = only_stream(bot.fake)

        assert [
            ("step-1", "Asking Google's docs", "in_progress"),
            ("step-2", "Waiting for a free answer slot (about 9 s)", "in_progress"),
            ("step-2", "Waiting for a free answer slot (about 9 s)", "complete"),
            ("step-1", "Asking Google's docs", "complete"),
        ] == stream.tasks()
        assert "rotate key 2" in stream.text()
        assert [] == bot.fake.calls_to("chat.postEphemeral")  # the step says it instead
        assert [] == bot.fake.invalid_payloads


async def test_a_fallback_to_search_is_shown_as_the_step_and_the_hits_as_final_blocks(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Generated answers are used up today: the ask step ends as "Generated answers are
    used up today — searching instead" counting the pages found; the hits and the quota
    note are the final blocks (there is no answer text to stream)."""
    dk_server.quota_exhausted = "http"
    async with running_bot(dk_server, stream_answers=True) as bot:
        await bot.mention("how do I create a Cloud Storage bucket?", ts="1710000000.000700")
        await bot.finished(1)
        stream = only_stream(bot.fake)

        (first, _), (last, status) = [(t, s) for _, t, s in stream.tasks()]
        assert "Asking Google's docs" == first
        assert ("Generated answers are used up today — searching instead", "complete") == (
            last,
            status,
        )
        done = next(c for c in stream.chunks if c.get("status") == "complete")
        assert done["output"].endswith(" found")
        assert "" == stream.text()
        final = json.dumps(stream.final_blocks)
        assert "Create buckets" in final
        assert "context" in block_types(stream.final_blocks)
        assert [] == bot.fake.invalid_payloads


async def test_a_pay_questions_step_title_is_escaped_once(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """`&` in a step's title reaches Slack as `&amp;` (Slack shows `&`), never `&amp;amp;`."""
    async with running_bot(dk_server, stream_answers=True) as bot:
        await bot.mention("how do I add a Google Pay button?", ts="1710000000.000750")
        await bot.finished(1)
        stream = only_stream(bot.fake)

        [(_, title, _), *_] = stream.tasks()
        assert "Searching the Google Pay &amp; Wallet docs" == title
        assert "&amp;amp;" not in bot.fake.everything_sent()
        assert [] == bot.fake.invalid_payloads


async def test_stop_before_the_upstream_call_cancels_it_and_posts_nothing_after(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Stop pressed while the stream is starting: no answer_query call is sent, the stream
    ends with "Stopped." and the session is active again, nothing else is posted, and the
    work record is finished."""
    gate = threading.Event()
    async with running_bot(dk_server, stream_answers=True) as bot:
        bot.fake.streams.start_gate = gate
        await bot.mention("how do I create a bucket?", ts="1710000000.000800")
        await _until(lambda: bot.fake.streams.waiting_at_gate == 1)
        await bot.event(_stopped("C1", "1710000000.000800"))
        await bot.finished(1)  # the Stop, handled while Slack is still opening the stream
        gate.set()
        outcomes = await bot.finished(2)
        stream = only_stream(bot.fake)

        assert ("mention", "stopped") in outcomes
        assert [] == dk_server.tool_calls("answer_query")
        assert "_Stopped._" == stream.text()
        assert "active" == stream.session_status
        assert [] == bot.fake.calls_to("chat.postMessage") + bot.fake.calls_to("chat.update")
        assert 0 == bot.deps.work.owned
        assert [] == bot.fake.invalid_payloads


async def test_stop_while_google_answers_ends_the_stream_and_nothing_follows(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Stop pressed while answer_query is running (the `agent_session_stopped` event): the
    work is cancelled, the finished steps stay, the stream ends with "Stopped."; when the
    slow answer would have landed, nothing is appended or posted."""
    dk_server.latency = 1.0
    async with running_bot(dk_server, stream_answers=True) as bot:
        await bot.mention("how do I create a bucket?", ts="1710000000.000900")
        await bot.fake.await_calls("chat.startStream")
        await _until(lambda: bool(dk_server.tool_calls("answer_query")))
        sent = await bot.event(_stopped("C1", "1710000000.000900"))
        outcomes = await bot.finished(2)
        await asyncio.sleep(1.2)  # past the slow answer: proves nothing more comes
        stream = only_stream(bot.fake)

        assert 200 == sent.status
        assert {("stop", "ok"), ("mention", "stopped")} == set(outcomes)
        assert [("step-1", "Asking Google's docs", "in_progress")] == stream.tasks()
        assert "_Stopped._" == stream.text()
        assert 1 == len(bot.fake.calls_to("chat.stopStream"))
        assert [] == bot.fake.calls_to("chat.appendStream")
        assert [] == bot.fake.calls_to("chat.postMessage") + bot.fake.calls_to("chat.update")
        assert [] == bot.fake.invalid_payloads


async def test_an_outage_marks_the_step_failed_and_ends_the_stream_with_the_reason(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The docs server is down: the ask step turns to error, the stream ends with the
    short reason and Try again as its blocks, the session active again; nothing is posted
    besides."""
    dk_server.faults.extend(Fault(status=503) for _ in range(4))
    async with running_bot(dk_server, mcp_max_retries=1, stream_answers=True) as bot:
        await bot.mention("how do I create a bucket?", ts="1710000000.001100")
        outcomes = await bot.finished(1)
        stream = only_stream(bot.fake)

        assert [("mention", "unavailable")] == outcomes
        assert ["in_progress", "error"] == [status for _, _, status in stream.tasks()]
        [reason] = stream.final_blocks or []
        said = "Google's documentation isn't answering right now — try again in a minute."
        assert f":warning: {said}" == reason["text"]["text"]  # said once, no HTTP status
        assert "Try again" == reason["accessory"]["text"]["text"]
        assert "active" == stream.session_status
        assert [] == bot.fake.calls_to("chat.postMessage")
        assert [] == bot.fake.invalid_payloads


async def test_a_long_answer_is_appended_in_pieces_within_slacks_per_call_limit(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A 30,000-character answer: three appends of its text, each within 12,000 characters
    (the fake refuses a longer one), together the whole answer."""
    question = "how do I create a bucket?"
    paragraphs = [f"Paragraph {n}: " + "word " * 196 for n in range(30)]
    dk_server.answers[question] = ("\n\n".join(paragraphs), [BUCKET])
    async with running_bot(dk_server, stream_answers=True) as bot:
        await bot.mention(question, ts="1710000000.001200")
        await bot.finished(1)
        stream = only_stream(bot.fake)
        texts = [
            chunk["text"]
            for call in bot.fake.calls_to("chat.appendStream")
            for chunk in call.args["chunks"]
            if chunk["type"] == "markdown_text"
        ]

        assert 3 == len(texts)
        assert all(len(text) <= 12_000 for text in texts)
        assert "Paragraph 0:" in texts[0]
        assert "Paragraph 29:" in texts[-1]
        assert 30 == stream.text().count("Paragraph ")
        assert [] == bot.fake.invalid_payloads


async def test_stop_after_slack_ended_the_stream_still_takes_the_session_off_processing(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Slack already stopped the stream (it lists it in `streaming_message_ts`): the bot's
    "Stopped." cannot be appended, so agents.sessions.setStatus moves the session to active;
    nothing is posted."""
    dk_server.latency = 1.0
    async with running_bot(dk_server, stream_answers=True) as bot:
        await bot.mention("how do I create a bucket?", ts="1710000000.001300")
        await bot.fake.await_calls("chat.startStream")
        await _until(lambda: bool(dk_server.tool_calls("answer_query")))
        stream = only_stream(bot.fake)
        stream.open = False
        await bot.event(
            {**_stopped("C1", "1710000000.001300"), "streaming_message_ts": [stream.ts]}
        )
        await bot.finished(2)
        [status] = await bot.fake.await_calls("agents.sessions.setStatus")

        assert ("C1", "active", "1710000000.001300") == (
            status.args["channel_id"],
            status.args["status"],
            status.args["thread_ts"],
        )
        assert [] == bot.fake.calls_to("chat.postMessage") + bot.fake.calls_to("chat.update")
        assert [] == bot.fake.invalid_payloads


async def test_an_append_refused_as_stopped_by_the_user_posts_nothing_more(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """An append answered `stopped_by_user` (Stop pressed, its event not here yet): the
    answer is neither appended nor posted nor updated anywhere."""
    async with running_bot(dk_server, stream_answers=True) as bot:
        bot.fake.fail("chat.appendStream", "stopped_by_user", times=5)
        await bot.mention("how do I create a bucket?", ts="1710000000.001400")
        await bot.finished(1)

        assert 1 == len(bot.fake.calls_to("chat.appendStream"))
        assert [] == bot.fake.calls_to("chat.stopStream")
        assert [] == bot.fake.calls_to("chat.postMessage") + bot.fake.calls_to("chat.update")


async def test_a_vote_on_a_streamed_answer_is_recorded_against_the_stream_message(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The feedback buttons at the end of a stream name an answer the bot kept with the
    stream's own message ts, and a 👍 click on that message is recorded."""
    async with running_bot(dk_server, stream_answers=True) as bot:
        await bot.mention("how do I create a bucket?", ts="1710000000.001500")
        await bot.finished(1)
        stream = only_stream(bot.fake)
        up, _ = feedback_values({"blocks": stream.final_blocks})
        record = await bot.deps.feedback.answer(decode_vote(up).answer_id)
        await bot.feedback_click(up, user="U0VOTER", message_ts=stream.ts)
        await bot.finished(2)
        votes = await bot.deps.feedback.votes()

        assert record is not None
        assert ("answer", "C1", stream.ts) == (record.kind, record.channel, record.ts)
        assert ["up"] == [vote.vote for vote in votes]


async def test_the_verify_step_and_each_commands_mark_are_streamed(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """An answer with two commands, one of them marked ⚠: after the ask step, "Checking the
    commands against the cited pages" runs and ends as an error, its output counting the
    marks; each command's one verdict follows its code block in the stream (a blocks chunk),
    and the final blocks do not say it again."""
    from tests.test_slack_verify import QUESTION, _with_run_page

    _with_run_page(dk_server)
    async with running_bot(dk_server, stream_answers=True) as bot:
        await bot.mention(QUESTION, ts="1710000000.001600")
        await bot.finished(1)
        stream = only_stream(bot.fake)
        marks = [e["text"] for b in stream.blocks() for e in b["elements"]]

        assert [
            ("step-1", "Asking Google's docs", "in_progress"),
            ("step-1", "Asking Google's docs", "complete"),
            ("step-2", "Checking the commands against the cited pages", "in_progress"),
            ("step-2", "Checking the commands against the cited pages", "error"),
        ] == stream.tasks()
        [checked] = [c for c in stream.chunks if c.get("id") == "step-2" and "output" in c]
        assert "1 of 2 found" == checked["output"]
        assert [
            "✓ `gcloud run deploy` — in source 1, under “Deploy a service”",
            "⚠ `gcloud run deploy` — `--service-acount` is not in the cited pages",
        ] == marks
        assert "cited pages" not in json.dumps(stream.final_blocks)
        assert [] == bot.fake.invalid_payloads


async def test_the_message_shortcut_streams_under_the_message_naming_both_people(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """ "Ask Google's docs" on Ben's message: the same streamed thread reply, the person who
    used the shortcut as the recipient, "asked about Ben's message" above the answer."""
    async with running_bot(dk_server, stream_answers=True) as bot:
        await bot.message_shortcut(
            "how do I create a Cloud Storage bucket?", author="UBEN0001", ts="1710000000.001700"
        )
        await bot.finished(1)
        stream = only_stream(bot.fake)
        [start] = bot.fake.calls_to("chat.startStream")

        assert ("C1", "1710000000.001700") == (stream.channel, stream.thread_ts)
        assert (ASKER, "T1") == (start.args["recipient_user_id"], start.args["recipient_team_id"])
        head = stream.blocks()[0]["text"]["text"]
        assert head.startswith(f"<@{ASKER}> asked about <@UBEN0001>'s message:")
        assert "create a Cloud Storage bucket" in stream.text()
        assert "context_actions" == block_types(stream.final_blocks)[-1]
        assert [] == bot.fake.calls_to("chat.postMessage")
        assert [] == bot.fake.invalid_payloads


async def test_stream_answers_false_answers_with_one_message_as_before(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """STREAM_ANSWERS=false: no stream call at all, the reaction and one posted answer."""
    async with running_bot(dk_server, stream_answers=False) as bot:
        await bot.mention("how do I create a bucket?", ts="1710000000.001000")
        await bot.finished(1)

        assert [] == bot.fake.calls_to("chat.startStream")
        assert 1 == len(bot.fake.calls_to("chat.postMessage"))
        assert 1 == len(bot.fake.calls_to("reactions.add"))


def _stopped(channel: str, thread_ts: str) -> dict[str, Any]:
    return {
        "type": "agent_session_stopped",
        "channel": channel,
        "user": ASKER,
        "thread_ts": thread_ts,
        "event_ts": "1710000099.000001",
        "streaming_message_ts": [],
    }


async def _until(done: Any, *, within: float = 10.0) -> None:
    """Poll a cheap condition of the bot's state (no Slack call to wait for) every 10 ms."""
    async with asyncio.timeout(within):
        while not done():  # noqa: ASYNC110 - the fakes' state has no event to wait on
            await asyncio.sleep(0.01)
