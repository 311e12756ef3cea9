"""Answer and search-result messages: text, sources, notes, "Show full doc" buttons."""

from __future__ import annotations

import re

from bot.models import Answer, Fallback, Reference, SearchHit
from bot.render import (
    ACTION_SHOW_DOC_MORE,
    ACTION_SHOW_DOC_PREFIX,
    Message,
    render_answer,
)
from tests.test_render_support import (
    assert_no_live_markup,
    assert_valid_message,
    mrkdwn_texts,
)

HOST = "docs.cloud.google.com"


def _ref(i: int, title: str | None = None, name: str | None = None) -> Reference:
    path = f"storage/docs/page-{i}"
    return Reference(
        name=name or f"documents/{HOST}/{path}",
        uri=f"https://{HOST}/{path}",
        title=title if title is not None else f"Page {i}",
    )


def _answer(text: str = "Use `gcloud storage buckets create`.", **kw: object) -> Answer:
    return Answer(
        query=str(kw.pop("query", "how do I create a bucket?")), kind="answer", text=text, **kw
    )  # type: ignore[arg-type]


def _by_type(message: Message, kind: str) -> list[dict[str, object]]:
    return [b for b in message["blocks"] if b["type"] == kind]


def _actions(message: Message) -> list[dict[str, object]]:
    blocks = _by_type(message, "actions")
    assert len(blocks) <= 1
    return blocks[0]["elements"] if blocks else []  # type: ignore[return-value]


def _all_text(message: Message) -> str:
    return "\n".join(mrkdwn_texts(message))


# --- answers -------------------------------------------------------------------------------


def test_answer_shows_text_then_numbered_sources_and_numbered_show_doc_buttons() -> None:
    """The answer, its sources as numbered links with titles, and one row of numbered
    "Show full doc" buttons that do not repeat the titles."""
    answer = _answer(references=(_ref(1, "Create buckets"), _ref(2, "Bucket naming")))
    message = render_answer(answer)
    assert_valid_message(message)
    sections = [b["text"]["text"] for b in _by_type(message, "section")]  # type: ignore[index]
    assert "Use `gcloud storage buckets create`." == sections[0]
    assert (
        "*Sources*\n"
        f"1. <https://{HOST}/storage/docs/page-1|Create buckets>\n"
        f"2. <https://{HOST}/storage/docs/page-2|Bucket naming>"
    ) == sections[1]
    assert [
        {
            "type": "button",
            "text": {"type": "plain_text", "text": "Show full doc 1", "emoji": True},
            "action_id": "show_doc:1",
            "value": f"documents/{HOST}/storage/docs/page-1",
            "accessibility_label": "Show full doc 1: Create buckets",
        },
        {
            "type": "button",
            "text": {"type": "plain_text", "text": "Show full doc 2", "emoji": True},
            "action_id": "show_doc:2",
            "value": f"documents/{HOST}/storage/docs/page-2",
            "accessibility_label": "Show full doc 2: Bucket naming",
        },
    ] == _actions(message)


def test_show_doc_action_ids_match_what_the_slack_app_listens_for() -> None:
    """Buttons use `show_doc:<n>`, n the page's number in Sources; the menu `show_doc_more`."""
    message = render_answer(_answer(references=tuple(_ref(i) for i in range(7))))
    ids = [e["action_id"] for e in _actions(message)]
    assert all(re.match(r"^show_doc:\d+$", i) for i in ids[:5])
    assert ids[:5] == [f"{ACTION_SHOW_DOC_PREFIX}{n}" for n in range(1, 6)]
    assert ACTION_SHOW_DOC_MORE == ids[5] == "show_doc_more"


