"""Inputs for the renderer: pathological ones (runs of every delimiter, nested brackets,
long lines, huge tables, deep lists and quotes, mixes), each about 100 kB, and a typical
documentation page. Linear rendering takes milliseconds on any of them; the former regex
renderer took minutes on several. Used by the render benchmark and the render tests
(tests/test_render_pathological.py, whose hypothesis strategy builds more such runs)."""

from __future__ import annotations

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


def typical_page(sections: int = 60) -> str:
    """A documentation page as Google's servers send them: headings, prose with inline code,
    links and emphasis, lists, a table, code fences (about 1.9 kB a section)."""
    parts = ["# Creating buckets\n"]
    for i in range(sections):
        parts.append(
            f"## Step {i}: configure the bucket\n\n"
            f"Use `gcloud storage buckets create gs://bucket-{i}` to create a bucket in the "
            f"**{i % 7}th** region; see [the locations page](/storage/docs/locations#{i}) and "
            "the _Console_ guide. Buckets hold objects; a bucket's name is global, so pick a "
            "name nobody else has taken. <br> Names may contain dashes and dots.\n\n"
            f"- Set the default storage class to `STANDARD` for item {i}.\n"
            "- Turn on *uniform bucket-level access* for new buckets.\n"
            "  - Nested: check the IAM policy with `gcloud storage buckets get-iam-policy`.\n"
            "1. Open the [Cloud console](https://console.cloud.google.com/storage).\n"
            "2. Click **Create**.\n\n"
            "| Flag | Meaning | Default |\n| --- | --- | --- |\n"
            f"| `--location` | where the data lives | `US` |\n| `--uniform` | IAM only | {i} |\n\n"
            "```sh\n"
            f"gcloud storage buckets create gs://bucket-{i} --location=us-east1\n"
            "gcloud storage ls\n```\n\n"
            "> **Note:** deleting a bucket deletes every object in it.\n"
        )
    return "\n".join(parts)
