"""Show full doc and Next page buttons: documents in the answer's thread, forged values
refused before any upstream call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.models import Document
from bot.render import document_file
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.slack_harness import ASKER, SlackBot, running_bot

BUCKETS = "documents/docs.cloud.google.com/storage/docs/creating-buckets"
PRICING = "documents/firebase.google.com/docs/firestore/pricing"
PAGED = "documents/docs.cloud.google.com/run/docs/paged-guide"
LONG = "documents/docs.cloud.google.com/run/docs/very-long-reference"
ANSWER_TS = "1700000000.000042"


def paragraphs(title: str, count: int) -> str:
    sections = [
        f"## Step {i}\n\nRun `gcloud run deploy service-{i}` and check the revision in the "
        f"console; repeat until every region serves traffic. {'More words here. ' * 8}"
        for i in range(count)
    ]
    return f"# {title}\n\n" + "\n\n".join(sections)


@pytest.fixture
def docs_server(dk_server: FakeDeveloperKnowledge) -> FakeDeveloperKnowledge:
    """The DK fake with a two-page document and one long enough to go out as a file."""
    dk_server.add_document(PAGED, "Paged guide", paragraphs("Paged guide", 40))
    dk_server.add_document(LONG, "Very long reference", paragraphs("Very long reference", 120))
    return dk_server


def shown(args: dict[str, Any]) -> str:
    return json.dumps([args.get("text", ""), args.get("blocks", [])], ensure_ascii=False)


def next_page_value(args: dict[str, Any]) -> str | None:
    for block in args.get("blocks", []):
        for element in block.get("elements", []) if block.get("type") == "actions" else []:
            if element.get("action_id") == "doc_next_page":
                return str(element["value"])
    return None


def sections_missing(pages: list[dict[str, Any]], count: int) -> list[int]:
    """The `paragraphs(…, count)` sections whose unique command appears on none of `pages`."""
    text = "".join(shown(page) for page in pages)
    return [i for i in range(count) if f"gcloud run deploy service-{i}`" not in text]


async def private_pages(bot: SlackBot, first: dict[str, Any]) -> list[dict[str, Any]]:
    """`first` and every page after it, clicking Next page on each (an ephemeral message)."""
    pages = [first]
    while (value := next_page_value(pages[-1])) is not None:
        sent = await bot.action({"action_id": "doc_next_page", "value": value}, ephemeral=True)
        assert sent.key is not None
        pages.append((await bot.fake.await_responses(sent.key))[-1])
    return pages


def buttons(args: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        element
        for block in args.get("blocks", [])
        if block.get("type") == "actions"
        for element in block.get("elements", [])
    ]


async def test_show_full_doc_posts_the_page_in_the_answers_thread(
    docs_server: FakeDeveloperKnowledge,
) -> None:
    """Clicking an answer's Show full doc button brings that page into the answer's thread,
    saying who asked for it (the channel sees it)."""
    async with running_bot(docs_server) as bot:
        await bot.command("how do I create a bucket?")
        [answer] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)
        button = buttons(answer.args)[0]
        sent = await bot.action(
            {k: button[k] for k in ("action_id", "type", "value")},
            message_ts=answer.result["ts"],
            user="U0CLICKER",
        )
        page = (await bot.fake.await_calls("chat.postMessage", 2))[1]
        await bot.finished(2)

        assert 200 == sent.status
        assert ("C1", answer.result["ts"]) == (page.args["channel"], page.args["thread_ts"])
        assert "gcloud storage buckets create" in shown(page.args)
        assert "<@U0CLICKER> asked for this page" in shown(page.args)
        assert BUCKETS == button["value"]
        assert [] == bot.fake.invalid_payloads


async def test_overflow_menu_choice_shows_that_document(
    docs_server: FakeDeveloperKnowledge,
) -> None:
    """The "more documents" menu works like the buttons, in the same thread."""
    async with running_bot(docs_server) as bot:
        await bot.action(
            {
                "action_id": "show_doc_more",
                "type": "overflow",
                "selected_option": {"text": {"type": "plain_text", "text": "x"}, "value": PRICING},
            },
            message_ts=ANSWER_TS,
            thread_ts="1700000000.000001",
        )
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)

        assert "1700000000.000001" == post.args["thread_ts"]  # a click inside a thread
        assert "Firestore bills reads" in shown(post.args)


async def test_next_page_posts_the_following_page_into_the_same_thread(
    docs_server: FakeDeveloperKnowledge,
) -> None:
    """A paged document has a Next page button; clicking it posts page 2 in the thread."""
    async with running_bot(docs_server) as bot:
        await bot.action({"action_id": "show_doc:1", "value": PAGED}, message_ts=ANSWER_TS)
        [first] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)
        value = next_page_value(first.args)
        assert value is not None
        assert "Page 1 of 2" in shown(first.args)

        await bot.action(
            {"action_id": "doc_next_page", "value": value},
            message_ts=first.result["ts"],
            thread_ts=ANSWER_TS,
        )
        second = (await bot.fake.await_calls("chat.postMessage", 2))[1]
        await bot.finished(2)

        assert ANSWER_TS == second.args["thread_ts"]
        assert "Page 2 of 2" in shown(second.args)
        assert next_page_value(second.args) is None
        assert "Step 39" in shown(second.args)
        assert [] == bot.fake.invalid_payloads


async def test_a_page_past_the_end_is_explained(docs_server: FakeDeveloperKnowledge) -> None:
    """A stale Next page value beyond the last page gets a private note."""
    async with running_bot(docs_server) as bot:
        await bot.action(
            {"action_id": "doc_next_page", "value": f'{{"n":"{BUCKETS}","p":7}}'},
            message_ts=ANSWER_TS,
        )
        [note] = await bot.fake.await_calls("chat.postEphemeral")
        await bot.finished(1)
        assert "no more pages" in note.args["text"]
        assert (ASKER, ANSWER_TS) == (note.args["user"], note.args["thread_ts"])


async def test_long_document_is_uploaded_as_a_markdown_file_in_the_thread(
    docs_server: FakeDeveloperKnowledge,
) -> None:
    """Past the threshold the whole document goes into the thread as a file, intact."""
    async with running_bot(docs_server) as bot:
        await bot.action({"action_id": "show_doc:0", "value": LONG}, message_ts=ANSWER_TS)
        await bot.fake.await_calls("files.completeUploadExternal")
        await bot.finished(1)
        [intro] = bot.fake.calls_to("chat.postMessage")
        [upload] = bot.fake.calls_to("upload.bin")
        [complete] = bot.fake.calls_to("files.completeUploadExternal")
        [requested] = bot.fake.calls_to("files.getUploadURLExternal")
        doc = docs_server.documents[LONG]
        filename, content = document_file(Document(**doc))

        assert ANSWER_TS == intro.args["thread_ts"]
        assert "attached as a Markdown file" in shown(intro.args)
        assert content == upload.args.get("_raw", upload.args.get("file"))
        assert doc["content"].split("\n", 1)[1] in content
        assert filename == requested.args["filename"]
        assert ("C1", ANSWER_TS) == (complete.args["channel_id"], complete.args["thread_ts"])
        assert [] == bot.fake.invalid_payloads


FORGED = [
    "../../etc/passwd",
    "documents/docs.cloud.google.com/../../secrets",
    "https://evil.example/phish",
    "documents/" + "a" * 600,
    "<!channel>",
    "",
    "documents/evil host/x",
]


async def test_forged_show_doc_values_are_refused_without_an_upstream_call(
    docs_server: FakeDeveloperKnowledge,
) -> None:
    """A button value that is not a valid document name gets a private explanation only."""
    async with running_bot(docs_server) as bot:
        statuses = []
        for value in FORGED:
            sent = await bot.action({"action_id": "show_doc:3", "value": value})
            statuses.append(sent.status)
        notes = await bot.fake.await_calls("chat.postEphemeral", len(FORGED))
        outcomes = await bot.finished(len(FORGED))

        assert [200] * len(FORGED) == statuses
        assert [("action", "invalid_input")] * len(FORGED) == outcomes
        assert all("out of date" in note.args["text"] for note in notes)
        assert {ASKER} == {note.args["user"] for note in notes}
        assert ([], []) == (docs_server.calls, bot.fake.calls_to("chat.postMessage"))
        assert "<!channel>" not in bot.fake.everything_sent()


GARBLED = [
    "not json",
    '{"n": "documents/docs.cloud.google.com/x", "p": "2"}',
    '{"n": "../x", "p": 2}',
    '{"n": "documents/docs.cloud.google.com/x", "p": 2, "extra": 1}',
    '{"n": "documents/docs.cloud.google.com/x", "p": 0}',
    "[" * 5000,
    "x" * 3000,
]


async def test_garbled_next_page_values_are_refused(docs_server: FakeDeveloperKnowledge) -> None:
    """A Next page value we did not make is refused before any fetch."""
    async with running_bot(docs_server) as bot:
        for value in GARBLED:
            await bot.action({"action_id": "doc_next_page", "value": value})
        await bot.fake.await_calls("chat.postEphemeral", len(GARBLED))
        assert [("action", "invalid_input")] * len(GARBLED) == await bot.finished(len(GARBLED))
        assert [] == docs_server.calls


async def test_forged_value_falls_back_to_the_response_url(
    docs_server: FakeDeveloperKnowledge,
) -> None:
    """If the bot cannot post ephemerally there, the clicker hears it via response_url."""
    async with running_bot(docs_server) as bot:
        bot.fake.fail("chat.postEphemeral", "not_in_channel")
        sent = await bot.action({"action_id": "show_doc:0", "value": "../x"}, message_ts=ANSWER_TS)
        await bot.finished(1)
        assert sent.key is not None
        [note] = bot.fake.responses_to(sent.key)
        assert ("ephemeral", False) == (note["response_type"], note["replace_original"])
        assert "out of date" in note["text"]


async def test_a_page_the_server_does_not_serve_says_so_in_one_true_sentence(
    docs_server: FakeDeveloperKnowledge,
) -> None:
    """A well-formed name the server does not have (an old button, a Pay page outside the
    corpus): the clicker hears that its full text is not available here — not that it
    is "no longer available", which may never have been true."""
    async with running_bot(docs_server) as bot:
        gone = "documents/docs.cloud.google.com/storage/docs/removed-page"
        await bot.action({"action_id": "show_doc:0", "value": gone}, message_ts=ANSWER_TS)
        [note] = await bot.fake.await_calls("chat.postEphemeral")
        await bot.finished(1)
        assert "no full text of that page: open its link instead" in note.args["text"]
        assert "no longer" not in note.args["text"]
        assert [] == bot.fake.calls_to("chat.postMessage")


async def test_show_doc_when_the_bot_was_removed_answers_the_clicker_privately(
    docs_server: FakeDeveloperKnowledge,
) -> None:
    """If the thread is closed to the bot, the page goes to the clicker via response_url."""
    async with running_bot(docs_server) as bot:
        bot.fake.fail("chat.postMessage", "not_in_channel")
        sent = await bot.action({"action_id": "show_doc:0", "value": BUCKETS}, message_ts=ANSWER_TS)
        await bot.finished(1)
        assert sent.key is not None
        [page] = bot.fake.responses_to(sent.key)
        assert "/invite" in page["text"]
        assert "gcloud storage buckets create" in shown(page)
        assert [] == bot.fake.invalid_payloads


async def test_unknown_actions_are_acknowledged_and_ignored(
    docs_server: FakeDeveloperKnowledge,
) -> None:
    """A click on something we did not make is acked and does nothing."""
    async with running_bot(docs_server) as bot:
        sent = await bot.action({"action_id": "feedback_thumbs", "value": BUCKETS})
        assert [("action", "ignored")] == await bot.finished(1)
        assert 200 == sent.status
        assert [] == docs_server.calls
        assert {"auth.test"} >= {c.method for c in bot.fake.calls}


@pytest.mark.parametrize("where", ["not_in_channel", "ephemeral_message"])
async def test_long_document_when_the_bot_cannot_post_is_paged_privately(
    docs_server: FakeDeveloperKnowledge, where: str
) -> None:
    """With no visible thread to attach a file to, a long document reaches the clicker in
    private pages, every part of it, and nothing claims an attachment."""
    async with running_bot(docs_server) as bot:
        if where == "not_in_channel":
            bot.fake.fail("chat.postMessage", "not_in_channel", times=20)
        sent = await bot.action(
            {"action_id": "show_doc:0", "value": LONG},
            message_ts=ANSWER_TS,
            ephemeral=where == "ephemeral_message",
        )
        assert sent.key is not None
        [first] = await bot.fake.await_responses(sent.key)
        pages = await private_pages(bot, first)
        outcomes = await bot.finished(len(pages))

        assert "Page 1 of" in shown(first)
        assert len(pages) > 1
        assert [] == sections_missing(pages, 120)
        assert not any("attached" in shown(body) for _, body in bot.fake.responses)
        assert [] == [c.method for c in bot.fake.calls if c.method.startswith("files.")]
        assert [] == [c for c in bot.fake.calls_to("chat.postMessage") if c.result.get("ok")]
        assert [("action", "ok")] * len(pages) == outcomes
        assert [] == bot.fake.invalid_payloads


@pytest.mark.parametrize(
    ("method", "error"),
    [
        ("files.getUploadURLExternal", "missing_scope"),
        ("files.completeUploadExternal", "not_in_channel"),
    ],
)
async def test_failed_upload_falls_back_to_pages(
    docs_server: FakeDeveloperKnowledge, method: str, error: str
) -> None:
    """When the file cannot be uploaded, its intro becomes page 1 of the paged document (no
    claim of an attachment is left) and Next page reaches every other page in the thread."""
    async with running_bot(docs_server) as bot:
        bot.fake.fail(method, error)
        await bot.action({"action_id": "show_doc:0", "value": LONG}, message_ts=ANSWER_TS)
        [update] = await bot.fake.await_calls("chat.update")
        assert [("action", "upload_failed")] == await bot.finished(1)
        [intro] = bot.fake.calls_to("chat.postMessage")
        pages = [update.args]
        while (value := next_page_value(pages[-1])) is not None:
            await bot.action(
                {"action_id": "doc_next_page", "value": value},
                message_ts=intro.result["ts"],
                thread_ts=ANSWER_TS,
            )
            posted = await bot.fake.await_calls("chat.postMessage", len(pages) + 1)
            pages.append(posted[-1].args)
        await bot.finished(len(pages))
        # what the thread shows in the end: each message as last posted or updated
        final = {c.result["ts"]: c.args for c in bot.fake.calls_to("chat.postMessage")}
        final[update.args["ts"]] = update.args

        assert ("C1", intro.result["ts"]) == (update.args["channel"], update.args["ts"])
        assert "Page 1 of" in shown(update.args)
        assert {ANSWER_TS} == {p.args["thread_ts"] for p in bot.fake.calls_to("chat.postMessage")}
        assert not any("attached" in shown(args) for args in final.values())
        assert [] == sections_missing(pages, 120)
        assert [] == bot.fake.invalid_payloads


async def test_click_shows_progress_until_the_page_lands(
    docs_server: FakeDeveloperKnowledge,
) -> None:
    """While a slow document is fetched the clicked message wears a progress reaction, which
    goes once the page is in the thread."""
    docs_server.latency = 0.3
    async with running_bot(docs_server) as bot:
        await bot.action({"action_id": "show_doc:0", "value": BUCKETS}, message_ts=ANSWER_TS)
        [added] = await bot.fake.await_calls("reactions.add")
        posted_while_fetching = len(bot.fake.calls_to("chat.postMessage"))
        await bot.finished(1)
        order = [c.method for c in bot.fake.calls if c.method != "auth.test"]
        [removed] = bot.fake.calls_to("reactions.remove")

        assert 0 == posted_while_fetching
        assert ["reactions.add", "chat.postMessage", "reactions.remove"] == order
        assert ("C1", ANSWER_TS) == (added.args["channel"], added.args["timestamp"])
        assert added.args == removed.args


async def test_click_is_acknowledged_before_a_slow_fetch(
    docs_server: FakeDeveloperKnowledge,
) -> None:
    """Slack gets its 200 for a click while get_documents is still working."""
    docs_server.latency = 1.0
    async with running_bot(docs_server) as bot:
        sent = await bot.action({"action_id": "show_doc:0", "value": BUCKETS}, message_ts=ANSWER_TS)
        posted_when_acked = len(bot.fake.calls_to("chat.postMessage"))
        await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)

        assert (200, 0) == (sent.status, posted_when_acked)
