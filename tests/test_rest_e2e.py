"""Issue 41's "Done when", end to end: the Bolt app serving signed requests, the recording
fake Slack, and DEVELOPER_KNOWLEDGE_API=rest against the loopback fake of Developer
Knowledge's REST face (which writes Google's own schema). With the default `mcp` the bot
answers as before."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.fakes.dk_rest import FakeDeveloperKnowledgeRest, RestAnswer
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.slack_api import FakeSlack
from tests.fakes.upstream import until
from tests.slack_harness import API_KEY, rest_bot, running_bot
from tests.test_slack_streaming_sources import chips, only_stream

pytestmark = pytest.mark.timeout(60)

CLOUD = "documents/docs.cloud.google.com/storage/docs/creating-buckets"
NAMING = "documents/docs.cloud.google.com/storage/docs/naming-buckets"
AUTH = "documents/firebase.google.com/docs/auth"
RULES = "documents/firebase.google.com/docs/rules"
FIREBASE = 'data_source = "firebase.google.com"'


@pytest.fixture
def rest() -> Iterator[FakeDeveloperKnowledgeRest]:
    """Two Cloud Storage pages and two Firebase pages, API key `test-key`."""
    server = FakeDeveloperKnowledgeRest()
    server.api_key = API_KEY
    server.add_document(CLOUD, "Create buckets", "# Create buckets\n\nRun gcloud. Users sign in.")
    server.add_document(NAMING, "Bucket names", "# Bucket names\n\nNames are global.")
    server.add_document(AUTH, "Firebase Auth", "# Firebase Auth\n\nUsers sign in with Firebase.")
    server.add_document(RULES, "Security Rules", "# Security Rules\n\nRules guard users' data.")
    server.start()
    yield server
    server.stop()


def posted_text(fake: FakeSlack) -> str:
    """Every text of the answer posted in the channel, joined."""
    [post] = fake.calls_to("chat.postMessage")
    return json.dumps(post.args["blocks"], ensure_ascii=False)


def byte_span(text: str, part: str) -> tuple[int, int]:
    start = len(text[: text.index(part)].encode())
    return start, start + len(part.encode())


def texts(value: Any) -> list[str]:
    """Every `text` string in blocks, depth first (what a person reads)."""
    if isinstance(value, dict):
        own = [value["text"]] if isinstance(value.get("text"), str) else []
        return own + [t for v in value.values() for t in texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in texts(v)]
    return []


def sources_list(blocks: list[dict[str, Any]]) -> list[str]:
    """The lines of the Sources section, without its heading."""
    [section] = [t for t in texts(blocks) if t.startswith("*Sources*\n")]
    return section.split("\n")[1:]


def uri(name: str) -> str:
    return "https://" + name.removeprefix("documents/")


async def test_a_channel_mention_marks_cited_sentences_with_their_sources_numbers(
    rest: FakeDeveloperKnowledgeRest,
) -> None:
    """Accents, emoji and CJK before and inside the spans (Google's offsets are UTF-8 bytes):
    each cited sentence ends with a marker linking to the page its number names in Sources;
    a page cited by no span is still listed, and no marker names it."""
    first = "Créez le bucket avec gcloud storage 🪣."
    second = "バケット名は世界で一意です。"
    third = "Les règles protègent les données."
    text = f"{first} {second} {third}"
    rest.answers["how do I create a bucket?"] = RestAnswer(
        text,
        # a span ending inside its sentence: the marker still goes after the full stop
        [(*byte_span(text, "Créez le bucket"), [1]), (*byte_span(text, second), [0])],
        [CLOUD, NAMING, AUTH],
    )
    async with rest_bot(rest) as bot:
        await bot.mention("how do I create a bucket?", ts="1710000000.000100")
        await bot.finished(1)
        [post] = bot.fake.calls_to("chat.postMessage")
        shown = "\n".join(texts(post.args["blocks"]))
        listed = sources_list(post.args["blocks"])

        marked = re.compile(r"\s*<([^|>]+)\|\[(\d+)\]>")
        markers = []
        for sentence in (first, second):
            found = marked.match(shown, shown.index(sentence) + len(sentence))
            assert found is not None, f"no marker right after {sentence!r} in {shown!r}"
            markers.append((found.group(1), int(found.group(2))))
        assert [(uri(NAMING), 2), (uri(CLOUD), 1)] == markers
        for url, number in markers:
            assert listed[number - 1].startswith(f"{number}. <{url}|")
        assert 3 == len(listed)
        assert uri(AUTH) in listed[2]
        assert marked.match(shown, shown.index(third) + len(third)) is None
        assert set(re.findall(r"\|\[(\d+)\]>", shown)) == {"1", "2"}
        assert [] == bot.fake.invalid_payloads


async def test_a_firebase_channel_sends_the_filter_on_answer_and_search_and_says_so(
    rest: FakeDeveloperKnowledgeRest,
) -> None:
    """`/gdocs channel products firebase`: a question there goes to answerQuery and to
    searchDocumentChunks with `data_source = "firebase.google.com"`, and the answer says
    it is Firebase docs only and how the channel changes it."""
    async with rest_bot(rest) as bot:
        await bot.command("channel products firebase", channel="C1")
        await bot.finished(1)
        await bot.mention("how do users sign in?", channel="C1", ts="1710000000.000200")
        await bot.mention("search users sign in", channel="C1", ts="1710000000.000300")
        await bot.finished(3)
        answer, search = [
            c.args["blocks"]
            for c in bot.fake.calls_to("chat.postMessage")
            if c.args.get("thread_ts") in ("1710000000.000200", "1710000000.000300")
        ]

        [asked] = rest.requests_for("answerQuery")
        [searched] = rest.requests_for("searchDocumentChunks")
        assert (FIREBASE, FIREBASE) == (asked.filter, searched.filter)
        assert "Firebase docs only · change with `/gdocs channel products`" in texts(answer)[0]
        assert all("firebase.google.com" in line for line in sources_list(answer))
        assert "docs.cloud.google.com" not in json.dumps(search)
        assert [] == bot.fake.invalid_payloads


async def test_sources_say_when_each_page_last_changed(rest: FakeDeveloperKnowledgeRest) -> None:
    """Each entry of Sources carries its page's updateTime as a date people read."""
    rest.add_document(
        NAMING, "Bucket names", "Names are global.", update_time=datetime(2025, 3, 1, tzinfo=UTC)
    )
    rest.answers["how do I name a bucket?"] = RestAnswer("Names are global.", [], [CLOUD, NAMING])
    async with rest_bot(rest) as bot:
        await bot.mention("how do I name a bucket?", ts="1710000000.000400")
        await bot.finished(1)
        [post] = bot.fake.calls_to("chat.postMessage")
        listed = sources_list(post.args["blocks"])

        assert 2 == len(listed)
        assert "updated 12 Oct 2026" in listed[0]
        assert "updated 1 Mar 2025" in listed[1]
        assert [] == bot.fake.invalid_payloads


async def test_a_streamed_answer_shows_the_searchs_pages_before_the_answer_arrives(
    rest: FakeDeveloperKnowledgeRest,
) -> None:
    """answerQuery held upstream in a Firebase channel: the stream's step already shows the
    (Firebase) pages the search found, with no answer text yet; the answer then streams,
    says it is Firebase docs only, and its Sources list names the pages it cites."""
    rest.answer_gate = threading.Event()
    async with rest_bot(rest, stream_answers=True) as bot:
        await bot.command("channel products firebase", channel="C1")
        await bot.finished(1)
        await bot.mention("how do users sign in?", channel="C1", ts="1710000000.000500")
        try:
            await bot.fake.await_calls("chat.appendStream")
            # the answer is asked alongside the search: it may reach the fake a moment later
            await until(lambda: bool(rest.requests_for("answerQuery")), "answerQuery asked")
            stream = only_stream(bot.fake)
            before = (stream.task_view()["step-1"], stream.text())
            answered = len(rest.requests_for("answerQuery"))
        finally:
            rest.answer_gate.set()
        await bot.finished(2)
        stream = only_stream(bot.fake)

        assert ("in_progress", "", 1) == (before[0]["status"], before[1], answered)
        assert [uri(AUTH), uri(RULES)] == [url for url, _ in chips(before[0])]
        assert [] == chips(stream.task_view()["step-1"])
        assert "Firebase Auth" in "\n".join(sources_list(stream.final_blocks or []))
        assert "Firebase docs only" in texts(stream.blocks())[0]
        assert stream.text()
        assert [] == bot.fake.invalid_payloads


async def test_the_default_backend_is_mcp_and_streams_as_before(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """No DEVELOPER_KNOWLEDGE_API: the MCP tools answer, with no early search, no chips and
    no markers, exactly as before issue 41."""
    async with running_bot(dk_server, stream_answers=True) as bot:
        await bot.mention("how do I create a bucket?", ts="1710000000.000600")
        await bot.finished(1)
        stream = only_stream(bot.fake)

        assert "mcp" == bot.deps.service.backend
        tools = [c.tool for c in dk_server.calls]
        assert ("answer_query", 1) == (tools[0], tools.count("answer_query"))
        assert "search_documents" not in tools
        assert [("step-1", "in_progress"), ("step-1", "complete")] == [
            (task_id, status) for task_id, _, status in stream.tasks()
        ]
        assert all("sources" not in c for c in stream.chunks if c["type"] == "task_update")
        assert "|[1]>" not in json.dumps(stream.final_blocks)
        assert "[[1](" not in stream.text()
        assert [] == bot.fake.invalid_payloads
