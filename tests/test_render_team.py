"""The team answer form and the `/gdocs team` list (pure): the form's fields and the sentence
for each one out of bounds, its origin carried in private_metadata and nothing else
accepted, a message's mrkdwn read back as Markdown, and the list escaping the team's text
once (no ping, no spoofed link), capped within Slack's limits."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.errors import InvalidInput
from bot.render import (
    ALSO_BLOCK,
    ANSWER_BLOCK,
    MAX_LISTED,
    QUESTION_BLOCK,
    VISIBILITY_BLOCK,
    TeamForm,
    TeamListEntry,
    markdown_from_mrkdwn,
    question_block,
    render_team_list,
    render_team_notice,
    team_form_from_view,
    team_form_modal,
    team_saved_text,
)
from bot.team import TeamAnswer
from tests.fakes.slack_checks import check_view
from tests.test_render_support import assert_no_live_markup, assert_valid_message

NOW = datetime(2026, 12, 6, 10, 0, tzinfo=UTC)
FORM = TeamForm("abc_123", channel="C1", channel_name="infra", message_ts="1710000300.000001")
EVIL = "<!channel> <@U0ADMIN1> <https://evil.example|docs.cloud.google.com> &lt;b&gt; *x*"


def submitted(
    form: TeamForm, question: Any, answer: Any, also: Any = None, where: str = "channel"
) -> dict[str, Any]:
    """The view Slack sends back when `form`'s modal is submitted with these values."""
    values = {
        QUESTION_BLOCK: {QUESTION_BLOCK: {"type": "plain_text_input", "value": question}},
        ANSWER_BLOCK: {ANSWER_BLOCK: {"type": "plain_text_input", "value": answer}},
        ALSO_BLOCK: {ALSO_BLOCK: {"type": "plain_text_input", "value": also}},
        VISIBILITY_BLOCK: {VISIBILITY_BLOCK: {"selected_option": {"value": where}}},
    }
    metadata = team_form_modal(form)["private_metadata"]
    return {"private_metadata": metadata, "state": {"values": values}}


def team_answer(question: str = "how do I create a bucket?", **changes: Any) -> TeamAnswer:
    fields: dict[str, Any] = {
        "id": "abc_123",
        "question": question,
        "answer": "Terraform.",
        "author": "U0ANA001",
        "saved_at": NOW - timedelta(days=3),
        "review_at": NOW + timedelta(days=177),
        "visibility": "channel",
        "channel": "C1",
    }
    return TeamAnswer(**(fields | changes))


# --- the form ---------------------------------------------------------------------------------
@given(
    question=st.text(max_size=700),
    answer=st.text(max_size=4000),
    public=st.booleans(),
    mode=st.sampled_from(["new", "edit", "draft"]),
)
def test_the_form_is_a_valid_modal_for_any_text_and_carries_its_origin(
    question: str, answer: str, public: bool, mode: Any
) -> None:
    """Whatever was in the message, Slack takes the modal; its metadata gives back where it
    came from, and the whole workspace is offered only for a public channel."""
    form = TeamForm("abc_123", question, answer, channel="C1", channel_name="x|y" * 50,
                    message_ts="1.2", public=public, mode=mode)  # fmt: skip
    view = team_form_modal(form)
    back, _ = team_form_from_view({"private_metadata": view["private_metadata"]})
    [where] = [b for b in view["blocks"] if b["block_id"] == VISIBILITY_BLOCK]

    assert check_view(view, kinds=("modal",)) is None
    assert (form.answer_id, form.channel, form.message_ts, form.public, form.mode) == (
        back.answer_id, back.channel, back.message_ts, back.public, back.mode,
    )  # fmt: skip
    offered = [o["value"] for o in where["element"]["options"]]
    assert offered == (["channel", "workspace"] if public else ["channel"])
    assert "channel" == where["element"]["initial_option"]["value"]  # the saver opts in


def test_a_question_filled_in_is_a_new_input_read_back_and_refused_there() -> None:
    """Set by views.update, the question takes a block id of its own (Slack may keep the
    empty input's state under the old one); Save reads it, and says why not, under it."""
    empty, filled = team_form_modal(FORM), team_form_modal(replace(FORM, question="how?"))
    [old_id, new_id] = [view["blocks"][0]["block_id"] for view in (empty, filled)]
    values = {new_id: {new_id: {"type": "plain_text_input", "value": "q" * 501}}}
    metadata = filled["private_metadata"]

    assert old_id != new_id
    assert check_view(filled, kinds=("modal",)) is None
    assert [new_id] == list(
        team_form_from_view({"private_metadata": metadata, "state": {"values": values}})[1]
    )[:1]
    assert new_id == question_block({"state": {"values": values}})


@pytest.mark.parametrize(
    ("question", "answer", "also", "field", "said"),
    [
        ("", "an answer", None, QUESTION_BLOCK, "Say which question it answers."),
        ("q" * 501, "an answer", None, QUESTION_BLOCK,
         "That is 501 characters; a question can be 500."),
        ("q", "   ", None, ANSWER_BLOCK, "Write the answer."),
        ("q", "a" * 8001, None, ANSWER_BLOCK, "That is 8,001 characters; an answer can be 8,000."),
        ("q", "a", "1\n2\n3\n4\n5\n6", ALSO_BLOCK, "That is 6 lines; it can be 5."),
        ("q", "a", "p" * 501, ALSO_BLOCK, "Each line can be 500 characters."),
    ],
)  # fmt: skip
def test_a_field_out_of_bounds_gets_one_sentence_on_that_field(
    question: str, answer: str, also: str | None, field: str, said: str
) -> None:
    assert {field: said} == team_form_from_view(submitted(FORM, question, answer, also))[1]


