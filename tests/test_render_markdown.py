"""Markdown from the documentation servers to Slack mrkdwn and section blocks."""

from __future__ import annotations

import pytest

from bot.render import markdown_to_blocks
from tests.test_render_support import (
    assert_no_live_markup,
    is_subsequence,
    non_space,
)

BASE = "https://docs.cloud.google.com/storage/docs/creating-buckets"
ZW = "\u200b"


@pytest.mark.parametrize(
    ("md", "expected"),
    [
        # headings
        ("# Title", "*Title*"),
        ("### Deep heading {#anchor}", "*Deep heading*"),
        ("## Before you begin {: #before-you-begin}", "*Before you begin*"),
        ("## Closing hashes ##", "*Closing hashes*"),
        ("Setext one\n==========", "*Setext one*"),
        ("Setext two\n---", "*Setext two*"),
        ("# **Bold** in a heading", "*Bold in a heading*"),
        ("# Heading\nText right under it", "*Heading*\nText right under it"),
        ("# Heading\n\nParagraph", "*Heading*\nParagraph"),
        ("#hashtag is text", "#hashtag is text"),
        # emphasis
        ("**bold** and __bold__", "*bold* and *bold*"),
        ("*italic* and _italic_", "_italic_ and _italic_"),
        ("~~struck~~", "~struck~"),
        ("***both***", "*_both_*"),
        ("**bold with [a link](https://x.example/)**", "*bold with <https://x.example/|a link>*"),
        ("snake_case_name and 2*3*4", "snake_case_name and 2*3*4"),
        # code
        ("`gcloud storage ls`", "`gcloud storage ls`"),
        ("`a <b> & c`", "`a &lt;b&gt; &amp; c`"),
        ("`` code with ` tick ``", "`code with ` tick`"),
        ("`**not bold**`", "`**not bold**`"),
        ("```python\nx = 1 < 2\n```", "```\nx = 1 &lt; 2\n```"),
        ("~~~\ntilde fence\n~~~", "```\ntilde fence\n```"),
        ("```\nunclosed <x>", "```\nunclosed &lt;x&gt;\n```"),
        ("```\n    indented\n\ttab\n```", "```\n    indented\n    tab\n```"),
        ("````\n```\ninner\n```\n````", f"```\n`{ZW}`{ZW}`\ninner\n`{ZW}`{ZW}`\n```"),
        ("```\n\n\n```\nafter", "after"),
        # links and images
        ("[label](https://x.example/a)", "<https://x.example/a|label>"),
        ('[label](https://x.example/a "Title")', "<https://x.example/a|label>"),
        ("[a](https://x.example/a_(b))", "<https://x.example/a_(b)|a>"),
        ("[relative](/storage/docs/x)", "<https://docs.cloud.google.com/storage/docs/x|relative>"),
        ("[sibling](naming)", "<https://docs.cloud.google.com/storage/docs/naming|sibling>"),
        ("[anchor](#step-2)", f"<{BASE}#step-2|anchor>"),
        ("[js](javascript:alert(1))", "js"),
        ("[mail](mailto:a@example.com)", "mail"),
        ("[**bold label**](https://x.example/)", "<https://x.example/|bold label>"),
        ("[google.com](https://evil.example/)", "<https://evil.example/|evil.example/>"),
        ("![Diagram](https://x.example/d.png)", "<https://x.example/d.png|Diagram>"),
        ("![](https://x.example/d.png)", "<https://x.example/d.png|image>"),
        ("<https://x.example/auto>", "<https://x.example/auto|x.example/auto>"),
        ("see https://x.example/?a=1&b=2 now", "see https://x.example/?a=1&amp;b=2 now"),
        ('<a href="https://x.example/">anchor</a>', "<https://x.example/|anchor>"),
        # lists
        ("- one\n- two", "• one\n• two"),
        ("* star\n+ plus", "• star\n• plus"),
        (
            "- one\n  - nested\n    - deeper\n      - deepest\n- back",
            "• one\n    ◦ nested\n        ▪ deeper\n            ▪ deepest\n• back",
        ),
        ("1. one\n2. two\n   1. sub\n3) three", "1. one\n2. two\n    1. sub\n3. three"),
        ("- [ ] todo\n- [x] done", "• ☐ todo\n• ☑ done"),
        ("- item\nlazy continuation", "• item\n    lazy continuation"),
        ("- item\n\n  indented paragraph\n- next", "• item\n\n    indented paragraph\n• next"),
        ("Intro:\n- bullet interrupts", "Intro:\n\n• bullet interrupts"),
        ("In\n2024. numbers do not", "In 2024. numbers do not"),
        ("- **bold** item with `code`", "• *bold* item with `code`"),
        # quotes
        ("> quoted *text*\n> more", "> quoted _text_ more"),
        ("> first\n>\n> second", "> first\n>\n> second"),
        ("> a\n> > nested", "> a\n>\n> nested"),
        ("> &lt;b&gt;", "> &amp;lt;b&amp;gt;"),
        # rules
        ("before\n\n---\n\nafter", "before\n\n───\n\nafter"),
        ("a\n\n***", "a\n\n───"),
        ("a\n\n- - -", "a\n\n───"),
        # HTML
        ("<div>text <b>kept</b></div>", "text kept"),
        ("a<br>b<br/>c", "a\nb\nc"),
        ("List<String> and <T>", "List&lt;String&gt; and &lt;T&gt;"),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("<!-- hidden -->visible", "visible"),
        ("before\n<!-- a\nmulti-line\ncomment -->\nafter", "before\n\nafter"),
        ("<devsite-selector>x</devsite-selector>", "x"),
        ("[Docs](https://x.example/){: .external} here", "<https://x.example/|Docs> here"),
        ("Text {: #id .class} and {not an attribute}", "Text  and {not an attribute}"),
        # paragraphs
        ("line one\nline two", "line one line two"),
        ("hard  \nbreak", "hard\nbreak"),
        ("hard\\\nbreak", "hard\nbreak"),
        ("para\n\n\n\npara2", "para\n\npara2"),
        ("\\*literal\\* \\_x\\_", "*literal* _x_"),
        ("&lt;!channel&gt; &amp; &copy;", "&amp;lt;!channel&amp;gt; &amp;amp; &amp;copy;"),
        ("a\r\nb\rc", "a b c"),
        ("", ""),
        ("   \n\n  ", ""),
    ],
)
def test_markdown_constructs_become_slack_mrkdwn(md: str, expected: str) -> None:
    """Each Markdown construct renders as its Slack equivalent, with all text escaped."""
    assert expected == markdown_to_mrkdwn(md, base_url=BASE)


