"""Answer, search-result, help, error and progress messages."""

from __future__ import annotations

import json
import re

import pytest

from bot.docs import Answer, Reference, SearchHit
from bot.errors import (
    AuthError,
    ConfigError,
    ErrorCode,
    GdocsError,
    InvalidInput,
    NotFound,
    ProtocolError,
    QuotaExceeded,
    Unavailable,
    UpstreamTimeout,
)
from bot.render import (
    ACTION_NEXT_PAGE,
    ACTION_SHOW_DOC_MORE,
    ACTION_SHOW_DOC_PREFIX,
    Message,
    decode_page_value,
    encode_page_value,
    render_answer,
    render_error,
    render_help,
    render_not_in_channel_hint,
    render_progress,
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


def test_answer_shows_text_then_numbered_sources_and_a_button_per_cited_doc() -> None:
    """The answer, its sources as numbered links with titles, and "Show full doc" buttons."""
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
            "text": {"type": "plain_text", "text": "Show full doc: Create buckets", "emoji": True},
            "action_id": "show_doc:0",
            "value": f"documents/{HOST}/storage/docs/page-1",
        },
        {
            "type": "button",
            "text": {"type": "plain_text", "text": "Show full doc: Bucket naming", "emoji": True},
            "action_id": "show_doc:1",
            "value": f"documents/{HOST}/storage/docs/page-2",
        },
    ] == _actions(message)


def test_show_doc_action_ids_match_what_the_slack_app_listens_for() -> None:
    """Buttons use `show_doc:<i>` (unique in the block), the menu `show_doc_more`."""
    message = render_answer(_answer(references=tuple(_ref(i) for i in range(7))))
    ids = [e["action_id"] for e in _actions(message)]
    assert all(re.match(r"^show_doc:\d+$", i) for i in ids[:5])
    assert ids[:5] == [f"{ACTION_SHOW_DOC_PREFIX}{i}" for i in range(5)]
    assert ACTION_SHOW_DOC_MORE == ids[5] == "show_doc_more"


def test_more_than_five_cited_docs_put_the_rest_in_an_overflow_menu() -> None:
    """Five buttons, then an overflow menu whose options are the remaining documents."""
    message = render_answer(_answer(references=tuple(_ref(i) for i in range(8))))
    assert_valid_message(message)
    elements = _actions(message)
    assert ["button"] * 5 + ["overflow"] == [e["type"] for e in elements]
    overflow = elements[5]
    assert [f"documents/{HOST}/storage/docs/page-{i}" for i in (5, 6, 7)] == [
        o["value"]
        for o in overflow["options"]  # type: ignore[attr-defined]
    ]
    assert ["Page 5", "Page 6", "Page 7"] == [o["text"]["text"] for o in overflow["options"]]  # type: ignore[attr-defined]


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
    """Invalid or repeated names make no button; their sources are still listed."""
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
    assert "5. <https://" in _all_text(message)


def test_no_valid_names_means_no_actions_block() -> None:
    """Without a fetchable document there is nothing to press."""
    message = render_answer(_answer(references=(_ref(1, name="nope"),)))
    assert [] == _by_type(message, "actions")


def test_button_text_is_cut_to_slacks_75_characters() -> None:
    """A long title is truncated with "…" in the button, kept in full in Sources."""
    title = "A very long documentation page title " * 5
    message = render_answer(_answer(references=(_ref(1, title),)))
    assert_valid_message(message)
    text = _actions(message)[0]["text"]["text"]  # type: ignore[index]
    assert 75 == len(text)
    assert text.startswith("Show full doc: A very long")
    assert text.endswith("…")
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
        note="The answer quota is used up for today, so here are search results <instead>.",
    )
    message = render_answer(answer)
    assert_valid_message(message)
    assert "context" == message["blocks"][0]["type"]
    assert (
        "The answer quota is used up for today, so here are search results &lt;instead&gt;."
        == message["blocks"][0]["elements"][0]["text"]
    )


