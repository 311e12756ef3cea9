"""Feedback buttons under answers, the vote's value, the thanks and the "what was wrong?"
modal: valid Block Kit, values that round-trip, forged values refused."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from slack_sdk.models.blocks import ContextActionsBlock, FeedbackButtonsElement

from bot.errors import InvalidInput
from bot.render import (
    ACTION_FEEDBACK,
    ACTION_FEEDBACK_COMMENT,
    COMMENT_BLOCK_ID,
    FEEDBACK_MODAL_CALLBACK,
    Vote,
    comment_from_view,
    decode_vote,
    feedback_comment_modal,
    notice,
    render_feedback_thanks,
    vote_from_view,
)
from tests.test_render_support import encode_vote, feedback_block_for
from tests.test_render_surface_support import (
    assert_only_our_values,
    assert_valid_blocks,
    assert_valid_surface_message,
    assert_valid_view,
    near_values,
)

ANSWER_IDS = st.from_regex(r"\A[A-Za-z0-9_.-]{1,64}\Z")
FAST = settings(max_examples=150, deadline=None)


def _buttons(block: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    (element,) = block["elements"]
    return element["positive_button"], element["negative_button"]


# --- the block -------------------------------------------------------------------------------
def test_feedback_block_is_slacks_context_actions_with_feedback_buttons() -> None:
    """One context_actions block holding one feedback_buttons element, as slack_sdk models
    it, with 👍 / 👎, accessibility labels and each button's own value."""
    block = feedback_block_for("a1b2")
    assert_valid_blocks([block])
    parsed = ContextActionsBlock(**block)
    (element,) = parsed.elements
    assert isinstance(element, FeedbackButtonsElement)
    assert ACTION_FEEDBACK == element.action_id
    up, down = _buttons(block)
    assert ("👍", "👎") == (up["text"]["text"], down["text"]["text"])
    assert (Vote("a1b2", "up"), Vote("a1b2", "down")) == (
        decode_vote(up["value"]),
        decode_vote(down["value"]),
    )
    assert all(1 <= len(b["accessibility_label"]) <= 75 for b in (up, down))


# --- the vote's value ----------------------------------------------------------------------------
@FAST
@given(answer_id=ANSWER_IDS, vote=st.sampled_from(["up", "down"]))
def test_a_vote_value_decodes_to_the_same_vote(answer_id: str, vote: Any) -> None:
    """decode(encode(id, vote)) is (id, vote), and the value is small."""
    value = encode_vote(answer_id, vote)
    assert Vote(answer_id, vote) == decode_vote(value)
    assert len(value) <= 80


@pytest.mark.parametrize(
    "forged",
    [
        "", "up", "fb1:up:", "fb1::abc", "fb1:sideways:abc", "fb2:up:abc", "FB1:UP:abc",
        "fb1:up:abc:more", "fb1:up:a b", "fb1:up:abc\n", " fb1:up:abc", "fb1:up:<@U123>",
        "fb1:up:" + "a" * 65, "fb1:up:" + "a" * 3000, "fb1:up:ab\u00e9", "fb1:up:ab/../c",
        None, 5, ["fb1:up:abc"], {"value": "fb1:up:abc"},
    ],
)  # fmt: skip
def test_a_value_we_did_not_make_is_refused(forged: object) -> None:
    """Anything but `fb1:up|down:<id>` is InvalidInput, with a message fit for the user."""
    with pytest.raises(InvalidInput) as raised:
        decode_vote(forged)
    assert "feedback button" in raised.value.message


@FAST
@given(value=near_values("fb1:up:", "fb1:down:", "fb1:"))
def test_any_value_that_decodes_is_exactly_one_we_make(value: str) -> None:
    """decode either refuses a value or returns the vote whose encoding is that value."""
    assert_only_our_values(value, decode_vote, lambda vote: encode_vote(vote.answer_id, vote.vote))


@pytest.mark.parametrize("answer_id", ["", "a b", "<@U1>", "a" * 65, "é"])
def test_an_answer_id_outside_the_format_gets_no_buttons(answer_id: str) -> None:
    """Ids are short and URL-safe; anything else is refused before it reaches Slack."""
    with pytest.raises(InvalidInput):
        feedback_block_for(answer_id)


