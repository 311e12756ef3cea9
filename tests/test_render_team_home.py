"""The Home tab's team-answer sections and the 👎 form's suggestion: suggested answers with
Approve / Edit / Discard and answers due for review, capped, their untrusted text escaped
(no ping, no link), button values that decode only as made; nothing added without them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from bot.channels import ChannelSettings
from bot.render import (
    ACTION_TEAM_APPROVE,
    ACTION_TEAM_DISCARD,
    ACTION_TEAM_EDIT,
    MAX_TEAM_ITEMS,
    SUGGESTION_BLOCK_ID,
    ChannelLine,
    HomeInput,
    RecentQuestion,
    Vote,
    decode_team_value,
    feedback_comment_modal,
    notice,
    render_comment_thanks,
    render_home,
    suggestion_from_view,
    suggestion_too_long,
)
from bot.team import TeamAnswer
from tests.test_render_surface_support import (
    HOSTILE_TEXT,
    all_strings,
    assert_inert,
    assert_only_our_values,
    assert_valid_view,
    near_values,
)

NOW = datetime(2026, 12, 6, 10, 0, tzinfo=UTC)
AUTHOR = "UAUTHOR1"
FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _team(
    n: int = 0, *, question: str = "where do our buckets live?", answer: str = "europe-west4"
) -> TeamAnswer:
    saved = NOW - timedelta(days=200)
    return TeamAnswer(
        id=f"t{n}",
        question=question,
        answer=answer,
        author=AUTHOR,
        saved_at=saved,
        review_at=saved + timedelta(days=180),
        visibility="channel",
        channel="C1",
        status="draft",
    )


def _home(**kw: Any) -> dict[str, Any]:
    values: dict[str, Any] = {"answers_left": 37, "per_day": 50, "resets_at": NOW, "now": NOW}
    return render_home(HomeInput(**(values | kw)))


def _elements(view: dict[str, Any], action_id: str) -> list[dict[str, Any]]:
    return [
        element
        for block in view["blocks"]
        for element in [*block.get("elements", []), block.get("accessory") or {}]
        if element.get("action_id") == action_id
    ]


def test_without_team_answers_home_is_the_view_it_was() -> None:
    """Empty lists add no block: the same view as a Home that knows nothing of them."""
    before = _home()

    assert before == _home(team_drafts=(), team_due=())
    assert "Suggested team answers" not in all_strings(before["blocks"])
    assert "due for review" not in all_strings(before["blocks"])


@pytest.mark.parametrize(
    ("drafts", "due", "shown", "more"),
    [
        (1, 0, (1, 0), []),
        (0, 1, (0, 1), []),
        (5, 5, (5, 5), []),
        (6, 0, (5, 0), ["and 1 more"]),
        (0, 9, (0, 5), ["and 4 more"]),
        (7, 8, (5, 5), ["and 2 more", "and 3 more"]),
    ],
)
def test_each_list_shows_at_most_five_then_how_many_more(
    drafts: int, due: int, shown: tuple[int, int], more: list[str]
) -> None:
    view = _home(
        team_drafts=[_team(i) for i in range(drafts)],
        team_due=[_team(100 + i).model_copy(update={"status": "approved"}) for i in range(due)],
    )
    contexts = [
        block["elements"][0]["text"]
        for block in view["blocks"]
        if block["type"] == "context" and block["elements"][0]["text"].startswith("and ")
    ]

    assert MAX_TEAM_ITEMS == 5
    assert shown[0] == len(_elements(view, ACTION_TEAM_APPROVE))
    assert shown[0] == len(_elements(view, ACTION_TEAM_DISCARD))
    assert sum(shown) == len(_elements(view, ACTION_TEAM_EDIT))
    assert more == contexts
    assert_valid_view(view, "home")


def test_a_suggestion_says_what_who_when_and_its_first_lines() -> None:
    text = "line one\n\nline two\nline three\nline four"
    view = _home(team_drafts=[_team(answer=text)], viewer_tz="Europe/Rome")
    said = all_strings(view["blocks"])

    assert "“where do our buckets live?”" in said
    assert f"suggested by <@{AUTHOR}> on 20 May 2026" in said
    assert "> line one\n> line two\n> line three…" in said
    assert "line four" not in said


def test_an_answer_due_says_who_saved_it_and_when() -> None:
    due = _team().model_copy(update={"status": "approved"})
    said = all_strings(_home(team_due=[due])["blocks"])

    assert "Team answers due for review" in said
    assert f"saved by <@{AUTHOR}> on 20 May 2026" in said
    assert "Suggested team answers" not in said


@FAST
@given(question=HOSTILE_TEXT, answer=HOSTILE_TEXT)
def test_team_text_is_escaped_on_home(question: str, answer: str) -> None:
    """Whatever the team typed: a valid Home, no `<!here>`, no mention but the author's, no
    link, every `&` one of the three entities."""
    draft = _team(question=question or "q", answer=answer or "a")
    due = draft.model_copy(update={"status": "approved", "id": "due"})
    view = _home(team_drafts=[draft], team_due=[due])

    assert_valid_view(view, "home")
    assert_inert(view["blocks"], [], asker=AUTHOR)


@FAST
@given(value=near_values("team1:"))
def test_team_button_values_decode_only_as_made(value: str) -> None:
    def encode(answer_id: str) -> str:
        view = _home(team_drafts=[_team().model_copy(update={"id": answer_id})])
        return str(_elements(view, ACTION_TEAM_APPROVE)[0]["value"])

    assert_only_our_values(value, decode_team_value, encode)


def test_a_full_home_keeps_its_recent_questions_within_100_blocks() -> None:
    """Ten channels, five recent questions and both lists over their cap."""
    channels = [ChannelLine(f"C{i}", ChannelSettings(mode="auto")) for i in range(10)]
    recent = [RecentQuestion(f"question {i}", NOW) for i in range(10)]
    view = _home(
        channels=channels,
        recent=recent,
        team_drafts=[_team(i) for i in range(9)],
        team_due=[_team(i).model_copy(update={"status": "approved"}) for i in range(9)],
    )

    assert len(view["blocks"]) <= 100
    assert "Ask again answers in our direct messages." in all_strings(view["blocks"])


def _form(value: object) -> dict[str, Any]:
    return {"state": {"values": {SUGGESTION_BLOCK_ID: {"suggestion": {"value": value}}}}}


@pytest.mark.parametrize(
    ("view", "text"),
    [
        (
            _form("  Use **Terraform**.\n\n`terraform apply`  "),
            "Use **Terraform**.\n\n`terraform apply`",
        ),
        (_form(None), ""),
        (_form("   "), ""),
        ({"state": {"values": {}}}, ""),
        ("not a view", ""),
    ],
)
def test_the_suggestion_is_read_as_typed_markdown(view: object, text: str) -> None:
    assert text == suggestion_from_view(view)


@pytest.mark.parametrize(("length", "refused"), [(1, False), (3000, False), (3001, True)])
def test_a_suggestion_over_the_forms_3000_characters_is_refused_saying_so(
    length: int, refused: bool
) -> None:
    """The form's field takes 3,000 (Slack's cap); the store's 8,000 is never claimed."""
    said = suggestion_too_long("x" * length)
    [field] = [b for b in feedback_comment_modal(Vote("a1", "down"))["blocks"] if b.get("hint")]

    assert refused == (said is not None)
    assert 3000 == field["element"]["max_length"]
    assert not refused or str(said).endswith("can be 3,000.")
    assert "8,000" not in all_strings(field)


@pytest.mark.parametrize(
    ("commented", "suggested", "words"),
    [
        (True, True, "your note is saved with your vote, and your suggested answer goes"),
        (False, True, "Thanks — your suggested answer goes to the team's admins to review."),
    ],
)
def test_the_thanks_says_once_where_a_suggestion_goes(
    commented: bool, suggested: bool, words: str
) -> None:
    thanks = render_comment_thanks(commented, suggested)

    assert words in thanks["text"]
    assert 1 == all_strings(thanks["blocks"]).count("admins")


def test_without_a_suggestion_the_thanks_is_the_notes_as_before() -> None:
    assert notice("feedback_recorded") == render_comment_thanks(True, False)