def test_cached_answers_look_exactly_like_fresh_ones() -> None:
    """Whether the answer came from the cache is not the reader's concern."""
    answer = _answer(references=(_ref(1),))
    assert render_answer(answer) == render_answer(answer.model_copy(update={"cached": True}))


def test_fallback_text_is_a_short_plain_escaped_summary() -> None:
    """Notifications get the question and the start of the answer, no markup, escaped."""
    text = (
        "# Heading\n\n**Bold** <!channel> answer with [a link](https://x.example/).\n\n```\ncode\n```\n"
        * 50
    )
    message = render_answer(_answer(text, query="q <x>"))
    assert message["text"].startswith(
        "q &lt;x&gt;: Heading Bold &lt;!channel&gt; answer with a link."
    )
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
    """Each hit is a bold title link and a snippet trimmed at a word, plain and escaped."""
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
    assert f"*<https://{HOST}/c|Create buckets>*" == title
    assert shown.startswith("Creating Use gcloud &lt;!channel&gt; to make a bucket. More words")
    assert shown.endswith("…")
    assert len(shown) <= 300
    assert not shown[:-1].endswith(" ")
    assert shown[:-1].split()[-1] in ("More", "words", "here.")
    assert f"*<https://{HOST}/d|{HOST}/d>*" == second
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


# --- help, errors, progress ----------------------------------------------------------------


def test_help_lists_every_command_form_and_mentions() -> None:
    """Usage of the slash command's forms, and how to use mentions and DMs."""
    message = render_help()
    assert_valid_message(message)
    text = _all_text(message)
    for form in (
        "/gdocs &lt;question&gt;",
        "/gdocs search &lt;query&gt;",
        "/gdocs pay &lt;query&gt;",
        "/gdocs doc &lt;URL or documents/…&gt;",
        "/gdocs help",
        "@-mention",
        "direct message",
    ):
        assert form in text
    assert_no_live_markup(message, [])


def test_help_uses_the_configured_command_name() -> None:
    """A workspace that named the command differently sees its own name."""
    assert "`/docs search &lt;query&gt;`" in _all_text(render_help("/docs"))


def test_help_ignores_a_malformed_command_name() -> None:
    """Whatever arrives as the command, nothing but a slash command is shown."""
    text = _all_text(render_help("<!channel>"))
    assert "/gdocs help" in text
    assert "!channel" not in text


@pytest.mark.parametrize(
    ("error", "hint"),
    [
        (
            UpstreamTimeout("The documentation server did not answer within 30 s."),
            "try again in a minute",
        ),
        (
            Unavailable("The documentation server is unavailable (HTTP 503)."),
            "try again in a minute",
        ),
        (QuotaExceeded("Daily answer quota exhausted."), "quota"),
        (
            AuthError("GOOGLE_API_KEY was rejected."),
            "An admin needs to fix the bot's configuration",
        ),
        (
            ConfigError("GOOGLE_API_KEY is not set."),
            "An admin needs to fix the bot's configuration",
        ),
        (NotFound("No such document."), "Check the name or URL"),
        (ProtocolError("Unexpected response."), "try again later"),
    ],
)
def test_errors_show_their_message_and_a_hint_for_their_code(error: GdocsError, hint: str) -> None:
    """Short and specific: the error's own safe message, then what to do about it."""
    message = render_error(error)
    assert_valid_message(message)
    text = message["blocks"][0]["text"]["text"]
    assert text.startswith(f":warning: {error.message}\n")
    assert hint in text
    assert hint in message["text"]


def test_invalid_input_shows_only_its_message() -> None:
    """A user's mistake is explained by the message itself, no generic hint."""
    message = render_error(
        InvalidInput("That is not a documentation page: give a URL like https://x.")
    )
    assert (
        ":warning: That is not a documentation page: give a URL like https://x."
        == message["blocks"][0]["text"]["text"]
    )


