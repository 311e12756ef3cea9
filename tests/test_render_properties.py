"""Property tests: for any Markdown-ish input, every message is valid, safe and complete.

The strategy builds documents from the constructs Google's servers send (headings, lists,
fences, links, tables, quotes, HTML) mixed with Slack markup, entities, control characters,
unicode and very long lines. Each fragment also says which words a reader must see.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.docs import Answer, Document, Reference, SearchHit
from bot.render import (
    document_pages,
    markdown_to_blocks,
    render_answer,
    render_document_page,
)
from bot.render.documents import document_page_spans
from tests.test_render_support import (
    assert_no_live_markup,
    assert_valid_message,
    is_subsequence,
    mrkdwn_texts,
    non_space,
    visible_words,
    words_of,
)

URI = "https://docs.cloud.google.com/storage/docs/creating-buckets"
NAME = "documents/docs.cloud.google.com/storage/docs/creating-buckets"
FAST = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

Fragment = tuple[str, list[str]]  # (markdown, words a reader must see)

WORDS = st.sampled_from(
    ["gcloud", "bucket", "Storage", "v2", "snake_case", "API", "Ωmega", "مرحبا", "שלום",
     "中文", "naïve", "x2", "😀", "👩‍💻", "e\u0301", "\u202eevil", "tab\tbed"]
)
HOSTILE = st.sampled_from(
    ["<!channel>", "<!here>", "<!everyone>", "<@U123>", "<@W1|x>", "<#C1>", "<#C1|general>",
     "<!subteam^S1>", "<https://evil|google.com>", "<http://evil.example|x>", "&lt;!channel&gt;",
     "&amp;", "&#60;!here&#62;", "&", "<", ">", "|", "\x00", "\x1b", "\x7f", "*", "_", "~", "`",
     "``", "```", "**", "__", "~~", "\\", "[", "]", "(", ")", "![", "<b>", "</div>", "<br>",
     "List<String>", "<!--", "-->", "<script>", "{#id}", "\r", "\u2028", "\ufeff"]
)
URLS = st.sampled_from(
    ["https://docs.cloud.google.com/storage/docs/x", "http://example.com/a?b=1&c=2",
     "https://evil.example/|pipe", "https://x.example/<&>", "javascript:alert(1)",
     "/storage/docs/relative", "naming", "#anchor", "mailto:a@example.com", "https://",
     "https://x.example/" + "p" * 1600]
)


def _word_fragment(word: str) -> Fragment:
    return word, words_of(word) and list(words_of(word).elements())


@st.composite
def inline(draw: st.DrawFn) -> Fragment:
    """One inline piece: a word, hostile text, emphasis, code, a link, an image, HTML."""
    word = draw(WORDS)
    words = list(words_of(word).elements())
    kind = draw(st.integers(0, 11))
    if kind == 0:
        return draw(HOSTILE), []
    if kind == 1:
        return f"**{word}**", words
    if kind == 2:
        return f"_{word}_", words
    if kind == 3:
        return f"`{word}`", words
    if kind == 4:
        return f"[{word}]({draw(URLS)})", words
    if kind == 5:
        return f"![{word}]({draw(URLS)})", words
    if kind == 6:
        return f"~~{word}~~", words
    if kind == 7:
        return f"<b>{word}</b>", words
    if kind == 8:
        return draw(URLS), []
    if kind == 9:
        return draw(st.text(max_size=12)), []
    return word, words


@st.composite
def line(draw: st.DrawFn) -> Fragment:
    pieces = draw(st.lists(inline(), min_size=1, max_size=8))
    return " ".join(p for p, _ in pieces), [w for _, ws in pieces for w in ws]


@st.composite
def block(draw: st.DrawFn) -> Fragment:
    """One block-level construct."""
    kind = draw(st.integers(0, 11))
    text, words = draw(line())
    if kind == 0:
        return "#" * draw(st.integers(1, 6)) + " " + text, []  # heading text may be plain-ified
    if kind == 1:
        items = draw(st.lists(line(), min_size=1, max_size=6))
        out = []
        for body, _ in items:
            indent = " " * draw(st.sampled_from([0, 2, 4, 6]))
            out.append(indent + draw(st.sampled_from(["- ", "* ", "1. ", "2) ", "- [ ] "])) + body)
        return "\n".join(out), []
    if kind == 2:
        return "\n".join("> " + b for b, _ in draw(st.lists(line(), min_size=1, max_size=4))), []
    if kind == 3:
        fence = draw(st.sampled_from(["```", "~~~", "````"]))
        body = draw(st.lists(st.sampled_from(["x = 1 < 2 && y", "<!channel>", "", "  indented",
                                             "&lt;", "```", "# not a heading"]), max_size=30))
        closing = draw(st.booleans())
        return fence + draw(st.sampled_from(["", "python", "sh"])) + "\n" + "\n".join(body) + (
            "\n" + fence if closing else ""
        ), []
    if kind == 4:
        columns = draw(st.integers(1, 4))
        rows = draw(st.lists(st.lists(inline(), min_size=columns, max_size=columns), max_size=8))
        head = "| " + " | ".join(f"h{i}" for i in range(columns)) + " |"
        sep = "|" + "---|" * columns
        body = ["| " + " | ".join(p.replace("|", "/") for p, _ in row) + " |" for row in rows]
        return "\n".join([head, sep, *body]), []
    if kind == 5:
        return draw(st.sampled_from(["---", "***", "___", "- - -"])), []
    if kind == 6:
        word = draw(WORDS)
        spaced = draw(st.booleans())
        count = draw(st.integers(1, 3000))
        return (word + " ") * count if spaced else word * count, []
    if kind == 7:
        count = draw(st.integers(100, 3000))
        return "```\n" + "code <&> line\n" * count + "```", []
    if kind == 8:
        return "<!-- " + text + " -->", []
    return text, words


@st.composite
def markdown(draw: st.DrawFn) -> Fragment:
    blocks = draw(st.lists(block(), max_size=12))
    joiner = draw(st.sampled_from(["\n\n", "\n", "\r\n\r\n"]))
    return joiner.join(b for b, _ in blocks), [w for _, ws in blocks for w in ws]


@st.composite
def visible_markdown(draw: st.DrawFn) -> Fragment:
    """Paragraphs whose every listed word must reach the reader."""
    paragraphs = draw(st.lists(line(), min_size=1, max_size=10))
    return "\n\n".join(p for p, _ in paragraphs), [w for _, ws in paragraphs for w in ws]


@FAST
@given(markdown())
def test_every_page_of_any_document_is_valid_safe_and_within_limits(fragment: Fragment) -> None:
    """All pages render to messages Slack accepts, with no markup but the renderer's."""
    md, _ = fragment
    doc = Document(name=NAME, uri=URI, title="Create <!here> buckets", content=md)
    pages = document_pages(doc)
    for number in range(1, len(pages) + 1):
        message = render_document_page(doc, number, pages=pages)
        assert_valid_message(message)
        assert_no_live_markup(message, [md, URI], base_url=URI)


