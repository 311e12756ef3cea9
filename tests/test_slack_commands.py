"""`/gdocs` end to end: signed slash commands over HTTP, the real upstream client against the
MCP fakes, and a recording fake Slack Web API."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.mcp_servers import FakeDeveloperKnowledge, FakePay, Fault, google_error
from tests.fakes.oauth_token import FakeTokenServer
from tests.slack_harness import API_KEY, ASKER, Relay, running_bot


def tools_called(server: FakeDeveloperKnowledge) -> list[str]:
    """The tools asked, leaving out get_documents (the service fetches cited titles)."""
    return [c.tool for c in server.calls if c.tool != "get_documents"]


def blocks_text(args: dict[str, Any]) -> str:
    """Everything a message shows: its fallback text and every string in its blocks."""
    return json.dumps([args.get("text", ""), args.get("blocks", [])], ensure_ascii=False)


async def test_question_is_answered_visibly_naming_the_asker_and_the_question(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The answer is a channel message that says who asked what, with Show full doc buttons."""
    async with running_bot(dk_server) as bot:
        sent = await bot.command("how do I create a Cloud Storage bucket?")
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)

        assert 200 == sent.status
        assert "C1" == post.args["channel"]
        shown = blocks_text(post.args)
        assert f"<@{ASKER}>" in shown
        assert "how do I create a Cloud Storage bucket?" in shown
        assert "show_doc:1" in shown
        assert (False, False) == (post.args["unfurl_links"], post.args["unfurl_media"])
        assert "link_names" not in post.args
        assert "parse" not in post.args
        assert "answer_query" == dk_server.calls[0].tool
        assert [] == bot.fake.invalid_payloads


async def test_progress_is_ephemeral_and_deleted_when_the_answer_lands(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The asker sees "Looking that up…" at once, privately, and it goes away afterwards."""
    async with running_bot(dk_server) as bot:
        sent = await bot.command("what is Cloud Run?")
        await bot.finished(1)
        assert sent.key is not None
        progress, cleanup = bot.fake.responses_to(sent.key)

        assert progress == json.loads(sent.body)  # on screen with the ack: no extra call
        assert "ephemeral" == progress["response_type"]
        assert "Looking that up…" == progress["text"]
        assert {"response_type": "ephemeral", "delete_original": True} == cleanup
        assert 1 == len(bot.fake.calls_to("chat.postMessage"))
        assert [] == bot.fake.invalid_payloads


async def test_command_is_acknowledged_before_a_slow_answer_is_posted(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Slack gets its 200 while the upstream is still working; the answer comes later."""
    dk_server.latency = 1.0
    async with running_bot(dk_server) as bot:
        sent = await bot.command("how do I list buckets?")
        posted_when_acked = len(bot.fake.calls_to("chat.postMessage"))
        await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)

        assert (200, 0) == (sent.status, posted_when_acked)
        assert [] == bot.fake.invalid_payloads