def test_error_text_is_escaped_and_one_short_line() -> None:
    """Even an error message quoting user input cannot ping or flood."""
    error = GdocsError(
        "bad <!channel> " + "x" * 2000 + "\nTraceback (most recent call last)",
        code=ErrorCode.PROTOCOL,
    )
    message = render_error(error)
    assert_valid_message(message)
    assert_no_live_markup(message, [])
    assert len(message["blocks"][0]["text"]["text"]) < 700
    assert "\n" not in message["text"]


def test_progress_message_says_it_is_looking() -> None:
    """A placeholder while the answer comes, with the question escaped."""
    message = render_progress("what about <!here>?")
    assert_valid_message(message)
    assert "Looking that up…" == message["text"]
    assert "what about &lt;!here&gt;?" in _all_text(message)
    assert_valid_message(render_progress(None))


def test_not_in_channel_hint_tells_how_to_invite_the_bot() -> None:
    """The ephemeral hint names the /invite command."""
    assert "/invite @gdocs" in render_not_in_channel_hint()


# --- page button values ---------------------------------------------------------------------

NAME = f"documents/{HOST}/storage/docs/creating-buckets"


@pytest.mark.parametrize("page", [1, 2, 9999, 10_000])
def test_page_values_round_trip(page: int) -> None:
    """What a "Next page" button carries decodes to the same document and page."""
    value = encode_page_value(NAME, page)
    assert len(value) <= 2000
    assert (NAME, page) == decode_page_value(value)


def test_page_value_of_a_longest_name_fits_a_button() -> None:
    """Even a 500-character name stays under Slack's 2000-character value limit."""
    name = f"documents/{HOST}/" + "a" * (500 - len(f"documents/{HOST}/"))
    assert len(encode_page_value(name, 10_000)) <= 2000


@pytest.mark.parametrize(
    "value",
    [
        "",
        "not json",
        "[]",
        "null",
        '{"n": "' + NAME + '"}',
        '{"p": 2}',
        '{"n": "' + NAME + '", "p": 2, "x": 1}',
        '{"n": "' + NAME + '", "p": 0}',
        '{"n": "' + NAME + '", "p": -1}',
        '{"n": "' + NAME + '", "p": 10001}',
        '{"n": "' + NAME + '", "p": "2"}',
        '{"n": "' + NAME + '", "p": 2.0}',
        '{"n": "' + NAME + '", "p": true}',
        '{"n": "documents/../etc/passwd", "p": 2}',
        '{"n": "<!channel>", "p": 2}',
        '{"n": 5, "p": 2}',
        '{"n": "https://docs.cloud.google.com/x", "p": 2}',
        '{"n": "' + NAME + '", "p": 2' + " " * 2000 + "}",
        "[" * 5000 + "]" * 5000,
        json.dumps({"n": "documents/" + "a." * 300 + "com", "p": 2}),
    ],
)
def test_forged_page_values_are_rejected(value: str) -> None:
    """Anything we did not produce is InvalidInput, with a message fit for the user."""
    with pytest.raises(InvalidInput) as caught:
        decode_page_value(value)
    assert "button" in caught.value.message


@pytest.mark.parametrize(("name", "page"), [("not-a-name", 1), (NAME, 0), (NAME, 10_001)])
def test_encoding_an_impossible_page_value_fails(name: str, page: int) -> None:
    """The bot never makes a button it would itself refuse."""
    with pytest.raises(InvalidInput):
        encode_page_value(name, page)


def test_action_constants_are_the_agreed_ids() -> None:
    """The Slack app listens for exactly these ids."""
    assert ("show_doc:", "show_doc_more", "doc_next_page") == (
        ACTION_SHOW_DOC_PREFIX,
        ACTION_SHOW_DOC_MORE,
        ACTION_NEXT_PAGE,
    )