def test_more_than_five_cited_docs_put_the_rest_in_an_overflow_menu() -> None:
    """Five buttons, then an overflow menu whose options are the remaining documents, by
    number."""
    message = render_answer(_answer(references=tuple(_ref(i) for i in range(8))))
    assert_valid_message(message)
    elements = _actions(message)
    assert ["button"] * 5 + ["overflow"] == [e["type"] for e in elements]
    overflow = elements[5]
    assert [f"documents/{HOST}/storage/docs/page-{i}" for i in (5, 6, 7)] == [
        o["value"]
        for o in overflow["options"]  # type: ignore[attr-defined]
    ]
    assert ["Show full doc 6", "Show full doc 7", "Show full doc 8"] == [
        o["text"]["text"]
        for o in overflow["options"]  # type: ignore[attr-defined]
    ]


def test_more_than_ten_cited_docs_use_a_select_menu() -> None:
    """An overflow menu holds five options; longer lists use a static select (same action id)."""
    message = render_answer(_answer(references=tuple(_ref(i) for i in range(14))))
    assert_valid_message(message)
    menu = _actions(message)[5]
    assert "static_select" == menu["type"]
    assert ACTION_SHOW_DOC_MORE == menu["action_id"]
    assert 9 == len(menu["options"])  # type: ignore[arg-type]


def test_docs_with_names_too_long_for_a_menu_get_the_buttons() -> None:
    """Menu option values stop at 150 characters, so long-named documents become buttons."""
    long_name = f"documents/{HOST}/" + "x" * 200
    refs = (*(_ref(i) for i in range(6)), _ref(99, "Long one", name=long_name))
    message = render_answer(_answer(references=refs))
    assert_valid_message(message)
    elements = _actions(message)
    assert long_name in [e["value"] for e in elements if e["type"] == "button"]


def test_only_valid_document_names_become_buttons_once_each() -> None:
    """Invalid names make no button, their sources still listed; a page cited twice is
    listed once."""
    refs = (
        _ref(1),
        _ref(1),
        _ref(2, name="documents/../etc/passwd"),
        _ref(3, name="<!channel>"),
        _ref(4, name="documents/"),
    )
    message = render_answer(_answer(references=refs))
    assert_valid_message(message)
    assert [f"documents/{HOST}/storage/docs/page-1"] == [e["value"] for e in _actions(message)]
    assert "4. <https://" in _all_text(message)
    assert "5. <https://" not in _all_text(message)
    assert 1 == _all_text(message).count("page-1|Page 1>")


def test_no_valid_names_means_no_actions_block() -> None:
    """Without a fetchable document there is nothing to press."""
    message = render_answer(_answer(references=(_ref(1, name="nope"),)))
    assert [] == _by_type(message, "actions")


def test_a_long_title_is_named_in_full_in_sources_and_cut_for_screen_readers() -> None:
    """The button says its number; a screen reader hears the title, cut to Slack's 75."""
    title = "A very long documentation page title " * 5
    message = render_answer(_answer(references=(_ref(1, title),)))
    assert_valid_message(message)
    [button] = _actions(message)
    assert "Show full doc 1" == button["text"]["text"]  # type: ignore[index]
    said = button["accessibility_label"]
    assert 75 == len(said)  # type: ignore[arg-type]
    assert said.startswith("Show full doc 1: A very long")  # type: ignore[union-attr]
    assert title.strip() in _all_text(message)


def test_slash_command_answer_names_the_asker_and_the_question() -> None:
    """In a channel everyone sees who asked what, the question escaped."""
    message = render_answer(_answer(), asker="U123ABC", question="what is <!here> & co?")
    assert_valid_message(message)
    first = message["blocks"][0]["text"]["text"]
    assert "<@U123ABC> asked:\n> what is &lt;!here&gt; &amp; co?" == first


def test_asker_without_question_echoes_the_answered_query() -> None:
    """Naming the asker always shows what they asked."""
    message = render_answer(_answer(query="bucket naming rules"), asker="U123ABC")
    assert "<@U123ABC> asked:\n> bucket naming rules" == message["blocks"][0]["text"]["text"]


def test_very_long_question_is_truncated_for_display() -> None:
    """A long question is cut at a word with "…", on one line."""
    question = "why " * 200 + "\n\nsecond line"
    first = render_answer(_answer(), asker="U123ABC", question=question)["blocks"][0]
    shown = first["text"]["text"].split("\n> ", 1)[1]
    assert len(shown) <= 300
    assert shown.endswith("…")
    assert "\n" not in shown