def test_relative_links_stay_text_without_a_base_url() -> None:
    """An answer has no page to resolve `/x` against: the label is shown, unlinked."""
    assert "see relative" == markdown_to_mrkdwn("see [relative](/storage/x)")


@pytest.mark.parametrize(
    ("md", "expected"),
    [
        (
            "| Name | Type |\n|------|:----:|\n| `foo` | string |\n| bar | int |",
            "```\nName | Type\n-----+-------\nfoo  | string\nbar  | int\n```",
        ),
        ("Name | Type\n--- | ---\na | b", "```\nName | Type\n-----+-----\na    | b\n```"),
        (
            "| a | b |\n|---|---|\n| <x> & y | [l](https://x.example/) |",
            "```\na       | b\n--------+--\n&lt;x&gt; &amp; y | l\n```",
        ),
        (
            "| a | b |\n|---|---|\n| pipe \\| in cell | `code` |",
            "```\na              | b\n---------------+-----\npipe | in cell | code\n```",
        ),
        ("| only header |\n|---|", "```\nonly header\n-----------\n```"),
        ("| a | b |\n|---|---|\n| 1 |", "```\na | b\n--+--\n1 |\n```"),
        ("| a | b |\n|---|---|\n| ` | **x** |", "```\na | b\n--+--\n` | x\n```"),
    ],
)
def test_narrow_tables_become_monospaced_grids(md: str, expected: str) -> None:
    """A pipe table Slack cannot draw is laid out in a code block, columns aligned."""
    assert expected == markdown_to_mrkdwn(md)


def test_wide_tables_become_one_bullet_per_row_with_live_links() -> None:
    """A table too wide for a phone becomes a list of rows, each cell named by its header."""
    md = (
        "| Field | Type | Description |\n|---|---|---|\n"
        "| `apiVersion` | number | Major API version. Set to 2 for this release of the API. |\n"
        "| `allowedPaymentMethods` | object | "
        "See [PaymentMethod](https://developers.google.com/pay/x). |"
    )
    expected = (
        "• *Field:* `apiVersion` · *Type:* number · *Description:* Major API version. "
        "Set to 2 for this release of the API.\n"
        "• *Field:* `allowedPaymentMethods` · *Type:* object · *Description:* See "
        "<https://developers.google.com/pay/x|PaymentMethod>."
    )
    assert expected == markdown_to_mrkdwn(md)


