"""Private answers: the "Share in channel" button and the header of the public re-post."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.errors import InvalidInput
from bot.models import Answer, Reference
from bot.render import (
    ACTION_SHARE,
    Message,
    decode_share_value,
    decode_vote,
    escape,
    notice,
    render_answer,
    render_private_answer,
    render_share_expired,
    render_shared_answer,
)
from tests.test_render_support import share_value
from tests.test_render_surface_support import (
    HOSTILE_TEXT,
    assert_inert,
    assert_only_our_values,
    assert_valid_blocks,
    assert_valid_surface_message,
    near_values,
)

FAST = settings(max_examples=150, deadline=None)
_EMPTY: Message = {"text": "", "blocks": []}


def _shared_header(asker: str, question: str) -> dict[str, Any]:
    """The first block of the answer re-posted in the channel."""
    return render_shared_answer(_EMPTY, asker, question)["blocks"][0]


def shared_header_text(asker: str, question: str) -> str:
    return str(_shared_header(asker, question)["text"]["text"])


def _share_button(message: Message) -> dict[str, Any]:
    [button] = [
        element
        for block in message["blocks"]
        if block["type"] == "actions"
        for element in block["elements"]
        if element["action_id"] == ACTION_SHARE
    ]
    return button


def test_share_button_carries_the_answer_id_we_decode_again() -> None:
    """One primary "Share in channel" button; its value decodes to the answer's id."""
    button = _share_button(render_private_answer(BODY, "q?", "a1b2"))
    assert ("Share in channel", "primary") == (button["text"]["text"], button["style"])
    assert "a1b2" == decode_share_value(button["value"])


def test_a_private_answer_says_who_sees_it_and_offers_to_share() -> None:
    """Under the private answer: "Only you can see this", then 👍 / 👎."""
    blocks = render_private_answer(BODY, "q?", "a1", "fb1")["blocks"][-2:]
    assert_valid_blocks(blocks)
    assert "Only you can see this" in blocks[0]["elements"][0]["text"]
    assert "context_actions" == blocks[1]["type"]


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
    assert_valid_blocks([_shared_header("UASKER1", "Why?")])


def test_an_asker_that_is_not_a_user_id_is_not_echoed() -> None:
    """A malformed id is left out: the header cannot ping or spoof anyone."""
    text = shared_header_text("<!channel>", "Why?")
    assert "<" not in text
    assert text.startswith("An answer was shared")


@FAST
@given(question=HOSTILE_TEXT)
def test_the_shared_header_is_valid_and_inert_for_any_question(question: str) -> None:
    """Any question: a valid block, one line, cut to 300, no markup but the asker's mention."""
    block = _shared_header("UASKER1", question)
    assert_valid_blocks([block])
    assert_inert([block], [], asker="UASKER1")
    quoted = block["text"]["text"].split(": “", 1)[-1]
    assert "\n" not in block["text"]["text"]
    assert len(quoted) <= 300 + 1


# --- the private answer and its shared copy ---------------------------------------------------
DOC_URL = "https://docs.cloud.google.com/storage/docs/creating-buckets"
BODY = render_answer(
    Answer(
        query="how do I create a bucket?",
        kind="answer",
        text="Use `gcloud storage buckets create`.",
        references=(Reference(name="documents/x", uri=DOC_URL, title="Create buckets"),),
    )
)


def _voted_answer(message: Message) -> str:
    """The answer id the message's closing 👍 / 👎 vote for."""
    [element] = message["blocks"][-1]["elements"]
    up, down = (decode_vote(element[k]["value"]) for k in ("positive_button", "negative_button"))
    assert ("context_actions", "up", "down") == (message["blocks"][-1]["type"], up.vote, down.vote)
    assert up.answer_id == down.answer_id
    return up.answer_id


def _layout(message: Message) -> list[str]:
    """Each block's type; an actions row as the action ids it holds."""
    return [
        "actions " + " ".join(e["action_id"] for e in b["elements"])
        if b["type"] == "actions"
        else b["type"]
        for b in message["blocks"]
    ]


