"""Inline citation markers, as properties (issue 41, item 2): whatever the text (accents, CJK,
emoji, combining marks, code, links, tables) and whatever spans Google sends, each marker
ends a sentence at or after its span (before a code block its span ends in), never lands in
code or splits a link or a character, names only listed pages, and adds no line."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.models import Answer, Citation, Reference
from bot.render import (
    answer_markdown,
    answer_parts,
    markdown_to_blocks,
    marker_places,
    render_answer,
    streamed_answer,
    with_markers,
)
from tests.render_strategies import answer_texts, citations
from tests.test_render_support import assert_valid_message

FAST = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
#: reference index → Sources number: 1 and 2 are one page; 4 and up are not listed
LISTED = {0: 1, 1: 2, 2: 2, 3: 3}
#: a marker no answer text holds, to take them out again
_SENTINEL_RE = re.compile(r"⟦\d+⟧")
_LEAD_RE = re.compile(r"^[\s>*#\-+_|]*(?:\d+[.)])?\s*")


def _joins(char: str) -> bool:
    code = ord(char)
    combining = unicodedata.category(char).startswith("M")
    return combining or code in (0x200D, 0xFE0F) or 0x1F3FB <= code <= 0x1F3FF


def _char_end(text: str, end: int) -> int:
    """An independent reading of a byte offset: the characters wholly before it."""
    return len(text.encode()[: max(end, 0)].decode("utf-8", errors="ignore"))


def _ends_in_code(text: str, place: int, end: int) -> bool:
    """Between the marker and the span's end: a code fence, a table, only space, or only a
    line with no words (a bare list mark) — the span ended where no marker may stand."""
    if not text[place:end].strip():
        return True
    line_end = text.find("\n", end - 1)
    between = text[place : line_end if line_end >= 0 else len(text)]
    line = text[text.rfind("\n", 0, end) + 1 : end]
    return "```" in between or "|" in between or not _LEAD_RE.sub("", line).strip()


@FAST
@given(st.data(), answer_texts)
def test_markers_end_sentences_outside_code_and_take_nothing_away(
    data: st.DataObject, text: str
) -> None:
    cited = data.draw(citations(text, references=5))
    places = marker_places(text, cited, LISTED)
    sentinel = with_markers(text, places, lambda n: f"⟦{n}⟧")
    assert _SENTINEL_RE.sub("", sentinel) == text
    assert sentinel.count("\n") == text.count("\n")
    for place, numbers in places:
        assert list(numbers) == sorted(set(numbers))
        assert set(numbers) <= set(LISTED.values())
        after, before = text[place : place + 1], text[place - 1 : place]
        assert after in ("", " ", "\t", "\r", "\n") or before in "。！？", (text, place)
        assert not (after and _joins(after)), (text, place)
    for one in cited:  # each span alone: its marker at its sentence's end, or before the code
        found = marker_places(text, [one], LISTED)
        if not found:
            continue
        [(place, _)] = found
        end = _char_end(text, one.end)
        while end > _char_end(text, one.start) and text[end - 1].isspace():
            end -= 1
        assert place >= end or _ends_in_code(text, place, end), (text, one, place)


def _link(number: int) -> str:
    return f"https://x.dev/p{number}?a=1&b=2"


@FAST
@given(st.data(), answer_texts)
def test_slack_shows_every_marker_as_a_link_never_inside_code(
    data: st.DataObject, text: str
) -> None:
    """The Markdown converter (not our own reading of the text) finds each marker as a link
    `<url|[n]>`, none in a code block or code span, none swallowed by another link."""
    cited = data.draw(citations(text, references=5))
    places = marker_places(text, cited, LISTED)
    marked = with_markers(text, places, lambda n: f"[[{n}]]({_link(n)})")
    shown = "\n\n".join(b["text"]["text"] for b in markdown_to_blocks(marked) if "text" in b)
    prose = re.sub(r"```.*?```", "", shown, flags=re.DOTALL)
    found = re.findall(r"<https://x\.dev/p(\d)\?a=1&amp;b=2\|\[(\d)\]>", prose)
    assert all(a == b for a, b in found)
    assert len(found) == sum(len(n) for _, n in places), (marked, shown)


@FAST
@given(st.data(), answer_texts)
def test_every_surface_numbers_markers_within_its_sources_list(
    data: st.DataObject, text: str
) -> None:
    """Posted, streamed and printed: each marker names an entry its Sources list shows."""
    refs = tuple(
        Reference(name=f"documents/x.dev/p{i}", uri=f"https://x.dev/p{i % 3}", title=f"P{i}")
        for i in range(4)
    )
    cited = data.draw(citations(text, references=5))
    answer = Answer(query="q", kind="answer", text=text, references=refs, citations=cited)
    message = render_answer(answer)
    assert_valid_message(message)
    posted = " ".join(str(b) for b in message["blocks"])
    assert {int(n) for n in re.findall(r"\|\[(\d+)\]>", posted)} <= {1, 2, 3}
    streamed = streamed_answer(answer, answer_parts(answer)).markdown
    assert {int(n) for n in re.findall(r"\[\[(\d+)\]\(", streamed)} <= {1, 2, 3}
    printed = answer_markdown(answer)
    assert set(re.findall(r"\[(\d+)\](?!\()", printed)) <= {"1", "2", "3", "4"}


@FAST
@given(answer_texts)
def test_without_citations_the_text_is_untouched(text: str) -> None:
    assert with_markers(text, marker_places(text, [], LISTED), str) == text
    cited = [Citation(start=0, end=len(text.encode()), references=(9,))]
    assert marker_places(text, cited, LISTED) == []