def markdown_to_mrkdwn(md: str, *, base_url: str | None = None) -> str:
    """The sections' text, a divider shown as "───"."""
    blocks = markdown_to_blocks(md, max_chars=3000, base_url=base_url)
    return "\n\n".join(b["text"]["text"] if b["type"] == "section" else "───" for b in blocks)


HOSTILE = [
    "<!channel>",
    "<!here>",
    "<!everyone>",
    "<@U123>",
    "<@W999|boss>",
    "<#C1>",
    "<#C1|general>",
    "<!subteam^S1>",
    "<!subteam^S1|@team>",
    "<!date^1392734382^{date}|fallback>",
    "<https://evil|google.com>",
    "<http://evil.example|https://google.com>",
    "<mailto:a@b.c|mail>",
    "&lt;!channel&gt;",
    "&#60;!here&#62;",
    "&amp;lt;@U1&amp;gt;",
    "<<!channel>>",
    "<\x00!channel>",
    "<!chan\x00nel>",
    "\u202e<!channel>\u202c",
]


@pytest.mark.parametrize("hostile", HOSTILE)
@pytest.mark.parametrize(
    "template",
    [
        "{x}",
        "# {x}",
        "- {x}\n  - {x}",
        "> {x}",
        "**{x}**",
        "_{x}_",
        "`{x}`",
        "```\n{x}\n```",
        "[{x}](https://x.example/)",
        "[label](https://x.example/{x})",
        "![{x}](https://x.example/i.png)",
        "| {x} | b |\n|---|---|\n| {x} | {x} |",
        "| h |\n|---|\n| {x} " + "long " * 30 + "|",
        "<b>{x}</b>",
        '<a href="https://x.example/">{x}</a>',
        "{x}" + " word" * 1000,
    ],
)
def test_hostile_text_never_becomes_live_slack_markup(hostile: str, template: str) -> None:
    """Nobody gets pinged and no link is spoofed, whatever construct the text hides in."""
    md = template.replace("{x}", hostile)
    blocks = markdown_to_blocks(md, base_url=BASE)
    message = {"text": "x", "blocks": blocks}
    assert_no_live_markup(message, [md], base_url=BASE)  # type: ignore[arg-type]


def test_link_whose_label_looks_like_another_url_shows_the_real_target() -> None:
    """A label naming another site is replaced, so the reader sees where the link goes."""
    assert "<https://evil.example/|evil.example/>" == markdown_to_mrkdwn(
        "[https://google.com](https://evil.example/)"
    )


def test_rtl_emoji_and_unicode_pass_through_unchanged() -> None:
    """Right-to-left scripts, emoji sequences and CJK are kept exactly."""
    md = "שלום עולם مرحبا 👩‍💻🇮🇹 中文 e\u0301"
    assert md == markdown_to_mrkdwn(md)


def test_nul_bytes_and_control_characters_are_dropped() -> None:
    """Control characters never reach Slack, in text or in code."""
    md = "a\x00b\x1b[31mred\n\n```\nc\x00d\x07\n```"
    assert "ab[31mred\n\n```\ncd\n```" == markdown_to_mrkdwn(md)


# --- splitting into blocks ----------------------------------------------------------------


def _section_texts(blocks: list[dict[str, object]]) -> list[str]:
    return [b["text"]["text"] for b in blocks if b["type"] == "section"]  # type: ignore[index]


def test_short_markdown_is_one_section() -> None:
    """Everything that fits goes in one section block."""
    assert [
        {"type": "section", "text": {"type": "mrkdwn", "text": "*Title*\nBody"}}
    ] == markdown_to_blocks("# Title\n\nBody")


def test_horizontal_rules_become_divider_blocks_without_doubles() -> None:
    """A rule is a divider block; rules in a row make one divider."""
    blocks = markdown_to_blocks("one\n\n---\n\n***\n\ntwo")
    assert ["section", "divider", "section"] == [b["type"] for b in blocks]