def test_private_and_shared_copies_carry_the_same_answer() -> None:
    """The private copy: the question, the answer, the lock note and Share; the shared copy:
    who shared what, then the same answer blocks; both with the answer's 👍 / 👎."""
    private = render_private_answer(BODY, "how do I create a bucket?", "a1", "fb1")
    shared = render_shared_answer(BODY, "UASKER1", "how do I create a bucket?", "fb1")
    for message in (private, shared):
        assert_valid_surface_message(message)
        assert "fb1" == _voted_answer(message)
    assert "> how do I create a bucket?" == private["blocks"][0]["text"]["text"]
    assert BODY["blocks"] == shared["blocks"][1:-1]
    assert BODY["blocks"] == private["blocks"][1:-3]  # then Share, the lock note, 👍 / 👎
    assert "a1" == decode_share_value(_share_button(private)["value"])
    assert shared["blocks"][0]["text"]["text"].startswith("<@UASKER1> shared an answer to:")
    assert BODY["text"] == private["text"] == shared["text"]


def test_a_private_answer_has_one_actions_row_then_one_context_line_then_feedback() -> None:
    """Share joins the Show full doc row (first, as the main action): not a row of its own
    under the lock note; the lock note is the one context line, 👍 / 👎 close the answer."""
    with_docs = render_answer(
        Answer(
            query="q?",
            kind="answer",
            text="Use `gcloud storage buckets create`.",
            references=(Reference(name=f"documents/{DOC_URL[8:]}", uri=DOC_URL, title="B"),),
        )
    )
    layout = _layout(render_private_answer(with_docs, "q?", "a1", "fb1"))
    assert "actions share_answer show_doc:" in layout[-3]
    assert ["context", "context_actions"] == layout[-2:]
    assert 1 == sum(kind.startswith("actions") for kind in layout)
    without_docs = _layout(render_private_answer(BODY, "q?", "a1", "fb1"))
    assert ["actions share_answer", "context", "context_actions"] == without_docs[-3:]


def test_a_private_answer_that_could_not_be_kept_has_no_share_button() -> None:
    """Without an id there is nothing to share: the note stays, the button goes."""
    private = render_private_answer(BODY, "q?", None)
    assert_valid_surface_message(private)
    assert ACTION_SHARE not in str(private["blocks"])
    assert "Only you can see this answer" in private["blocks"][-1]["elements"][0]["text"]


def test_copies_of_a_full_answer_stay_within_slacks_block_limit() -> None:
    """A body that already has 50 blocks is cut, never sent over the limit."""
    full: Message = {
        "text": "t",
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": f"part {i}"}} for i in range(50)
        ],
    }
    private = render_private_answer(full, "q?", "a1", "fb1")
    shared = render_shared_answer(full, "UASKER1", "q?", "fb1")
    assert 50 == len(private["blocks"])
    assert 50 >= len(shared["blocks"])
    assert _share_button(private)
    assert_valid_blocks(private["blocks"])
    assert_valid_blocks(shared["blocks"])


@FAST
@given(question=HOSTILE_TEXT)
def test_copies_are_valid_and_inert_for_any_question(question: str) -> None:
    """Whatever was asked, both copies are messages Slack takes, with no markup but ours."""
    private = render_private_answer(BODY, question, "a1")
    shared = render_shared_answer(BODY, "UASKER1", question)
    assert_valid_blocks(private["blocks"])
    assert_valid_blocks(shared["blocks"])
    assert_inert(private["blocks"], [DOC_URL])
    assert_inert(shared["blocks"], [DOC_URL], asker="UASKER1")


@pytest.mark.parametrize(
    ("message", "says"),
    [
        (notice("shared_note"), "Shared in the channel."),
        (render_share_expired(60), "kept for 60 minutes"),
        (notice("share_forged"), "out of date or was not made by this bot"),
        (notice("share_not_in_channel"), "/invite @gdocs"),
        (notice("private_doc_refused", "/docs"), "`/docs doc …` without `private`"),
        (notice("private_doc_refused", "<!here>"), "`/gdocs doc …`"),
    ],
)
def test_share_notices_are_short_and_say_what_happened(message: Message, says: str) -> None:
    """Each notice is one short line Slack takes, saying the one thing that matters."""
    assert_valid_surface_message(message)
    assert says in message["text"]
    assert len(message["text"]) < 250
