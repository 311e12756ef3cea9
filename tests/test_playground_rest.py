"""`gdocs-bot playground` on Developer Knowledge's REST face (the loopback fake), in a real
headless Chromium: the page draws what issue 41 adds to an answer — citation markers over
multi-byte text, each page's date, the size on Show full doc, the channel's scope line and a
streamed step's early sources. Skipped when no Chromium is installed."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.playground_driver import CITED_QUESTION, Playground, needs_chromium, playground
from tests.playground_shots import ask_cited, last_item

pytestmark = needs_chromium
#: invisible: the bot puts one before a streamed marker (a `!` then `[` is no image)
WORD_JOINER = "\u2060"
SCOPE_LINE = "Google Cloud docs only · change with /gdocs channel products"


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[Playground]:
    with playground(tmp_path, rest=True) as running:
        yield running


def test_a_cited_answer_shows_markers_dates_and_its_scope(pg: Playground) -> None:
    answer = ask_cited(pg).locator(".thread .msg.bot")
    text = answer.inner_text().replace(WORD_JOINER, "")

    # each marker right after its sentence's full stop, over accents, an em dash and an emoji
    assert re.search(r"--location=europe-west6`?\.\s*\[1\] The location", text.replace("\n", ""))
    assert re.search(r"once the bucket exists\.\s*\[2\]", text)
    for number, page in ((1, "creating-buckets"), (2, "locations")):
        marker = answer.get_by_role("link", name=str(number), exact=True)
        assert marker.get_attribute("href", timeout=1000).endswith(page)
    assert 1 == text.count("updated 3 Nov 2026")
    assert 1 == text.count("updated 21 Sep 2026")
    assert 1 == text.count(SCOPE_LINE)
    assert text.index(SCOPE_LINE) < text.index("Für Zürich")
    pg.page.get_by_role("button", name="Show full doc 2 (file, 41 KB)").wait_for()


def test_a_posted_answer_links_its_markers_in_mrkdwn(pg: Playground) -> None:
    """`/gdocs <question>` posts blocks: the markers are mrkdwn links `<url|[1]>`."""
    pg.say("/gdocs channel products cloud")
    pg.log.get_by_text("limited my answers here", exact=False).wait_for()
    pg.say("/gdocs " + CITED_QUESTION)
    answer = last_item(pg, ".msg.bot:not(.eph) .blocks", CITED_QUESTION)
    text = answer.inner_text()

    for number, page in ((1, "creating-buckets"), (2, "locations")):
        marker = answer.get_by_role("link", name=f"[{number}]", exact=True)
        assert marker.get_attribute("href", timeout=1000).endswith(page)
    assert "<http" not in text  # no mrkdwn link left undrawn
    assert "|[" not in text
    assert 1 == text.count("updated 21 Sep 2026")
    assert 1 == text.count(SCOPE_LINE)


def test_a_streamed_step_shows_the_search_pages_before_the_answer(pg: Playground) -> None:
    held = threading.Event()
    pg.docs.answer_gate = held
    pg.say("/gdocs channel products cloud")
    pg.log.get_by_text("limited my answers here", exact=False).wait_for()
    pg.say("@gdocs " + CITED_QUESTION)
    try:
        early = pg.log.locator(".task .sources a")
        early.first.wait_for()
        assert ["Create buckets · Cloud Storage", "Bucket locations · Cloud Storage"] == (
            early.all_inner_texts()
        )
    finally:
        held.set()
    last_item(pg, ".thread .msg.bot .blocks", CITED_QUESTION)
    assert 0 == pg.log.locator(".task .sources a").count()  # the answer's Sources replace them