def test_empty_markdown_makes_no_blocks() -> None:
    """Nothing to show: no (invalid) empty section."""
    assert [] == markdown_to_blocks("  \n<!-- only a comment -->\n")


def test_paragraphs_are_split_between_paragraphs_when_possible() -> None:
    """Sections end at paragraph boundaries, never mid-paragraph when a paragraph fits."""
    paragraphs = [f"Paragraph {i} " + "word " * 50 for i in range(40)]
    blocks = markdown_to_blocks("\n\n".join(paragraphs), max_chars=1000)
    texts = _section_texts(blocks)
    assert len(texts) > 1
    for text in texts:
        assert len(text) <= 1000
        for piece in text.split("\n\n"):
            assert piece.strip() in {p.strip() for p in paragraphs}


def test_a_heading_stays_with_the_paragraph_under_it() -> None:
    """When the body moves to the next section, its heading moves with it."""
    md = "a " * 400 + "\n\n## Next\n\n" + "b " * 400
    texts = _section_texts(markdown_to_blocks(md, max_chars=1000))
    assert texts[1].startswith("*Next*\nb b")
    assert not texts[0].rstrip().endswith("*Next*")


def test_long_lines_are_hard_split_at_spaces_within_the_limit() -> None:
    """One enormous line is cut into sections, at word boundaries, losing nothing."""
    md = " ".join(f"w{i}" for i in range(5000))
    texts = _section_texts(markdown_to_blocks(md, max_chars=500))
    assert all(len(t) <= 500 for t in texts)
    assert all(t.endswith(" ") or t == texts[-1] for t in texts)
    assert non_space(md) == non_space("".join(texts))


def test_hard_split_never_cuts_an_entity_or_a_link() -> None:
    """A cut inside `&amp;` or `<url|label>` would show garbage or break the link."""
    md = ("&" * 7 + "[x](https://x.example/p)") * 200
    for text in _section_texts(markdown_to_blocks(md, max_chars=100)):
        assert len(text) <= 100
        stripped = text.replace("&amp;", "").replace("<https://x.example/p|x>", "")
        assert "&" not in stripped
        assert "<" not in stripped
        assert ">" not in stripped


def test_code_block_split_across_sections_is_closed_and_reopened() -> None:
    """Every section holding part of a long code block has its own ``` pair."""
    code = "\n".join(f"line {i} <tag> & more" for i in range(2000))
    md = f"Intro\n\n```python\n{code}\n```\n\nOutro"
    texts = _section_texts(markdown_to_blocks(md))
    assert len(texts) > 10
    for text in texts:
        assert len(text) <= 2900
        assert 0 == text.count("```") % 2
    code_lines = [line for text in texts for line in text.split("\n") if line.startswith("line ")]
    assert [f"line {i} &lt;tag&gt; &amp; more" for i in range(2000)] == code_lines
    assert texts[0].startswith("Intro\n\n```\nline 0")
    assert texts[-1].endswith("```\n\nOutro")


def test_a_code_line_longer_than_a_section_is_cut_inside_its_fences() -> None:
    """A huge code line is split, and each piece is still inside a code block."""
    md = "```\n" + "x" * 7000 + "\n```"
    texts = _section_texts(markdown_to_blocks(md))
    assert 3 == len(texts)
    assert all(t.startswith("```\n") and t.endswith("\n```") for t in texts)
    assert "x" * 7000 == "".join(t[4:-4] for t in texts)


def test_a_huge_table_is_split_into_valid_sections() -> None:
    """Thousands of table rows render, in order, within the section limit."""
    rows = "\n".join(f"| r{i} | {i * 2} |" for i in range(3000))
    md = f"| key | value |\n|---|---|\n{rows}"
    texts = _section_texts(markdown_to_blocks(md))
    assert all(len(t) <= 2900 and t.count("```") % 2 == 0 for t in texts)
    shown = "".join(texts)
    assert is_subsequence(non_space("".join(f"r{i}{i * 2}" for i in range(3000))), non_space(shown))


@pytest.mark.parametrize("max_chars", [39, 3001])
def test_section_size_outside_slack_limits_is_refused(max_chars: int) -> None:
    """A section limit above Slack's 3000 (or uselessly small) is a programming error."""
    with pytest.raises(ValueError, match="max_chars"):
        markdown_to_blocks("x", max_chars=max_chars)
