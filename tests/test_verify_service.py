"""GoogleDocsService.verify against the MCP fakes: the cited pages in one get_documents
call of at most 20 names, none when cached, the check cached with the answer, and the
answer unchanged when there is nothing to check."""

from __future__ import annotations

import threading

import pytest

from bot import verify
from bot.models import Answer, Document, Reference, Verification
from bot.observability.metrics import Metrics
from bot.store import MemoryStore
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.upstream import service_for, settings_for

PAGE = "# Buckets\n\n```\ngcloud storage buckets create gs://BUCKET_NAME --location=LOCATION\n```\n"
CODE = "```\ngcloud storage buckets create gs://my-bucket --location=US\n```"


def _answer(names: list[str], text: str = CODE) -> Answer:
    refs = tuple(
        Reference(name=n, uri="https://" + n.removeprefix("documents/"), title=n) for n in names
    )
    return Answer(query="how do I create a bucket?", kind="answer", text=text, references=refs)


def _pages(dk: FakeDeveloperKnowledge, count: int) -> list[str]:
    names = [f"documents/docs.cloud.google.com/storage/docs/page-{i}" for i in range(count)]
    for name in names:
        dk.add_document(name, f"Page {name[-2:]}", PAGE)
    return names


async def test_twenty_five_cited_pages_are_read_in_one_call_of_twenty(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """More than 20 references: the first 20 pages, one get_documents call."""
    names = _pages(dk_server, 25)
    async with service_for(settings_for(dk_server)) as service:
        checked = await service.verify(_answer(names))

    [call] = dk_server.tool_calls("get_documents")
    assert names[:20] == call.arguments["names"]
    assert checked.verification is not None
    assert ["found"] == [s.result for s in checked.verification.snippets]


async def test_cached_pages_and_a_cached_check_cost_no_call(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Pages fetched once are read from the document cache; a checked answer asked again
    comes from the answer cache with its check."""
    names = _pages(dk_server, 2)
    dk_server.answers["how do I create a bucket?"] = (CODE, names)
    metrics = Metrics()
    async with service_for(
        settings_for(dk_server), store=MemoryStore(), metrics=metrics
    ) as service:
        first = await service.verify(await service.ask("how do I create a bucket?"))
        again = await service.ask("how do I create a bucket?")
        second = await service.verify(again)

    assert 1 == len(dk_server.tool_calls("get_documents"))  # the titles' fetch, reused
    assert again.cached
    assert first.verification == again.verification == second.verification
    assert 1 == metrics.counter_value("gdocs_snippets_total", result="found")  # counted once


async def test_nothing_to_check_means_no_call(dk_server: FakeDeveloperKnowledge) -> None:
    """Prose only, a search result, or VERIFY_ANSWERS=false: no get_documents call."""
    names = _pages(dk_server, 1)
    prose = _answer(names, "Buckets hold objects.")
    search = _answer(names).model_copy(update={"kind": "search"})
    async with service_for(settings_for(dk_server)) as service:
        checked = await service.verify(prose)
        assert search == await service.verify(search)
    async with service_for(settings_for(dk_server, verify_answers=False)) as service:
        assert _answer(names) == await service.verify(_answer(names))

    assert checked.verification is not None
    assert () == checked.verification.snippets
    assert [] == dk_server.tool_calls("get_documents")


async def test_a_missing_page_leaves_the_answer_unchecked_and_uncached(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """A cited page the server does not have: "unchecked", and tried again next time."""
    names = [*_pages(dk_server, 1), "documents/docs.cloud.google.com/storage/docs/gone"]
    async with service_for(settings_for(dk_server)) as service:
        first = await service.verify(_answer(names))
        second = await service.verify(_answer(names))

    assert first.verification is not None
    assert "unchecked" == first.verification.status
    assert ["unchecked"] == [s.result for s in first.verification.snippets]
    assert 2 == len(dk_server.tool_calls("get_documents"))
    assert first == second


async def test_long_cited_pages_are_checked_in_a_worker_thread_with_the_same_marks(
    dk_server: FakeDeveloperKnowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages over 8,000 characters are checked off the event loop, with the same result."""
    name = "documents/docs.cloud.google.com/storage/docs/long-page"
    dk_server.add_document(name, "Long page", PAGE + "\n\nBuckets hold objects. " * 600)
    threads: list[threading.Thread] = []
    original = verify.check_answer

    def recording(text: str, pages: list[Document]) -> Verification:
        threads.append(threading.current_thread())
        return original(text, pages)

    monkeypatch.setattr(verify, "check_answer", recording)
    async with service_for(settings_for(dk_server)) as service:
        checked = await service.verify(_answer([name]))

    assert checked.verification is not None
    assert ["found"] == [s.result for s in checked.verification.snippets]
    assert 1 == len(threads)
    assert threading.main_thread() is not threads[0]
