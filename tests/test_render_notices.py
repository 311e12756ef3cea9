"""Help, error and progress messages, and the values our buttons carry."""

from __future__ import annotations

import json

import pytest

from bot.errors import (
    AuthError,
    ConfigError,
    ErrorFacts,
    GdocsError,
    InvalidInput,
    NotFound,
    ProtocolError,
    QuotaExceeded,
    QuotaSignal,
    Reason,
    Unavailable,
    UpstreamTimeout,
)
from bot.render import (
    ACTION_NEXT_PAGE,
    ACTION_SHOW_DOC_MORE,
    ACTION_SHOW_DOC_PREFIX,
    ACTION_TRY_AGAIN,
    Message,
    decode_page_value,
    decode_try_again,
    error_sentence,
    notice,
    render_error,
    render_help,
    render_progress,
    with_not_in_channel_hint,
)
from tests.test_render_support import assert_no_live_markup, assert_valid_message, mrkdwn_texts
from tests.test_render_surface_support import assert_valid_surface_message

HOST = "docs.cloud.google.com"


def _all_text(message: Message) -> str:
    return "\n".join(mrkdwn_texts(message))


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
            AuthError("GOOGLE_API_KEY was rejected."),
            "An admin needs to fix the bot's configuration",
        ),
        (
            ConfigError("GOOGLE_API_KEY is not set."),
            "An admin needs to fix the bot's configuration",
        ),
        (NotFound("No such document."), "Check the name or URL"),
    ],
)
def test_errors_show_their_message_and_a_hint_for_their_code(error: GdocsError, hint: str) -> None:
    """Short and specific: the error's own safe message, then what to do about it."""
    message = render_error(error, retry="how do I list buckets?")
    assert_valid_message(message)
    text = message["blocks"][0]["text"]["text"]
    assert text.startswith(f":warning: {error_sentence(error)}\n")
    assert hint in text
    assert hint in message["text"]
    assert "accessory" not in message["blocks"][0]  # trying again would not help


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (
            UpstreamTimeout("The documentation server did not answer within 30 s."),
            "Google's documentation took too long to answer — try again in a minute.",
        ),
        (
            Unavailable("The documentation server is unavailable (HTTP 503)."),
            "Google's documentation isn't answering right now — try again in a minute.",
        ),
        (
            QuotaExceeded("Daily answer quota exhausted."),
            "Google's documentation is getting too many requests right now — try again in a "
            "minute.",
        ),
        (
            ProtocolError("Unexpected response."),
            "Google's documentation sent an answer I couldn't read — try again in a minute.",
        ),
    ],
)
def test_passing_trouble_is_one_sentence_in_peoples_words_with_try_again(
    error: GdocsError, said: str
) -> None:
    """Said once, with no HTTP status or server quote, and a button that asks again."""
    message = render_error(error, question="how do I list <!here> buckets?", retry="private q?")
    assert_valid_message(message)
    [block] = message["blocks"]
    assert said == message["text"]
    assert f":warning: {said}\n> how do I list &lt;!here&gt; buckets?" == block["text"]["text"]
    button = block["accessory"]
    assert ("Try again", ACTION_TRY_AGAIN) == (button["text"]["text"], button["action_id"])
    assert "private q?" == decode_try_again(button["value"])  # private stays private


def test_a_daily_quota_says_for_today_and_offers_no_try_again() -> None:
    """Trying again in a minute would not help: the sentence says so, with no button."""
    facts = ErrorFacts(Reason.OVER_QUOTA, server="developer_knowledge", tool="search_documents")
    error = QuotaExceeded(signal=QuotaSignal("day"), facts=facts)
    message = render_error(error, retry="search firestore pricing")
    said = "The Google documentation service has used up its quota for today."
    assert (said, f":warning: {said}") == (message["text"], message["blocks"][0]["text"]["text"])
    assert "accessory" not in message["blocks"][0]


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
    error = ProtocolError("bad <!channel> " + "x" * 2000 + "\nTraceback (most recent call last)")
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
    assert "/invite @gdocs" in with_not_in_channel_hint(render_progress())["text"]


@pytest.mark.parametrize(
    "kind",
    [
        "quota_unknown",
        "restarting",
        "internal_error",
        "stale_button",
        "fetching",
        "document_gone",
        "no_more_pages",
        "own_answer",
        "no_text",
        "channel_unchanged",
        "channel_admins_only",
        "channel_role_unknown",
        "channel_not_member",
        "channel_fixed",
        "channel_not_a_channel",
        "channel_unavailable",
        "report_refused",
        "report_unknown",
        "report_everywhere",
        "feedback_recorded",
        "feedback_stale",
        "shared_note",
        "share_forged",
        "share_not_in_channel",
        "private_doc_refused",
    ],
)
def test_every_notice_is_one_short_valid_message(kind: str) -> None:
    """Each fixed notice is a short message Slack takes, with the command filled in."""
    message = notice(kind, "/docs")
    if message["blocks"]:
        assert_valid_surface_message(message)
    assert 10 < len(message["text"]) < 250
    assert "{command}" not in str(message)


# --- page button values ---------------------------------------------------------------------

NAME = f"documents/{HOST}/storage/docs/creating-buckets"


@pytest.mark.parametrize("page", [1, 2, 9999, 10_000])
def test_page_values_round_trip(page: int) -> None:
    """What a "Next page" button carries decodes to the same document and page."""
    value = _page_value(NAME, page)
    assert len(value) <= 2000
    assert (NAME, page) == decode_page_value(value)


def test_page_value_of_a_longest_name_fits_a_button() -> None:
    """Even a 500-character name stays under Slack's 2000-character value limit."""
    name = f"documents/{HOST}/" + "a" * (500 - len(f"documents/{HOST}/"))
    assert len(_page_value(name, 10_000)) <= 2000


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


def _page_value(name: str, page: int) -> str:
    """What a "Next page" button carries (as render_document_page makes it)."""
    return json.dumps({"n": name, "p": page}, separators=(",", ":"))


def test_action_constants_are_the_agreed_ids() -> None:
    """The Slack app listens for exactly these ids."""
    assert ("show_doc:", "show_doc_more", "doc_next_page") == (
        ACTION_SHOW_DOC_PREFIX,
        ACTION_SHOW_DOC_MORE,
        ACTION_NEXT_PAGE,
    )