@FAST
@given(markdown())
def test_pages_keep_every_character_of_the_source_in_order(fragment: Fragment) -> None:
    """The pages' slices are the source exactly; pages only ever add fences/table headers."""
    md, _ = fragment
    doc = Document(name=NAME, uri=URI, title="t", content=md)
    spans = document_page_spans(doc)
    assert md == "".join(md[s.start : s.end] for s in spans)
    pages = document_pages(doc)
    assert is_subsequence(non_space(md), non_space("".join(pages)))


@FAST
@given(visible_markdown())
def test_every_word_of_a_document_reaches_the_reader(fragment: Fragment) -> None:
    """Across all rendered pages, every word of the text is shown (escaping aside)."""
    md, words = fragment
    doc = Document(name=NAME, uri=URI, title="t", content=md)
    pages = document_pages(doc)
    seen: Counter[str] = Counter()
    for number in range(1, len(pages) + 1):
        seen += visible_words(render_document_page(doc, number, pages=pages))
    missing = Counter(words) - seen
    assert not missing, missing


@st.composite
def answers(draw: st.DrawFn) -> tuple[Answer, str | None, str | None]:
    md, _ = draw(markdown())
    kind = draw(st.sampled_from(["answer", "search", "pay"]))
    titles = st.one_of(WORDS, HOSTILE, st.text(max_size=200))
    refs = tuple(
        Reference(name=name, uri=uri, title=draw(titles))
        for name, uri in draw(
            st.lists(
                st.tuples(
                    st.sampled_from([NAME, NAME + "/b", NAME + "/c", "documents/x.example/" + "n" * 300,
                                     "<!channel>", "documents/../x"]),
                    URLS,
                ),
                max_size=14,
            )
        )
    )
    hits = tuple(
        SearchHit(title=draw(titles), uri=draw(URLS), snippet=draw(markdown())[0][:3000],
                  name=draw(st.sampled_from([None, NAME, NAME + "/d", "bad name"])))
        for _ in range(draw(st.integers(0, 12)))
    )
    answer = Answer(
        query=draw(st.text(max_size=300)) or "q",
        kind=kind,
        text=md if kind == "answer" else "",
        references=refs if kind == "answer" else (),
        hits=hits if kind != "answer" else (),
        note=draw(st.one_of(st.none(), st.text(max_size=400), HOSTILE)),
    )
    asker = draw(st.sampled_from([None, "U123ABC", "W0XYZ"]))
    question = draw(st.one_of(st.none(), st.text(max_size=2000), HOSTILE))
    return answer, asker, question


@FAST
@given(answers())
def test_any_answer_renders_valid_and_safe(case: tuple[Answer, str | None, str | None]) -> None:
    """Answers and result lists always fit one valid message; only the asker is mentioned."""
    answer, asker, question = case
    message = render_answer(answer, asker=asker, question=question)
    assert_valid_message(message)
    sources = [answer.text, *(r.uri for r in answer.references), *(h.uri for h in answer.hits)]
    assert_no_live_markup(message, sources, asker=asker)
    if asker:
        assert f"<@{asker}>" in mrkdwn_texts(message)[1]


@FAST
@given(markdown(), st.integers(40, 3000))
def test_blocks_respect_any_section_size_and_keep_code_fences_balanced(
    fragment: Fragment, max_chars: int
) -> None:
    """Whatever the limit, no section exceeds it or leaves a code block open."""
    md, _ = fragment
    for block in markdown_to_blocks(md, max_chars=max_chars):
        if block["type"] == "section":
            text = block["text"]["text"]
            assert 0 < len(text) <= max_chars
            assert text.strip()
            assert 0 == text.count("```") % 2