def test_malformed_asker_id_is_never_echoed() -> None:
    """Only a real user id becomes a mention; garbage is dropped, not escaped into view."""
    message = render_answer(_answer(), asker="<!channel>", question="q")
    assert "> q" == message["blocks"][0]["text"]["text"]
    assert "channel" not in _all_text(message)


def test_note_is_shown_in_a_context_block_near_the_top() -> None:
    """The quota-fallback note explains why these are search results, before the results."""
    answer = Answer(
        query="q",
        kind="search",
        hits=(SearchHit(title="T", uri=f"https://{HOST}/t", snippet="s"),),
        fallback=Fallback(reason="answer_quota"),
    )
    message = render_answer(answer)
    assert_valid_message(message)
    assert "context" == message["blocks"][0]["type"]
    assert (
        "Generated answers are paused for a moment. Here are search results instead."
        == message["blocks"][0]["elements"][0]["text"]
    )


def test_cached_answers_look_exactly_like_fresh_ones() -> None:
    """Whether the answer came from the cache is not the reader's concern."""
    answer = _answer(references=(_ref(1),))
    assert render_answer(answer) == render_answer(answer.model_copy(update={"cached": True}))


def test_fallback_text_is_the_start_of_the_answer_plain_and_escaped() -> None:
    """Notifications read the answer's first words, no markup, escaped — not the question
    glued to it with a colon."""
    text = (
        "# Heading\n\n**Bold** <!channel> answer with [a link](https://x.example/).\n\n```\ncode\n```\n"
        * 50
    )
    message = render_answer(_answer(text, query="q <x>"))
    assert message["text"].startswith("Bold &lt;!channel&gt; answer with a link. code")
    assert len(message["text"]) <= 600
    assert "```" not in message["text"]
    assert "**" not in message["text"]


def test_long_answer_is_shortened_at_a_block_boundary_with_an_explicit_note() -> None:
    """An answer too long for one message ends with "(answer shortened — N more characters)"."""
    text = "\n\n".join(f"Paragraph {i}: " + "lorem ipsum " * 40 for i in range(200))
    message = render_answer(_answer(text, references=(_ref(1),)), asker="U123ABC")
    assert_valid_message(message)
    note = [b for b in _by_type(message, "context")][-1]["elements"][0]["text"]  # type: ignore[index]
    match = re.fullmatch(r"\(answer shortened — (\d+) more characters\)", note)
    assert match
    shown = [b["text"]["text"] for b in _by_type(message, "section")][1:-1]  # type: ignore[index]
    assert "".join(shown).startswith("Paragraph 0:")
    assert int(match.group(1)) > 50_000
    assert "Sources" in _all_text(message)
    assert _actions(message)


def test_ten_thousand_line_code_answer_still_fits_one_message() -> None:
    """A pathological answer is shortened; its code blocks stay closed."""
    text = "```\n" + "\n".join(f"x = {i}  # <!channel>" for i in range(10_000)) + "\n```"
    message = render_answer(_answer(text))
    assert_valid_message(message)
    assert_no_live_markup(message, [text])
    for block in _by_type(message, "section"):
        assert 0 == block["text"]["text"].count("```") % 2  # type: ignore[index]


def test_empty_answer_says_nothing_was_found() -> None:
    """No text is still a valid, helpful message."""
    message = render_answer(_answer(""))
    assert_valid_message(message)
    assert "couldn't find an answer" in _all_text(message)


# --- search and pay results ----------------------------------------------------------------


