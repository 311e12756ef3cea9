"""Verified answers over signed HTTP: a generated answer's commands carry ✓ / ⚠ marks from
the pages it cites, fetched in one get_documents call (none when cached), and the answer
goes out on time, "not checked", when the pages cannot be had."""

from __future__ import annotations

import json
import time
from typing import Any

from tests.fakes.mcp_servers import FakeDeveloperKnowledge, Fault, google_error
from tests.slack_harness import running_bot

RUN = "documents/docs.cloud.google.com/run/docs/deploying"
RUN_PAGE = """# Deploying to Cloud Run

## Deploy a service

```bash
gcloud run deploy SERVICE --image IMAGE_URL --region REGION
gcloud run deploy SERVICE --image IMAGE_URL --service-account SERVICE_ACCOUNT_EMAIL
```
"""
ANSWER = """Deploy it:

```bash
gcloud run deploy my-service --image gcr.io/my-project/app --region us-central1
```

Then give it its identity:

```bash
gcloud run deploy my-service --image gcr.io/my-project/app --service-acount sa@x.iam
```
"""
QUESTION = "how do I deploy to cloud run?"


def _contexts(args: dict[str, Any]) -> list[str]:
    return [
        element["text"]
        for block in args.get("blocks", [])
        if block["type"] == "context"
        for element in block["elements"]
    ]


def _with_run_page(dk: FakeDeveloperKnowledge, title: str = "Deploying to Cloud Run") -> None:
    dk.add_document(RUN, title, RUN_PAGE)
    dk.answers[QUESTION] = (ANSWER, [RUN])


async def test_a_found_and_a_planted_command_each_get_their_mark_from_one_fetch(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """The correct command is ✓ in source 1, the misspelled flag ⚠, each naming the command
    once and no count beside them; one get_documents call."""
    _with_run_page(dk_server)
    async with running_bot(dk_server) as bot:
        await bot.mention(QUESTION, ts="1710000000.000100")
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)
        metrics = bot.deps.metrics

    assert [
        "✓ `gcloud run deploy` — in source 1, under “Deploy a service”",
        "⚠ `gcloud run deploy` — `--service-acount` is not in the cited pages",
    ] == _contexts(post.args)
    assert 1 == len(dk_server.tool_calls("get_documents"))
    assert 1 == metrics.counter_value("gdocs_snippets_total", result="found")
    assert 1 == metrics.counter_value("gdocs_snippets_total", result="partly")
    assert [] == bot.fake.invalid_payloads


