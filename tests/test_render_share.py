"""Private answers: the "Share in channel" button and the header of the public re-post."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.errors import InvalidInput
from bot.render.escape import escape
from bot.render.share import (
    ACTION_SHARE,
    SHARED_QUESTION_CHARS,
    decode_share_value,
    private_answer_blocks,
    share_button_block,
    share_value,
    shared_header,
    shared_header_text,
)
from tests.test_render_surface_support import (
    HOSTILE_TEXT,
    assert_inert,
    assert_only_our_values,
    assert_valid_blocks,
    near_values,
)

FAST = settings(max_examples=150, deadline=None)


def test_share_button_carries_the_answer_id_we_decode_again() -> None:
    """One primary "Share in channel" button; its value decodes to the answer's id."""
    block = share_button_block("a1b2")
    assert_valid_blocks([block])
    (button,) = block["elements"]
    assert (ACTION_SHARE, "Share in channel") == (button["action_id"], button["text"]["text"])
    assert "a1b2" == decode_share_value(button["value"])


def test_a_private_answer_says_who_sees_it_and_offers_to_share() -> None:
    """Under the private answer: "Only you can see this" and the Share button."""
    blocks = private_answer_blocks("a1")
    assert_valid_blocks(blocks)
    assert "Only you can see this" in blocks[0]["elements"][0]["text"]
    assert ACTION_SHARE == blocks[1]["elements"][0]["action_id"]


@given(answer_id=st.from_regex(r"\A[A-Za-z0-9_.-]{1,64}\Z"))
@FAST
def test_share_values_round_trip(answer_id: str) -> None:
    """decode(encode(id)) is the id."""
    assert answer_id == decode_share_value(share_value(answer_id))


@pytest.mark.parametrize(
    "forged",
    ["", "a1", "share1:", "share2:a1", "share1:a 1", "share1:a1\n", "share1:" + "a" * 65,
     "fb1:up:a1", None, 3, ["share1:a1"]],
)  # fmt: skip
def test_a_share_value_we_did_not_make_is_refused(forged: object) -> None:
    """Anything but `share1:<id>` is InvalidInput."""
    with pytest.raises(InvalidInput):
        decode_share_value(forged)


@FAST
@given(value=near_values("share1:", "share"))
def test_any_share_value_that_decodes_is_one_we_make(value: str) -> None:
    """decode refuses a value or returns the id whose encoding it is."""
    assert_only_our_values(value, decode_share_value, share_value)


def test_the_shared_header_names_the_asker_and_quotes_the_question() -> None:
    """ "<@U…> shared an answer to: “…”", the question escaped."""
    text = shared_header_text("UASKER1", "Why does <!here> & co fail?")
    assert f"<@UASKER1> shared an answer to: “{escape('Why does <!here> & co fail?')}”" == text
    assert_valid_blocks([shared_header("UASKER1", "Why?")])


def test_an_asker_that_is_not_a_user_id_is_not_echoed() -> None:
    """A malformed id is left out: the header cannot ping or spoof anyone."""
    text = shared_header_text("<!channel>", "Why?")
    assert "<" not in text
    assert text.startswith("An answer was shared")


@FAST
@given(question=HOSTILE_TEXT)
def test_the_shared_header_is_valid_and_inert_for_any_question(question: str) -> None:
    """Any question: a valid block, one line, cut to 300, no markup but the asker's mention."""
    block = shared_header("UASKER1", question)
    assert_valid_blocks([block])
    assert_inert([block], [], asker="UASKER1")
    quoted = block["text"]["text"].split(": “", 1)[-1]
    assert "\n" not in block["text"]["text"]
    assert len(quoted) <= SHARED_QUESTION_CHARS + 1
