"""Early sources in a streamed answer (issue 41, item 5), over signed HTTP against the
recording fake Slack and the loopback REST fake of Developer Knowledge: the search the docs
service runs beside `answerQuery` shows its first pages as the ask step's chips while the
answer is written; the answer replaces them (its Sources list names the pages it cites,
once); nothing about them can cost the answer."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from bot.slack.delivery.streams import EARLY_SOURCES
from tests.fakes.dk_rest import FakeDeveloperKnowledgeRest
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_streams import Stream
from tests.slack_harness import API_KEY, SlackBot, rest_bot

pytestmark = pytest.mark.timeout(60)

QUESTION = "how do I create a bucket?"
#: (document name, title): more pages than a step shows, the first with a `|` in its title
PAGES = [
    ("documents/docs.cloud.google.com/storage/docs/creating-buckets", "Create buckets | Storage"),
    ("documents/docs.cloud.google.com/storage/docs/buckets", "About buckets"),
    ("documents/docs.cloud.google.com/storage/docs/bucket-locations", "Bucket locations"),
    ("documents/docs.cloud.google.com/storage/docs/storage-classes", "Storage classes"),
    ("documents/docs.cloud.google.com/storage/docs/naming-buckets", "Bucket names"),
    ("documents/docs.cloud.google.com/storage/docs/deleting-buckets", "Delete buckets"),
]


@pytest.fixture
def rest_server() -> Iterator[FakeDeveloperKnowledgeRest]:
    """Developer Knowledge's REST face with six bucket pages, API key `test-key`."""
    server = FakeDeveloperKnowledgeRest()
    server.api_key = API_KEY
    for name, title in PAGES:
        server.add_document(name, title, f"# {title}\n\nA bucket holds objects.")
    server.start()
    yield server
    server.stop()


def only_stream(fake: FakeSlack) -> Stream:
    (stream,) = fake.streams.all()
    return stream


def chips(task: dict[str, Any]) -> list[tuple[str, str]]:
    return [(s["url"], s["text"]) for s in task.get("sources") or []]


def uri(name: str) -> str:
    return "https://" + name.removeprefix("documents/")


async def early_view(bot: SlackBot, rest: FakeDeveloperKnowledgeRest) -> dict[str, Any]:
    """With the answer held: the ask step as Slack shows it once the search's pages came,
    and the answer's text streamed so far; then the answer is let go."""
    try:
        await bot.fake.await_calls("chat.appendStream")  # the start sent the step itself
        stream = only_stream(bot.fake)
        return {"step": stream.task_view()["step-1"], "text": stream.text()}
    finally:
        assert rest.answer_gate is not None
        rest.answer_gate.set()


async def test_a_streamed_answer_shows_the_searchs_first_pages_until_its_answer_replaces_them(
    rest_server: FakeDeveloperKnowledgeRest,
) -> None:
    """The answer held upstream: the ask step, still in progress, shows the search's first
    pages as chips (titles as every surface reads them), no answer text yet. Once the answer
    comes the step completes without them, and the final Sources list names the pages."""
    rest_server.answer_gate = threading.Event()
    async with rest_bot(rest_server, stream_answers=True) as bot:
        await bot.mention(QUESTION, ts="1710000000.000100")
        early = await early_view(bot, rest_server)
        await bot.finished(1)
        stream = only_stream(bot.fake)
        step = stream.task_view()["step-1"]

        shown = [(uri(name), title) for name, title in PAGES[:EARLY_SOURCES]]
        shown[0] = (shown[0][0], "Create buckets · Storage")
        assert ("in_progress", shown, "") == (
            early["step"]["status"],
            chips(early["step"]),
            early["text"],
        )
        assert ("complete", []) == (step["status"], chips(step))
        assert "*Sources*" in str(stream.final_blocks)
        assert [] == bot.fake.calls_to("chat.update")
        assert [] == bot.fake.invalid_payloads


async def test_a_slack_that_refuses_an_empty_sources_list_still_streams_the_whole_answer(
    rest_server: FakeDeveloperKnowledgeRest,
) -> None:
    """Slack does not document an empty `sources` list: refused, the step closes again
    without it (the early chips stay) and the answer streams and stops as always, not
    finished by chat.update."""
    rest_server.answer_gate = threading.Event()
    async with rest_bot(rest_server, stream_answers=True) as bot:
        bot.fake.streams.refuse_empty_sources = True
        await bot.mention(QUESTION, ts="1710000000.000200")
        early = await early_view(bot, rest_server)
        await bot.finished(1)
        stream = only_stream(bot.fake)
        step = stream.task_view()["step-1"]

        assert ("complete", chips(early["step"])) == (step["status"], chips(step))
        assert chips(step)
        assert stream.text()
        assert (False, "context_actions") == (
            stream.open,
            (stream.final_blocks or [{}])[-1]["type"],
        )
        assert [] == bot.fake.calls_to("chat.update")
        assert [
            "chat.appendStream: task_update sources is an empty array"
        ] == bot.fake.invalid_payloads


async def test_an_answer_that_is_not_streamed_runs_no_early_search(
    rest_server: FakeDeveloperKnowledgeRest,
) -> None:
    """A classic reply has no step to show pages on: the question costs no search unit."""
    async with rest_bot(rest_server) as bot:
        await bot.mention(QUESTION, ts="1710000000.000300")
        await bot.finished(1)

        assert 1 == len(rest_server.requests_for("answerQuery"))
        assert [] == rest_server.requests_for("searchDocumentChunks")
        assert [] == bot.fake.calls_to("chat.startStream")


async def test_early_pages_slack_refuses_cost_the_answer_nothing(
    rest_server: FakeDeveloperKnowledgeRest,
) -> None:
    """Slack refuses the step's update with the pages (`invalid_chunks`): the stream is
    still open, so the answer streams into it and stops as always; no chips, no update."""
    rest_server.answer_gate = threading.Event()
    async with rest_bot(rest_server, stream_answers=True) as bot:
        bot.fake.fail("chat.appendStream", "invalid_chunks")
        await bot.mention(QUESTION, ts="1710000000.000400")
        early = await early_view(bot, rest_server)
        await bot.finished(1)
        stream = only_stream(bot.fake)
        step = stream.task_view()["step-1"]

        assert ([], [], "complete") == (chips(early["step"]), chips(step), step["status"])
        assert stream.text()
        assert (False, "active") == (stream.open, stream.session_status)
        assert [] == bot.fake.calls_to("chat.update")