async def test_a_cached_answer_keeps_its_marks_without_another_call(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Asked again, the answer comes from the cache with the same marks: no upstream call."""
    _with_run_page(dk_server)
    async with running_bot(dk_server) as bot:
        await bot.mention(QUESTION, ts="1710000000.000200")
        await bot.finished(1)
        await bot.mention(QUESTION, ts="1710000000.000201")
        first, second = await bot.fake.await_calls("chat.postMessage", count=2)
        await bot.finished(2)

    assert _contexts(first.args) == _contexts(second.args)
    assert 1 == len(dk_server.tool_calls("answer_query"))
    assert 1 == len(dk_server.tool_calls("get_documents"))


async def test_pages_already_cached_are_not_fetched_again(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Another question citing the same page is checked from the document cache."""
    _with_run_page(dk_server)
    dk_server.answers["how do I run a container on cloud run?"] = (ANSWER, [RUN])
    async with running_bot(dk_server) as bot:
        await bot.mention(QUESTION, ts="1710000000.000300")
        await bot.finished(1)
        await bot.mention("how do I run a container on cloud run?", ts="1710000000.000301")
        _, second = await bot.fake.await_calls("chat.postMessage", count=2)
        await bot.finished(2)

    assert 2 == len(dk_server.tool_calls("answer_query"))
    assert 1 == len(dk_server.tool_calls("get_documents"))
    assert "⚠ `gcloud run deploy` — `--service-acount` is not in the cited pages" in (
        _contexts(second.args)
    )


async def test_pages_that_cannot_be_fetched_leave_the_answer_not_checked(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """get_documents failing: the answer goes out whole, saying its commands were not
    checked, and no mark claims anything."""
    _with_run_page(dk_server)
    dk_server.faults.extend(
        google_error(404, "NOT_FOUND", "not found") for _ in range(3)
    )  # titles, then the check
    for fault in dk_server.faults:
        fault.tool = "get_documents"
    async with running_bot(dk_server) as bot:
        await bot.mention(QUESTION, ts="1710000000.000400")
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)
        metrics = bot.deps.metrics

    assert ["Commands not checked (the cited pages could not be fetched)"] == _contexts(post.args)
    assert "--service-acount" in json.dumps(post.args["blocks"])  # the answer itself is there
    assert 2 == metrics.counter_value("gdocs_snippets_total", result="unchecked")


async def test_slow_pages_leave_the_answer_on_time_and_not_checked(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """get_documents hanging: the answer is posted within the titles' and the check's
    budgets, "not checked"."""
    _with_run_page(dk_server)
    dk_server.faults.append(Fault(status=200, delay=6.0, tool="get_documents"))
    async with running_bot(dk_server, mcp_timeout_seconds=1.5, verify_timeout_seconds=0.5) as bot:
        started = time.monotonic()
        await bot.mention(QUESTION, ts="1710000000.000500")
        [post] = await bot.fake.await_calls("chat.postMessage", timeout=10)
        took = time.monotonic() - started
        await bot.finished(1)

    assert ["Commands not checked (the cited pages could not be fetched)"] == _contexts(post.args)
    assert took < 1.5 + 0.5 + 1.0


async def test_hostile_page_text_in_a_mark_stays_inert(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A page whose title and heading carry mentions and links cannot ping or link from a
    mark: the heading reaches Slack escaped (the title is the Sources list's to show)."""
    hostile = RUN_PAGE.replace("## Deploy a service", "## <!channel> see <https://evil.example|x>")
    dk_server.add_document(RUN, "<!here> <@U0BOSS> Deploying", hostile)
    dk_server.answers[QUESTION] = (ANSWER, [RUN])
    async with running_bot(dk_server) as bot:
        await bot.mention(QUESTION, ts="1710000000.000600")
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)

    found = _contexts(post.args)[0]
    assert "<!channel>" not in found
    assert "<https://evil.example" not in found
    assert "&lt;!channel&gt; see &lt;https://evil.example|x&gt;" in found
    assert all("<@U0BOSS>" not in text and "<!here>" not in text for text in _contexts(post.args))


async def test_an_answer_without_code_gets_no_marks(dk_server: FakeDeveloperKnowledge) -> None:
    """Prose only: no mark, no summary, and no get_documents call beyond the titles'."""
    dk_server.add_document(RUN, "Deploying to Cloud Run", RUN_PAGE)
    dk_server.answers[QUESTION] = ("Cloud Run scales to zero when idle.", [RUN])
    async with running_bot(dk_server) as bot:
        await bot.mention(QUESTION, ts="1710000000.000700")
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)

    assert [] == [t for t in _contexts(post.args) if "✓" in t or "⚠" in t or "command" in t]
    assert 1 == len(dk_server.tool_calls("get_documents"))


async def test_verify_answers_false_leaves_answers_unmarked(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """VERIFY_ANSWERS=false: the answer as before, no mark."""
    _with_run_page(dk_server)
    async with running_bot(dk_server, verify_answers=False) as bot:
        await bot.mention(QUESTION, ts="1710000000.000800")
        [post] = await bot.fake.await_calls("chat.postMessage")
        await bot.finished(1)

    assert not any("✓" in t or "⚠" in t or "not checked" in t for t in _contexts(post.args))