def test_a_submitted_form_is_read_trimmed_with_distinct_phrasings() -> None:
    """Blank lines and repeats of "also answers" dropped; the answer's Markdown kept."""
    view = submitted(FORM, "  how?\n", "line 1\n\n  line 2  ", "a\n\n a \nb\n", "channel")
    form, errors = team_form_from_view(view)

    assert {} == errors
    assert ("how?", "line 1\n\n  line 2", ("a", "b")) == (form.question, form.answer, form.also)


@pytest.mark.parametrize(("public", "kept"), [(True, "workspace"), (False, "channel")])
def test_the_whole_workspace_is_kept_only_where_it_was_offered(public: bool, kept: str) -> None:
    """A private channel's form claiming "workspace" is saved for its channel."""
    form = TeamForm("abc_123", channel="C1", public=public)
    assert kept == team_form_from_view(submitted(form, "q", "a", where="workspace"))[0].visibility


@pytest.mark.parametrize(
    "metadata",
    [
        None,
        "fb1:down:abc",
        json.dumps({"id": "a b", "m": "new", "c": "C1", "ts": None, "n": None, "p": False}),
        json.dumps({"id": "abc", "m": "other", "c": "C1", "ts": None, "n": None, "p": False}),
        json.dumps({"id": "abc", "m": "new", "c": "<!here>", "ts": None, "n": None, "p": False}),
        json.dumps({"id": "abc", "m": "new", "c": "C1", "ts": None, "n": None, "p": "yes"}),
    ],
)
def test_a_form_this_bot_did_not_make_is_refused(metadata: object) -> None:
    with pytest.raises(InvalidInput, match="out of date or was not made by this bot"):
        team_form_from_view({"private_metadata": metadata, "state": {"values": {}}})


@pytest.mark.parametrize(
    ("mrkdwn", "markdown"),
    [
        ("<https://terraform.io|Terraform> &amp; more", "[Terraform](https://terraform.io) & more"),
        ("see <https://cloud.google.com/storage>", "see https://cloud.google.com/storage"),
        ("ask <@U0ANA001|ana> in <#C0INFRA1|infra>", "ask @ana in #infra"),
        ("<!here> and <!subteam^S1|@ops>", "@here and @ops"),
        ("a &lt;tag&gt; &amp;lt;", "a <tag> &lt;"),
        ("plain *bold* `code`", "plain *bold* `code`"),
    ],
)  # fmt: skip
def test_a_messages_mrkdwn_reads_back_as_markdown(mrkdwn: str, markdown: str) -> None:
    assert markdown == markdown_from_mrkdwn(mrkdwn)


# --- the list ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("days", "uses", "words"),
    [(0, 0, "saved today · not used yet"), (1, 1, "saved yesterday · used once"),
     (3, 12, "saved 3 days ago · used 12 times"),
     (200, 1500, "saved 6 months ago · used 1,500 times")],
)  # fmt: skip
def test_each_listed_answer_says_who_when_and_how_often(days: int, uses: int, words: str) -> None:
    answer = team_answer(saved_at=NOW - timedelta(days=days))
    [_, entry] = render_team_list([TeamListEntry(answer, uses, False)], NOW)["blocks"]

    assert f"by <@U0ANA001> · {words} · this channel only" in entry["text"]["text"]


def test_review_due_and_the_buttons_show_only_to_who_manages_it() -> None:
    due = team_answer(review_at=NOW - timedelta(days=1))
    managed = render_team_list([TeamListEntry(due, 0, True)], NOW)
    seen = render_team_list([TeamListEntry(due, 0, False)], NOW)

    assert "review due" in json.dumps(managed)
    assert "review due" not in json.dumps(seen)
    assert 3 == len(managed["blocks"])
    assert 2 == len(seen["blocks"])
    assert_valid_message(managed)


def test_a_long_list_is_capped_and_says_how_many_more() -> None:
    """The longest of everything (escaping grows `&` fivefold) still fits one message."""
    answers = [
        team_answer("&" * 498 + f"{i:02d}", id=f"{i:02d}" + "i" * 62, author="U" + "A" * 20)
        for i in range(MAX_LISTED + 7)
    ]
    shown = render_team_list([TeamListEntry(a, 10**6, True) for a in answers], NOW, note="&" * 300)

    assert_valid_message(shown)
    assert "and 7 more: `gdocs-bot team export` lists them all." in json.dumps(shown)


@given(question=st.text(min_size=1, max_size=400), note=st.text(max_size=200))
def test_the_teams_text_is_escaped_once_in_the_list_and_notices(question: str, note: str) -> None:
    """No ping, no link or entity the team's text could make, whatever it says."""
    answer = team_answer(question=EVIL + question)
    listed = render_team_list([TeamListEntry(answer, 0, True)], NOW, note=EVIL + note)
    saved = render_team_notice(team_saved_text(TeamForm("x", question=EVIL + question)))

    assert_valid_message(listed)
    for message in (listed, saved):
        assert_no_live_markup(message, [], asker="U0ANA001")
