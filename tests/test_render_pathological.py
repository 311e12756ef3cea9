"""No input makes rendering slow: a corpus of pathological Markdown (delimiter runs of
10k-100k characters, nested brackets, long lines, huge tables, deep lists, mixes) goes
through every public render function within a generous time bound, and the linear scanner
renders ordinary text exactly as the former regex renderer did.

The time bounds are the one place a test times anything: they are a catastrophe guard (the
former renderer took minutes on several of these inputs; linear rendering takes
milliseconds), set at 2 s per 100 kB of input, and counted in this process's CPU time
with the garbage collector off and without coverage's tracer, not on the wall clock, so
neither a loaded machine nor the test run's instruments trip them (under coverage a
0.4-0.8 s render took 2.3-2.85 s on 2 cores).
Throughput itself is measured in the benchmark (`python -m bench.run --scenario render`).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.render_corpus import DELIMITERS, corpus
from bot.models import Answer, Document, Reference, SearchHit
from bot.render import (
    HomeInput,
    Message,
    RecentQuestion,
    document_page_spans,
    inline_mrkdwn,
    markdown_to_blocks,
    plain_text,
    render_answer,
    render_document_file_intro,
    render_document_page,
    render_home,
    render_unfurl,
)
from tests import render_inline_oracle as oracle
from tests.render_strategies import delimiter_runs
from tests.test_render_support import assert_no_live_markup, assert_valid_message

URI = "https://docs.cloud.google.com/storage/docs/x"
NAME = "documents/docs.cloud.google.com/storage/docs/x"
NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
CORPUS = corpus()
#: seconds allowed per 100 kB of input (at least this much for any case)
SECONDS_PER_100KB = 2.0


def _bound(chars: int) -> float:
    return SECONDS_PER_100KB * max(1.0, chars / 100_000)


def _timed(render: Callable[[], object]) -> float:
    """The CPU time of `render`, without the collector's passes over the rest of the test
    process (a full run's heap made a 0.4-0.8 s render take 2.3 s of CPU)."""
    gc.disable()
    try:
        started = time.process_time()
        render()
        return time.process_time() - started
    finally:
        gc.enable()


def _document(text: str) -> Document:
    return Document(name=NAME, uri=URI, title=text, content=text, description=text)


def _answer_message(text: str) -> object:
    ref = Reference(name=NAME, uri=URI, title=text)
    answer = Answer(kind="answer", query=text, text=text, references=(ref,))
    message = render_answer(answer, asker="U123ABC", question=text, feedback_id="a1")
    assert_valid_message(message)
    return message


def _search_message(text: str) -> object:
    hits = tuple(SearchHit(title=text, uri=URI, snippet=text, name=NAME) for _ in range(2))
    message = render_answer(Answer(kind="search", query=text, hits=hits))
    assert_valid_message(message)
    return message


def _document_pages(text: str) -> object:
    doc = _document(text)
    pages = [span.text(text) for span in document_page_spans(doc)]
    for page in {1, len(pages)}:  # only the requested page is converted
        assert_valid_message(render_document_page(doc, page, pages=pages))
    return pages


def _file_intro(text: str) -> object:
    message = render_document_file_intro(_document(text))
    assert_valid_message(message)
    return message


def _preview(text: str) -> object:
    return render_unfurl(text, text, URI, NAME)


def _home(text: str) -> object:
    recent = [RecentQuestion(text=text, asked_at=NOW)] * 5
    return render_home(HomeInput(answers_left=3, per_day=10, resets_at=NOW, now=NOW, recent=recent))


#: every public render function that takes upstream or user text, and how much of it
RENDERERS: dict[str, tuple[Callable[[str], object], int]] = {
    "answer": (_answer_message, 3),  # text, question, a source's title
    "search_hits": (_search_message, 5),  # query, two titles and two snippets
    "document_pages": (_document_pages, 1),
    "file_intro": (_file_intro, 1),
    "preview": (_preview, 2),
    "home": (_home, 5),
}


@pytest.mark.no_cover  # timed: coverage's tracer alone made a 0.4-0.8 s render take 2.6 s
@pytest.mark.parametrize("case", sorted(CORPUS))
def test_every_render_function_stays_linear_on_the_pathological_corpus(case: str) -> None:
    """Each pathological input renders through every render function within the bound."""
    text = CORPUS[case]
    assert len(text) >= 10_000
    slow = {}
    for name, (render, copies) in RENDERERS.items():
        took = _timed(lambda render=render: render(text))  # type: ignore[misc]
        if took > _bound(copies * len(text)):
            slow[name] = round(took, 2)
    assert not slow, f"{case}: {slow} seconds"


def test_a_20000_backtick_run_renders_as_text_in_an_answer() -> None:
    """The answer that froze the bot: the run is shown as it is, around the words."""
    text = "Use this: x " + "`" * 20_000 + " y"
    message = render_answer(Answer(kind="answer", query="q", text=text))
    assert_valid_message(message)
    sections = [b["text"]["text"] for b in message["blocks"] if b["type"] == "section"]
    assert sections[0].startswith("Use this: x `")  # (a ``` run is broken up for Slack)
    assert sum(section.count("`") for section in sections) >= 2000


def test_a_code_span_is_matched_by_its_run_length_across_longer_runs() -> None:
    """`` ``a ` ``` b`` `` is one code span: the closer is the next run of the same length."""
    assert inline_mrkdwn("``a ` ``` b`` c") == "`a ` ``` b` c"
    assert plain_text("x ```` y ` z ```` w") == "x y ` z w"


FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.no_cover  # timed, as above
@FAST
@given(delimiter_runs())
def test_delimiter_runs_render_quickly_and_safely(text: str) -> None:
    """Runs of up to 3,000 of any delimiter: fast, valid, and nothing becomes live markup."""
    answer = Answer(kind="answer", query="q", text=text)
    messages: list[Message] = []

    def render_both() -> None:
        messages.append(render_answer(answer))
        markdown_to_blocks(text)

    assert _timed(render_both) <= _bound(2 * len(text))
    message = messages[0]
    assert_valid_message(message)
    assert_no_live_markup(message, [text])


_PIECES = [*DELIMITERS, "``", "```", "]", "(", ")", ">", "-->", "<br>", "</a>", "<b>"]
_PIECES += ['<a href="https://x.dev/">', "https://x.dev/p", " ", "\n", "a", "x y", '"t"', "é"]
SHORT = st.lists(st.sampled_from(_PIECES), min_size=1, max_size=24).map("".join)


@settings(max_examples=800, deadline=None)
@given(SHORT)
def test_the_scanner_renders_short_text_exactly_as_the_former_regex(text: str) -> None:
    """Ordinary (short) text: the linear scanner's output is the former renderer's, exactly."""
    base = "https://docs.cloud.google.com/storage/docs/"
    assert inline_mrkdwn(text, base) == oracle.inline_mrkdwn(text, base)
    assert inline_mrkdwn(text, plain_emphasis=True) == oracle.inline_mrkdwn(
        text, plain_emphasis=True
    )
    assert plain_text(text) == oracle.plain_text(text)


@pytest.mark.parametrize("reach", [998, 999, 1000, 1001, 1999, 2000, 2001, 4999, 5000, 5001])
@pytest.mark.parametrize("opener", ["`", "``", "**", "*", "__", "_", "~~", "<!--"])
def test_the_scanner_keeps_the_former_reach_of_each_construct(opener: str, reach: int) -> None:
    """A closer just within or just beyond a construct's reach: the same result as before."""
    closer = {"<!--": "-->"}.get(opener, opener)
    text = f"a {opener}b{'c' * reach}{closer} d"
    assert inline_mrkdwn(text) == oracle.inline_mrkdwn(text)
    assert plain_text(text) == oracle.plain_text(text)
