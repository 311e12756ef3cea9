"""A hypothesis strategy for the renderer: text made of long runs of delimiters."""

from __future__ import annotations

from hypothesis import strategies as st

from bench.render_corpus import DELIMITERS


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
