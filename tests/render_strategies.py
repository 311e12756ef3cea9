"""Hypothesis strategies for the renderer: text made of long runs of delimiters; REST
answers' text, cited spans, page dates and sizes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import strategies as st

from bench.render_corpus import DELIMITERS
from bot.models import Citation


@st.composite
def delimiter_runs(draw: st.DrawFn, max_run: int = 3000) -> str:
    """Text made of long runs of delimiters, with a little text between them."""
    pieces = draw(
        st.lists(
            st.tuples(
                st.sampled_from(DELIMITERS),
                st.integers(min_value=1, max_value=max_run),
                st.sampled_from(["", " ", "a", "x y", "\n", "](u)", "https://x.dev/"]),
            ),
            min_size=1,
            max_size=8,
        )
    )
    return "".join(delimiter * count + gap for delimiter, count, gap in pieces)


#: pieces of a REST answer's text: multi-byte words (accents, CJK, emoji with modifiers and
#: ZWJ, combining marks), sentence stops, inline code, links, fenced code, tables and lists
ANSWER_PIECES = [
    "Créez ",
    "un bucket",
    "中文句子",
    "。",
    "🚀",
    "👍🏽",
    "👨\u200d👩\u200d👧",
    "e\u0301",
    ". ",
    "! ",
    "? ",
    " ",
    "\n",
    "\n\n",
    "`a. b`",
    "``x. ` y``",
    "[the docs.](https://x.dev/a.b)",
    "https://x.dev/p.q ",
    "**Note.** ",
    "- item ",
    "1. step ",
    "# Title\n",
    "\n```sh\ngcloud run deploy. --x\n```\n",
    "\n| a | b. c |\n|---|---|\n| 1 | 2. |\n",
    "> quoted. ",
    "[",
    "]",
    "*",
    "_",
]
answer_texts = st.lists(st.sampled_from(ANSWER_PIECES), max_size=25).map("".join)
#: a page's last change: unknown (MCP), or any moment, in UTC or another zone
updated_times = st.one_of(
    st.none(),
    st.datetimes(
        min_value=datetime(2000, 1, 1),
        max_value=datetime(2030, 12, 31),
        timezones=st.sampled_from(
            [UTC, timezone(timedelta(hours=-8)), timezone(timedelta(hours=9))]
        ),
    ),
)
#: a page's size in bytes: unknown, small, or enough to come as a file
page_sizes = st.one_of(st.none(), st.integers(0, 3_000_000))


@st.composite
def citations(draw: st.DrawFn, text: str, references: int) -> tuple[Citation, ...]:
    """Google's spans over `text`'s UTF-8 bytes, mostly valid, some past either end or
    overlapping, each naming some of `references` (and now and then one past them)."""
    size = len(text.encode())
    offsets = st.integers(-2, size + 2) if size else st.integers(-2, 2)
    out = []
    for _ in range(draw(st.integers(0, 6))):
        start, end = sorted((draw(offsets), draw(offsets)))
        refs = draw(st.lists(st.integers(0, references), min_size=1, max_size=3))
        out.append(Citation(start=start, end=end, references=tuple(refs)))
    return tuple(out)