def test_search_hits_show_title_links_and_trimmed_snippets() -> None:
    """Each hit is a numbered bold title link (the number its Show full doc button says)
    and a snippet trimmed at a word, plain and escaped."""
    snippet = (
        "## Creating\n\nUse **gcloud** <!channel> to make a bucket. " + "More words here. " * 60
    )
    answer = Answer(
        query="buckets",
        kind="search",
        hits=(
            SearchHit(
                title="Create buckets",
                uri=f"https://{HOST}/c",
                snippet=snippet,
                name=f"documents/{HOST}/c",
            ),
            SearchHit(title="", uri=f"https://{HOST}/d", snippet="", name=None),
        ),
    )
    message = render_answer(answer)
    assert_valid_message(message)
    first, second = (b["text"]["text"] for b in _by_type(message, "section"))  # type: ignore[index]
    title, shown = first.split("\n", 1)
    assert f"*1. <https://{HOST}/c|Create buckets>*" == title
    assert shown.startswith("Use gcloud &lt;!channel&gt; to make a bucket. More words")
    assert shown.endswith("…")
    assert len(shown) <= 300
    assert not shown[:-1].endswith(" ")
    assert shown[:-1].split()[-1] in ("More", "words", "here.")
    assert f"*2. <https://{HOST}/d|{HOST}/d>*" == second
    assert [f"documents/{HOST}/c"] == [e["value"] for e in _actions(message)]
    assert "2 documentation pages for “buckets”" == message["text"]


def test_pay_hits_have_no_buttons_because_they_have_no_names() -> None:
    """Pay results link out; there is no document to fetch."""
    answer = Answer(
        query="PaymentDataRequest",
        kind="pay",
        hits=(
            SearchHit(
                title="PaymentDataRequest",
                uri="https://developers.google.com/pay/api/web/reference/request-objects",
                snippet="apiVersion",
            ),
        ),
    )
    message = render_answer(answer)
    assert_valid_message(message)
    assert [] == _by_type(message, "actions")


def test_no_hits_says_so() -> None:
    """An empty result list is a readable message, the query escaped."""
    message = render_answer(Answer(query="<!here> zzz", kind="search"))
    assert_valid_message(message)
    assert "No documentation pages matched “&lt;!here&gt; zzz”." in _all_text(message)


def test_many_hits_are_capped_with_a_count_of_the_rest() -> None:
    """Results beyond the message budget are counted, not silently dropped."""
    hits = tuple(
        SearchHit(title=f"T{i}", uri=f"https://{HOST}/{i}", snippet="word " * 100)
        for i in range(80)
    )
    message = render_answer(Answer(query="q", kind="search", hits=hits))
    assert_valid_message(message)
    shown = len(_by_type(message, "section"))
    assert f"({80 - shown} more results not shown)" == message["blocks"][-1]["elements"][0]["text"]


# --- feedback buttons ----------------------------------------------------------------------
def test_feedback_buttons_come_last_and_name_the_answer() -> None:
    """With an answer id the message ends with Slack's 👍 / 👎 for that answer, after the
    Show full doc buttons; without one there are none."""
    answer = _answer(references=(_ref(1, "Create buckets"),))
    message = render_answer(answer, feedback_id="Ab3_x-9")
    assert_valid_message(message)
    last = message["blocks"][-1]
    assert "context_actions" == last["type"]
    [element] = last["elements"]
    assert "fb1:up:Ab3_x-9" == element["positive_button"]["value"]
    assert "fb1:down:Ab3_x-9" == element["negative_button"]["value"]
    assert "actions" == message["blocks"][-2]["type"]
    assert [] == _by_type(render_answer(answer), "context_actions")


def test_a_full_answer_or_result_list_keeps_room_for_the_feedback_buttons() -> None:
    """Answers and result lists that fill a message are shortened to fit the buttons in:
    still at most 50 blocks, the buttons last."""
    long_answer = _answer("\n\n".join(f"Paragraph {i}: " + "word " * 60 for i in range(120)))
    hits = tuple(
        SearchHit(title=f"T{i}", uri=f"https://{HOST}/{i}", snippet="w") for i in range(80)
    )
    for answer in (long_answer, Answer(query="q", kind="search", hits=hits)):
        message = render_answer(answer, feedback_id="id1")
        assert_valid_message(message)
        assert "context_actions" == message["blocks"][-1]["type"]
        assert "not shown" in _all_text(message) or "shortened" in _all_text(message)