async def test_keyword_lookup_goes_to_search_not_answer_query(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A bare keyword lookup spends no answer_query quota."""
    async with running_bot(dk_server) as bot:
        await bot.command("firestore pricing")
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)

        assert ["search_documents"] == [
            c.tool for c in dk_server.calls if c.tool != "get_documents"
        ]
        assert "Cloud Firestore pricing" in blocks_text(post.args)
        assert [] == bot.fake.invalid_payloads


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("search how do buckets work?", "search_documents"),
        ("ask firestore pricing", "answer_query"),
    ],
)
async def test_explicit_route_words_override_the_guess(
    dk_server: FakeDeveloperKnowledge, text: str, tool: str
) -> None:
    """`search …` and `ask …` choose the tool whatever the text looks like."""
    async with running_bot(dk_server) as bot:
        await bot.command(text)
        await bot.finished(1)
        assert [tool] == tools_called(dk_server)


async def test_help_is_ephemeral_and_calls_no_server(dk_server: FakeDeveloperKnowledge) -> None:
    """`/gdocs` and `/gdocs help` show usage to the asker only, without an upstream call."""
    async with running_bot(dk_server) as bot:
        sents = [await bot.command(text) for text in ("", "   ", "help", "HELP")]
        await bot.finished(len(sents))
        usages = [bot.fake.responses_to(sent.key) for sent in sents if sent.key]

        assert 4 == len(usages)
        for sent, [usage] in zip(sents, usages, strict=True):
            assert json.loads(sent.body) == usage  # carried by the acknowledgement
            assert "ephemeral" == usage["response_type"]
            assert "/gdocs search" in blocks_text(usage)
        assert ([], []) == (dk_server.calls, bot.fake.calls_to("chat.postMessage"))
        assert [] == bot.fake.invalid_payloads


async def test_not_in_channel_sends_the_answer_ephemerally_with_the_invite_hint(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """When the bot may not post, the asker still gets the answer, privately, and a hint."""
    async with running_bot(dk_server) as bot:
        bot.fake.fail("chat.postMessage", "not_in_channel")
        sent = await bot.command("how do I create a bucket?")
        await bot.finished(1)
        assert sent.key is not None
        _progress, answer = bot.fake.responses_to(sent.key)

        assert "ephemeral" == answer["response_type"]
        assert answer["replace_original"] is True  # the answer takes the progress's place
        assert "/invite" in answer["text"]
        assert "show_doc:1" in blocks_text(answer)
        assert [] == bot.fake.invalid_payloads


async def test_channel_not_found_falls_back_the_same_way(dk_server: FakeDeveloperKnowledge) -> None:
    """A DM or private channel the bot is not in is handled like not_in_channel."""
    async with running_bot(dk_server) as bot:
        bot.fake.fail("chat.postMessage", "channel_not_found")
        sent = await bot.command("firestore pricing", channel="D999")
        await bot.finished(1)
        assert sent.key is not None
        assert "/invite" in bot.fake.responses_to(sent.key)[-1]["text"]


@pytest.fixture
def oauth_pay(tmp_path: Path, pay_server: FakePay) -> Any:
    """Settings that configure OAuth so Pay questions reach the Pay server."""
    tokens = FakeTokenServer().start()
    tokens.tokens.extend(["pay-token"] * 5)
    key_file = tokens.service_account_file(tmp_path)
    yield {"google_application_credentials": key_file, "google_cloud_project": "test-project"}
    tokens.stop()


async def test_pay_question_goes_to_pay_in_the_askers_locale(
    dk_server: FakeDeveloperKnowledge, pay_server: FakePay, oauth_pay: dict[str, Any]
) -> None:
    """A Google Pay question searches the Pay docs with the asker's Slack locale."""
    async with running_bot(dk_server, pay_server, **oauth_pay) as bot:
        bot.fake.locales[ASKER] = "it-IT"
        await bot.command("PaymentDataRequest fields")
        await bot.command("how do I build a PaymentDataRequest?")
        await bot.finished(2)

        # the two run concurrently: either may reach the Pay server first
        calls = sorted((c.arguments for c in pay_server.calls), key=lambda a: str(a["userQuery"]))
        assert [{"userQuery": "PaymentDataRequest fields", "languageCode": "it-IT"},
                {"userQuery": "how do I build a PaymentDataRequest?", "languageCode": "it-IT"}] == (
            calls
        )  # fmt: skip
        assert 1 == len(bot.fake.calls_to("users.info"))  # the locale is cached per user
        assert bot.fake.calls_to("users.info")[0].args["include_locale"] in {"1", "true"}
        # Developer Knowledge is only asked which Pay pages it serves (for Show full doc)
        assert {"get_documents"} >= {c.tool for c in dk_server.calls}
        assert [] == bot.fake.invalid_payloads


async def test_a_pay_result_developer_knowledge_cannot_show_gets_no_show_full_doc(
    dk_server: FakeDeveloperKnowledge, pay_server: FakePay, oauth_pay: dict[str, Any]
) -> None:
    """Pay's pages are not all in Developer Knowledge: a result it serves gets Show full doc,
    one it cannot show is listed and linked with no button that could only fail."""
    tutorial = "developers.google.com/pay/api/web/guides/tutorial"
    dk_server.add_document(f"documents/{tutorial}", "Tutorial", "# Tutorial\n\nSteps.")
    pay_server.pages.append(("Tutorial", f"https://{tutorial}", "PaymentDataRequest step by step."))
    async with running_bot(dk_server, pay_server, **oauth_pay) as bot:
        await bot.command("pay PaymentDataRequest")
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)
    shown = blocks_text(post.args)
    assert "PaymentDataRequest" in shown
    assert "Tutorial" in shown
    buttons = [e for b in post.args["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert [f"documents/{tutorial}"] == [e["value"] for e in buttons]
    assert "Show full doc 2" == buttons[0]["text"]["text"]  # the second result's number


async def test_pay_question_without_a_locale_is_sent_without_a_language(
    dk_server: FakeDeveloperKnowledge, pay_server: FakePay, oauth_pay: dict[str, Any]
) -> None:
    """If users.info fails, the Pay search goes out with no languageCode."""
    async with running_bot(dk_server, pay_server, **oauth_pay) as bot:
        bot.fake.fail("users.info", "user_not_found")
        await bot.command("google pay tokenization")
        await bot.finished(1)
        assert [{"userQuery": "google pay tokenization"}] == [c.arguments for c in pay_server.calls]


async def test_pay_question_without_pay_configured_is_searched_with_a_note(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Without OAuth the Pay question is a Developer Knowledge search, and the answer says so."""
    async with running_bot(dk_server) as bot:
        await bot.command("google pay pricing")
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)

        assert ["search_documents"] == [
            c.tool for c in dk_server.calls if c.tool != "get_documents"
        ]
        assert [] == bot.fake.calls_to("users.info")
        assert "Pay" in blocks_text(post.args)
        assert [] == bot.fake.invalid_payloads


async def test_doc_command_posts_the_document_in_the_channel(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """`/gdocs doc <URL>` brings the page into the channel."""
    async with running_bot(dk_server) as bot:
        await bot.command("doc <https://docs.cloud.google.com/storage/docs/creating-buckets>")
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)

        assert "gcloud storage buckets create" in blocks_text(post.args)
        assert ["get_documents"] == [c.tool for c in dk_server.calls]
        assert [] == bot.fake.invalid_payloads


LONG_DOC = "documents/docs.cloud.google.com/run/docs/very-long-reference"


@pytest.mark.parametrize("can_post", [True, False], ids=["in_channel", "not_in_channel"])
async def test_doc_command_for_a_long_document_attaches_it_only_where_it_can(
    dk_server: FakeDeveloperKnowledge, can_post: bool
) -> None:
    """`/gdocs doc` of a long page: in the channel, an intro and the file in its thread;
    where the bot cannot post, the asker gets page 1 privately with a Next page button and
    no mention of a file."""
    sections = [f"## Part {i}\n\n{'Deploy the service and check it. ' * 8}" for i in range(100)]
    dk_server.add_document(LONG_DOC, "Very long reference", "\n\n".join(sections))
    async with running_bot(dk_server) as bot:
        if not can_post:
            bot.fake.fail("chat.postMessage", "not_in_channel", times=5)
        sent = await bot.command("doc https://docs.cloud.google.com/run/docs/very-long-reference")
        await bot.finished(1)
        assert sent.key is not None
        shown = bot.fake.responses_to(sent.key)[-1]
        uploads = bot.fake.calls_to("files.completeUploadExternal")

        if can_post:
            [intro] = bot.fake.calls_to("chat.postMessage")
            assert "attached as a Markdown file" in blocks_text(intro.args)
            assert [intro.result["ts"]] == [u.args["thread_ts"] for u in uploads]
            assert {"response_type": "ephemeral", "delete_original": True} == shown
        else:
            assert [] == uploads
            assert "Page 1 of" in blocks_text(shown)
            assert "doc_next_page" in blocks_text(shown)
            assert "/invite" in shown["text"]
            assert "attached" not in json.dumps(bot.fake.responses)
        assert [] == bot.fake.invalid_payloads


async def test_doc_command_with_a_bad_reference_explains_privately(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A bad `doc` reference gets an ephemeral explanation and no upstream call."""
    refs = ["not a url", "https://docs.cloud.google.com/../etc/passwd", "documents/x", ""]
    async with running_bot(dk_server) as bot:
        keys = [(await bot.command(f"doc {ref}")).key for ref in refs]
        await bot.finished(len(refs))
        shown = [bot.fake.responses_to(key)[-1] for key in keys if key]

        assert ["ephemeral"] * len(refs) == [s["response_type"] for s in shown]
        assert all("documentation page" in s["text"] for s in shown)
        assert ([], []) == (dk_server.calls, bot.fake.calls_to("chat.postMessage"))


async def test_per_user_rate_limit_says_how_long_to_wait(dk_server: FakeDeveloperKnowledge) -> None:
    """The question over the per-minute limit gets a friendly ephemeral wait message."""
    async with running_bot(dk_server, rate_limit_per_user_per_minute=2) as bot:
        for text in ("firestore pricing", "bucket naming"):
            await bot.command(text)
        third = await bot.command("bucket location")
        await bot.command("bucket location", user="UOTHER1")
        await bot.finished(4)
        assert third.key is not None
        [limited] = bot.fake.responses_to(third.key)

        assert limited["text"].startswith(
            "You've asked 2 questions in the last minute — try again in"
        )
        assert "ephemeral" == limited["response_type"]
        assert 3 == len(bot.fake.calls_to("chat.postMessage"))  # the other user is not limited


async def test_upstream_timeout_is_a_short_message_and_the_next_question_works(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A slow upstream gives a short reason to the asker; the bot keeps answering."""
    dk_server.faults.append(Fault(delay=1.5, tool="answer_query"))
    async with running_bot(dk_server, mcp_timeout_seconds=0.5, mcp_max_retries=0) as bot:
        failed = await bot.command("how do I create a bucket?")
        await bot.finished(1)
        await bot.command("how do I delete a bucket?")
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(2)
        assert failed.key is not None
        _progress, reason = bot.fake.responses_to(failed.key)

        assert reason["replace_original"] is True
        assert "took too long" in reason["text"].lower()
        assert "Traceback" not in reason["text"]
        assert len(reason["text"]) < 300
        assert "delete a bucket" in blocks_text(post.args)
        assert [("command", "timeout"), ("command", "ok")] == bot.metrics.finished
        assert [] == bot.fake.invalid_payloads


HOSTILE = [
    "<!channel> how do buckets work?",
    "<!here> what is IAM?",
    "<@U0ADMIN1> please explain firestore",
    "<#C0GENERAL> how do I deploy?",
    "<https://evil.example|google.com> how do I sign in?",
    "what is <!subteam^S123|@admins>?",
    "🚀🔥 how do I deploy to Cloud Run? 🎉",
    "كيف أنشئ حاوية تخزين؟",  # RTL
    "how\x00 do\x00 nul bytes work?",
]


async def test_hostile_queries_are_echoed_escaped_and_ping_nobody(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Mentions, broadcasts and spoofed links in a question reach Slack only escaped."""
    async with running_bot(dk_server, rate_limit_per_user_per_minute=0) as bot:
        for text in HOSTILE:
            assert 200 == (await bot.command(text)).status
        await bot.finished(len(HOSTILE))
        sent = bot.fake.everything_sent()

        assert len(HOSTILE) == len(bot.fake.calls_to("chat.postMessage"))
        for raw in (
            "<!channel>",
            "<!here>",
            "<@U0ADMIN1>",
            "<#C0GENERAL>",
            "<https://evil",
            "<!subteam",
        ):
            assert raw not in sent
        assert "&lt;!channel&gt;" in sent
        assert "\\u0000" not in sent
        assert "\x00" not in sent
        assert all(a.get("link_names") is None for a in (c.args for c in bot.fake.calls))
        assert [] == bot.fake.invalid_payloads


@pytest.mark.parametrize(
    ("text", "expected"), [("x" * 10_000, "too long"), ("search", "the text is empty")]
)
async def test_unusable_queries_get_a_clear_private_message(
    dk_server: FakeDeveloperKnowledge, text: str, expected: str
) -> None:
    """A 10,000-character or empty query is refused with a short ephemeral reason."""
    async with running_bot(dk_server) as bot:
        sent = await bot.command(text)
        await bot.finished(1)
        assert sent.key is not None
        shown = bot.fake.responses_to(sent.key)[-1]

        assert "ephemeral" == shown["response_type"]
        assert expected in shown["text"].lower()
        assert len(shown["text"]) < 400
        assert ([], []) == (dk_server.calls, bot.fake.calls_to("chat.postMessage"))


async def test_commands_during_shutdown_are_told_to_retry(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Once draining, a new question gets "restarting" instead of starting work."""
    async with running_bot(dk_server) as bot:
        bot.deps.inflight.accepting = False
        sent = await bot.command("how do I create a bucket?")
        await bot.finished(1)
        assert sent.key is not None

        assert "restarting" in bot.fake.responses_to(sent.key)[0]["text"]
        assert [] == dk_server.calls
        assert [("command", "restarting")] == bot.metrics.finished


async def test_doc_command_for_a_missing_page_says_so_privately(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A well-formed URL the server does not have gets a short "not found" and a hint."""
    async with running_bot(dk_server) as bot:
        sent = await bot.command("doc https://docs.cloud.google.com/storage/docs/no-such-page")
        outcomes = await bot.finished(1)
        assert sent.key is not None
        shown = bot.fake.responses_to(sent.key)[-1]

        assert [("command", "not_found")] == outcomes
        assert "ephemeral" == shown["response_type"]
        assert "search" in shown["text"]
        assert [] == bot.fake.calls_to("chat.postMessage")


def on_tool(fault: Fault, tool: str = "answer_query") -> Fault:
    return dataclasses.replace(fault, tool=tool)


@dataclasses.dataclass(frozen=True)
class UpstreamFault:
    #: a fresh fault for one test (None: the server cannot be connected to at all)
    fault: Callable[[], Fault] | None
    #: what the notice must say (lowercased), and the request's outcome
    says: str
    outcome: str
    question: str = "how do I create a bucket?"
    follow_up: str = "how do I delete a bucket?"
    settings: tuple[tuple[str, Any], ...] = ()


#: every body carries the API key, as a careless server might echo it
FAULTS = {
    "401": UpstreamFault(
        lambda: on_tool(google_error(401, "UNAUTHENTICATED", f"Bad credentials: {API_KEY}")),
        says="check google_api_key",
        outcome="auth",
    ),
    "403": UpstreamFault(
        lambda: on_tool(google_error(403, "PERMISSION_DENIED", f"Denied for key {API_KEY}")),
        says="check google_api_key",
        outcome="auth",
    ),
    "malformed-json": UpstreamFault(
        lambda: on_tool(Fault(status=200, body=b'{"jsonrpc": "2.0", "id": 1, "result": {"con')),
        says="sent an answer i couldn't read",
        outcome="protocol",
    ),
    "10mb-body": UpstreamFault(
        lambda: on_tool(Fault(status=200, body=b'{"pad": "' + b"x" * 10_000_000 + b'"}')),
        says="sent an answer i couldn't read",
        outcome="protocol",
    ),
    "schema-violation": UpstreamFault(
        lambda: on_tool(
            Fault(
                status=200,
                rpc_result={"structuredContent": {"answerText": 42, "references": [API_KEY]}},
            )
        ),
        says="sent an answer i couldn't read",
        outcome="protocol",
    ),
    "endless-sse": UpstreamFault(
        lambda: on_tool(
            Fault(
                status=200,
                content_type="text/event-stream",
                chunks=[b": keep-alive\n\n"],
                chunk_delay=0.05,
                endless=True,
            )
        ),
        says="took too long to answer",
        outcome="timeout",
        settings=(("mcp_timeout_seconds", 1.0),),
    ),
    "500": UpstreamFault(
        lambda: on_tool(google_error(500, "INTERNAL", f"backend error, key {API_KEY}")),
        says="isn't answering right now",
        outcome="unavailable",
    ),
    "connection-refused": UpstreamFault(
        None, says="isn't answering right now", outcome="unavailable"
    ),
    "429-on-search": UpstreamFault(
        lambda: on_tool(
            google_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded: search requests per minute"),
            "search_documents",
        ),
        says="is getting too many requests right now",
        outcome="quota",
        question="firestore pricing",
        follow_up="bucket naming",
    ),
}


@pytest.mark.parametrize("case", FAULTS.values(), ids=FAULTS.keys())
async def test_upstream_faults_get_a_short_specific_notice_and_the_bot_keeps_answering(
    dk_server: FakeDeveloperKnowledge, caplog: pytest.LogCaptureFixture, case: UpstreamFault
) -> None:
    """Whatever the documentation server does wrong, the asker is told what, in a line, with
    no secret and no traceback, and the next question is answered."""
    caplog.set_level(logging.INFO)
    settings = dict(case.settings)
    relay = None
    if case.fault is None:
        relay = Relay(dk_server)
        settings["developer_knowledge_mcp_url"] = relay.url  # nothing listens there yet
    else:
        dk_server.faults.append(case.fault())
    async with running_bot(dk_server, **settings) as bot:
        failed = await bot.command(case.question)
        await bot.finished(1)
        if relay is not None:
            await relay.on()  # the server is back
        await bot.command(case.follow_up)
        [post] = await bot.fake.await_calls("chat.postMessage")
        outcomes = await bot.finished(2)
    if relay is not None:
        await relay.off()
    assert failed.key is not None
    _progress, notice = bot.fake.responses_to(failed.key)

    assert (200, True) == (failed.status, notice["replace_original"])
    assert case.says in notice["text"].lower()
    assert len(notice["text"]) < 400
    assert [("command", case.outcome), ("command", "ok")] == outcomes
    assert case.follow_up in blocks_text(post.args)
    assert "Traceback" not in bot.fake.everything_sent()
    assert API_KEY not in bot.fake.everything_sent()
    assert API_KEY not in caplog.text
    assert [] == list(dk_server.faults)  # the fault was really served
    assert [] == bot.fake.invalid_payloads