# --- after the click ---------------------------------------------------------------------------
def test_thanks_for_a_thumbs_up_is_short_and_asks_nothing() -> None:
    """A 👍 gets a one-line thanks and no buttons."""
    message = render_feedback_thanks(Vote("a1", "up"))
    assert_valid_surface_message(message)
    assert "glad it helped" in message["text"]
    assert all(b["type"] != "actions" for b in message["blocks"])


def test_thanks_for_a_thumbs_down_offers_the_what_was_wrong_form() -> None:
    """A 👎 is thanked and offered a button whose value names the same vote."""
    message = render_feedback_thanks(Vote("a1", "down"))
    assert_valid_surface_message(message)
    (actions,) = [b for b in message["blocks"] if b["type"] == "actions"]
    (ask,) = actions["elements"]
    assert ACTION_FEEDBACK_COMMENT == ask["action_id"]
    assert Vote("a1", "down") == decode_vote(ask["value"])


def test_what_was_wrong_modal_is_an_optional_short_line_and_suggestion_carrying_the_vote() -> None:
    """A valid modal: an optional single-line input of at most 300 characters, then an
    optional multiline "Suggest a better answer" of at most 3,000 (Slack's most for a text
    input), a submit button, and the vote in private_metadata."""
    view = feedback_comment_modal(Vote("a1", "down"))
    assert_valid_view(view, "modal")
    assert FEEDBACK_MODAL_CALLBACK == view["callback_id"]
    assert Vote("a1", "down") == vote_from_view(view)
    (field, suggestion) = [b for b in view["blocks"] if b["type"] == "input"]
    assert (True, True, 3000) == (
        suggestion["optional"],
        suggestion["element"]["multiline"],
        suggestion["element"]["max_length"],
    )
    assert "Suggest a better answer" == suggestion["label"]["text"]
    assert field["optional"] is True
    assert (COMMENT_BLOCK_ID, "comment") == (
        field["block_id"],
        field["element"]["action_id"],
    )
    assert "plain_text_input" == field["element"]["type"]
    assert field["element"]["multiline"] is False
    assert 300 == field["element"]["max_length"] == 300


def _submitted(value: object) -> dict[str, Any]:
    return {"state": {"values": {COMMENT_BLOCK_ID: {"comment": {"value": value}}}}}


@pytest.mark.parametrize(
    ("view", "comment"),
    [
        (_submitted("The command is out of date"), "The command is out of date"),
        (_submitted("  two\nlines\tand \x00controls\u202e  "), "two lines and controls"),
        (_submitted(None), ""),
        (_submitted(""), ""),
        (_submitted(42), ""),
        ({"state": {"values": {}}}, ""),
        ({"state": None}, ""),
        ("not a view", ""),
        (None, ""),
    ],
)
def test_the_comment_is_read_defensively_from_the_submitted_view(
    view: object, comment: str
) -> None:
    """The typed line, cleaned; "" when the field is empty, missing or not text."""
    assert comment == comment_from_view(view)


def test_a_comment_longer_than_the_field_allows_is_cut() -> None:
    """Slack's max_length is enforced by its client only: the text is cut here as well."""
    comment = comment_from_view(_submitted("x" * 5000))
    assert len(comment) == 300


@pytest.mark.parametrize(
    "view", [{"private_metadata": "fb1:down:"}, {"private_metadata": None}, {}, None, "x"]
)
def test_a_submitted_view_we_did_not_open_names_no_vote(view: object) -> None:
    """private_metadata is checked like a button value."""
    with pytest.raises(InvalidInput):
        vote_from_view(view)


def test_recorded_note_is_a_valid_message() -> None:
    """The note after the form was sent says the comment is kept."""
    message = notice("feedback_recorded")
    assert_valid_surface_message(message)
    assert "saved" in message["text"]


def test_the_stale_notice_says_nothing_was_recorded() -> None:
    """A forged or out-of-date button gets a short valid notice that records nothing."""
    message = notice("feedback_stale")
    assert_valid_surface_message(message)
    assert "out of date or was not made by this bot" in message["text"]
    assert "Nothing was recorded" in message["blocks"][0]["elements"][0]["text"]
