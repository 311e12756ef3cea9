"""Property tests: for any Markdown-ish input, every message is valid, safe and complete.

The strategies build documents from the constructs Google's servers send (headings, lists,
fences, links, tables, quotes, HTML) mixed with Slack markup, entities, control characters,
unicode and very long lines. Each fragment also lists the words a reader must see.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.models import Answer, Document, Fallback, Reference, SearchHit
from bot.render import (
    document_page_spans,
    markdown_to_blocks,
    render_answer,
    render_document_page,
)
from tests.test_render_support import (
    assert_no_live_markup,
    assert_valid_message,
    document_pages,
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

_WORDS = "gcloud bucket Storage v2 snake_case API Ωmega مرحبا שלום 中文 naïve x2 😀 👩‍💻"
WORDS = st.sampled_from([*_WORDS.split(), "e\u0301", "\u202eevil", "tab\tbed"])
_SLACK_MARKUP = "<!channel> <!here> <!everyone> <@U123> <@W1|x> <#C1> <#C1|general> <!subteam^S1>"
_SPOOFS = "<https://evil|google.com> <http://evil.example|x> &lt;!channel&gt; &amp; &#60;!here&#62;"
_MARKS = "& < > | * _ ~ ` `` ``` ** __ ~~ \\ [ ] ( ) ![ <b> </div> <br> List<String> --> <script>"
_HOSTILE = [
    *_SLACK_MARKUP.split(),
    *_SPOOFS.split(),
    *_MARKS.split(),
    *["{#id}", "\x00", "\x1b", "\x7f", "\r", "\u2028", "\ufeff", "<!--"],
]
HOSTILE = st.sampled_from(_HOSTILE)
#: not in the "every word shown" test, as they hide text by design: an HTML comment, and a
#: line-opening ``` whose info string (the language tag) is not shown
SHOWN_HOSTILE = st.sampled_from([text for text in _HOSTILE if text not in ("<!--", "```")])
URLS = st.sampled_from(
    [
        "https://docs.cloud.google.com/storage/docs/x",
        "http://example.com/a?b=1&c=2",
        "https://evil.example/|pipe",
        "https://x.example/<&>",
        "javascript:alert(1)",
        "/storage/docs/relative",
        "naming",
        "#anchor",
        "mailto:a@example.com",
        "https://",
        "https://x.example/" + "p" * 1600,
    ]
)


@st.composite
def inline(draw: st.DrawFn, hostile: st.SearchStrategy[str] = HOSTILE) -> Fragment:
    """One inline piece: a word, hostile text, emphasis, code, a link, an image, HTML."""
    word = draw(WORDS)
    words = list(words_of(word).elements())
    kind = draw(st.integers(0, 11))
    wrapped = {1: "**{}**", 2: "_{}_", 3: "`{}`", 6: "~~{}~~", 7: "<b>{}</b>"}
    if kind == 0:
        return draw(hostile), []
    if kind in wrapped:
        return wrapped[kind].format(word), words
    if kind in (4, 5):
        return ("!" if kind == 5 else "") + f"[{word}]({draw(URLS)})", words
    if kind == 8:
        return draw(URLS), []
    if kind == 9:
        return draw(st.text(max_size=12)), []
    return word, words


@st.composite
def line(draw: st.DrawFn, hostile: st.SearchStrategy[str] = HOSTILE) -> Fragment:
    pieces = draw(st.lists(inline(hostile), min_size=1, max_size=8))
    return " ".join(p for p, _ in pieces), [w for _, ws in pieces for w in ws]


@st.composite
def block(draw: st.DrawFn, shown_only: bool = False) -> Fragment:
    """One block-level construct; with `shown_only`, only those whose words must all show."""
    hostile = SHOWN_HOSTILE if shown_only else HOSTILE
    kind = draw(st.sampled_from([0, 1, 2, 4, 9]) if shown_only else st.integers(0, 11))
    text, words = draw(line(hostile))
    if kind == 0:
        return "#" * draw(st.integers(1, 6)) + " " + text, words
    if kind == 1:
        items = draw(st.lists(line(hostile), min_size=1, max_size=6))
        out = []
        for body, _ in items:
            indent = " " * draw(st.sampled_from([0, 2, 4, 6]))
            marker = draw(st.sampled_from(["- ", "* ", "1. ", "2) ", "- [ ] "]))
            out.append(indent + marker + body)
        return "\n".join(out), [w for _, ws in items for w in ws]
    if kind == 2:
        quoted = draw(st.lists(line(hostile), min_size=1, max_size=4))
        return "\n".join("> " + b for b, _ in quoted), [w for _, ws in quoted for w in ws]
    if kind == 3:
        fence = draw(st.sampled_from(["```", "~~~", "````"]))
        code = ["x = 1 < 2 && y", "<!channel>", "", "  indented", "&lt;", "```", "# not a heading"]
        body = draw(st.lists(st.sampled_from(code), max_size=30))
        closing = "\n" + fence if draw(st.booleans()) else ""
        info = draw(st.sampled_from(["", "python", "sh"]))
        return fence + info + "\n" + "\n".join(body) + closing, []
    if kind == 4:
        columns = draw(st.integers(1, 4))
        rows = draw(
            st.lists(st.lists(inline(hostile), min_size=columns, max_size=columns), max_size=8)
        )
        head = "| " + " | ".join(f"h{i}" for i in range(columns)) + " |"
        body = ["| " + " | ".join(p.replace("|", "/") for p, _ in row) + " |" for row in rows]
        words = [w for row in rows for _, ws in row for w in ws]
        return "\n".join([head, "|" + "---|" * columns, *body]), words
    if kind == 5:
        return draw(st.sampled_from(["---", "***", "___", "- - -"])), []
    if kind == 6:
        word, count = draw(WORDS), draw(st.integers(1, 3000))
        return (word + " ") * count if draw(st.booleans()) else word * count, []
    if kind == 7:
        return "```\n" + "code <&> line\n" * draw(st.integers(100, 3000)) + "```", []
    if kind == 8:
        return "<!-- " + text + " -->", []
    return text, words


@st.composite
def markdown(draw: st.DrawFn) -> Fragment:
    blocks = draw(st.lists(block(), max_size=12))
    joiner = draw(st.sampled_from(["\n\n", "\n", "\r\n\r\n"]))
    return joiner.join(b for b, _ in blocks), [w for _, ws in blocks for w in ws]


@st.composite
def shown_markdown(draw: st.DrawFn) -> Fragment:
    """Paragraphs, headings, lists, quotes and tables whose every word must be shown."""
    blocks = draw(st.lists(block(shown_only=True), min_size=1, max_size=10))
    return "\n\n".join(b for b, _ in blocks), [w for _, ws in blocks for w in ws]


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
@given(shown_markdown())
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


NAMES = st.sampled_from(
    [
        NAME,
        NAME + "/b",
        NAME + "/c",
        "documents/x.example/" + "n" * 300,
        "<!channel>",
        "documents/../x",
    ]
)
TITLES = st.one_of(WORDS, HOSTILE, st.text(max_size=200))


@st.composite
def answers(draw: st.DrawFn) -> tuple[Answer, str | None, str | None]:
    kind = draw(st.sampled_from(["answer", "search", "pay"]))
    text = draw(markdown())[0] if kind == "answer" else ""
    refs = draw(
        st.lists(st.builds(Reference, name=NAMES, uri=URLS, title=TITLES), max_size=14)
        if kind == "answer"
        else st.just([])
    )
    snippet = st.one_of(line().map(lambda f: f[0]), st.text(max_size=600))
    hits = draw(
        st.lists(
            st.builds(
                SearchHit,
                title=TITLES,
                uri=URLS,
                snippet=snippet,
                name=st.sampled_from([None, NAME, NAME + "/d", "bad name"]),
            ),
            max_size=12,
        )
        if kind != "answer"
        else st.just([])
    )
    answer = Answer(
        query=draw(st.text(max_size=300)) or "q",
        kind=kind,
        text=text,
        references=tuple(refs),
        hits=tuple(hits),
        fallback=draw(
            st.one_of(
                st.none(),
                st.builds(
                    Fallback,
                    reason=st.sampled_from(
                        ["answer_quota", "no_answer_tool", "pay_not_configured"]
                    ),
                ),
            )
        ),
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
        assert mrkdwn_texts(message)[1].startswith(f"<@{asker}> asked:")


@FAST
@given(markdown(), st.integers(40, 3000))
def test_blocks_respect_any_section_size_and_keep_code_fences_balanced(
    fragment: Fragment, max_chars: int
) -> None:
    """Whatever the limit, no section exceeds it or leaves a code block open."""
    md, _ = fragment
    for block_ in markdown_to_blocks(md, max_chars=max_chars):
        if block_["type"] == "section":
            text = block_["text"]["text"]
            assert 0 < len(text) <= max_chars
            assert text.strip()
            assert 0 == text.count("```") % 2
