"""Pathological inputs for the renderer: runs of every delimiter, nested brackets, long
lines, huge tables, deep lists and quotes, and mixes of them, each about 100 kB; and a
hypothesis strategy that builds such runs. Linear rendering takes milliseconds on any of
them; the former regex renderer took minutes on several."""

from __future__ import annotations

from hypothesis import strategies as st

#: inline delimiters, each repeated into a run (the constructs `inline_scan` looks for)
DELIMITERS = ("`", "*", "_", "~", "[", "![", "<", "\\", "**", "__", "~~", "<!--", "{:", "](")
KB = 1000


def _table(rows: int) -> str:
    head = "| name | `code` | *note* | [link](https://x.dev/a) |\n| --- | :-: | --- | --- |\n"
    return head + "".join(f"| row {i} | `v{i}` | *n{i}* | [l](/p{i}) |\n" for i in range(rows))


def corpus() -> dict[str, str]:
    """name -> input; every one between 10 kB and ~150 kB."""
    cases: dict[str, str] = {
        "backticks_100k": "`" * 100 * KB,
        "backticks_20k_in_a_sentence": "Use this: x " + "`" * 20 * KB + " y",
        "backtick_runs_of_every_length": " ".join("`" * k for k in range(1, 440)),
        "backtick_pairs": "` " * 50 * KB,
        "backticks_with_closers_out_of_reach": ("`" * 50 + "a" * 2100) * 40,
        "images_open": "![" * 50 * KB,
        "images_open_then_close": "![" * 30 * KB + "](https://x.dev/i.png)",
        "links_open": "[" * 100 * KB,
        "links_unclosed_targets": "[a](" * 25 * KB,
        "link_label_of_pairs": "[" + "[a]" * 33 * KB,
        "nested_brackets": "[" * 50 * KB + "]" * 50 * KB,
        "nested_parens": "[a](" + "(" * 50 * KB + ")" * 50 * KB,
        "stars": "*" * 100 * KB,
        "underscores": "_" * 100 * KB,
        "tildes": "~" * 100 * KB,
        "angles": "<" * 100 * KB,
        "backslashes": "\\" * 100 * KB,
        "emphasis_openers": "*a " * 33 * KB,
        "underscore_openers": "_a " * 33 * KB,
        "strong_openers": "**a " * 25 * KB,
        "strike_openers": "~~a " * 25 * KB,
        "comments_open": "<!--" * 25 * KB,
        "anchor_with_many_hrefs": "<a " + 'href="x" ' * 11 * KB,
        "html_tag_names": "<a-" + "b-" * 50 * KB,
        "attribute_openers": "{: ." * 25 * KB,
        "long_line": "word " * 20 * KB,
        "heading_with_a_blank_run": "# a" + " " * 100 * KB + "b",
        "heading_closing_marks": "## x" + " #" * 50 * KB,
        "huge_table": _table(3000),
        "deep_list": "\n".join("  " * (i % 40) + f"- item {i}" for i in range(2500)),
        "deep_quote": ">" * 50 * KB + " x",
        "fences": "```\n" * 25 * KB,
        "mixed_delimiters": "*_~`[![<\\{" * 10 * KB,
        "mixed_lines": "\n".join(f"{d * 200} text {d * 3}" for d in DELIMITERS * 30),
    }
    return cases


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
