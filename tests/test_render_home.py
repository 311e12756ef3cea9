"""The Home tab: what the bot does, the team's answers left and when they come back in the
viewer's time zone, the servers' state, and the viewer's recent questions with Ask again."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.errors import InvalidInput
from bot.render import (
    ASK_AGAIN_ACTION_RE,
    HomeInput,
    RecentQuestion,
    decode_ask_again,
    render_home,
)
from bot.text import strip_controls
from tests.test_render_surface_support import (
    HOSTILE_TEXT,
    LONG_TEXT,
    all_strings,
    assert_inert,
    assert_only_our_values,
    assert_valid_view,
    near_values,
)

#: Tuesday 3 November 2026, 15:30 UTC (07:30 in California, after both DST changes)
NOW = datetime(2026, 11, 3, 15, 30, tzinfo=UTC)
#: the next midnight Pacific
RESET = datetime(2026, 11, 4, 8, 0, tzinfo=UTC)
FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _home(**kw: Any) -> HomeInput:
    values: dict[str, Any] = {"answers_left": 37, "per_day": 50, "resets_at": RESET, "now": NOW}
    return HomeInput(**{**values, **kw})


def _texts(view: dict[str, Any]) -> str:
    return all_strings(view["blocks"])


def _ask_again_buttons(view: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        b["accessory"]
        for b in view["blocks"]
        if ASK_AGAIN_ACTION_RE.match(b.get("accessory", {}).get("action_id", ""))
    ]


def encode_ask_again(question: str) -> str:
    """The value of the Ask again button the Home tab shows for `question`."""
    buttons = _ask_again_buttons(render_home(_home(recent=[RecentQuestion(question, NOW)])))
    if not buttons:
        raise InvalidInput("no button")
    return str(buttons[0]["value"])


# --- what everyone sees --------------------------------------------------------------------------
def test_a_newcomer_sees_what_the_bot_does_and_a_friendly_empty_history() -> None:
    """No history: the intro, three example questions, every /gdocs form, and an invitation
    instead of an empty list; a valid Home view."""
    view = render_home(_home())
    assert_valid_view(view, "home")
    text = _texts(view)
    examples = [
        "How do I create a Cloud Storage bucket with gcloud?",
        "What is the difference between Cloud Firestore and the Realtime Database?",
        "How do I ask for the location permission in an Android app?",
    ]
    assert all(f"• {question}" in text for question in examples)
    for form in ("&lt;question&gt;", "search", "pay", "doc", "private", "quota"):
        assert f"`/gdocs {form}" in text, form
    assert "You haven't asked me anything yet" in text
    assert [] == _ask_again_buttons(view)


@pytest.mark.parametrize(
    ("tz", "shown"),
    [
        ("Europe/Rome", "at 09:00 tomorrow, Europe/Rome time (in 16 h 30 min)"),
        ("America/New_York", "at 03:00 tomorrow, America/New York time (in 16 h 30 min)"),
        ("Asia/Tokyo", "at 17:00 today, Asia/Tokyo time (in 16 h 30 min)"),
        ("Asia/Kolkata", "at 13:30 tomorrow, Asia/Kolkata time"),
        (None, "at 00:00 tomorrow, PT (in 16 h 30 min)"),
        ("", "at 00:00 tomorrow, PT"),
        ("Mars/Olympus_Mons", "at 00:00 tomorrow, PT"),
        ("../../etc/passwd", "at 00:00 tomorrow, PT"),
        ("Europe/Rome\n", "at 00:00 tomorrow, PT"),
    ],
)
def test_answers_come_back_at_pacific_midnight_shown_in_the_viewers_zone(
    tz: str | None, shown: str
) -> None:
    """The reset time in the viewer's own zone and clock, or in Pacific ("PT") when their
    zone is unknown or not a real zone name."""
    view = render_home(_home(viewer_tz=tz))
    assert "37 of 50 left for the team" in _texts(view)
    assert shown in _texts(view)


@pytest.mark.parametrize(
    ("left", "per_day", "shown"),
    [
        (0, 50, "all 50 are used"),
        (-3, 50, "all 50 are used"),
        (80, 50, "50 of 50 left"),
        (1, 50, "1 of 50 left"),
        (0, 0, "none today"),
    ],
)
def test_the_quota_line_is_plain_about_what_is_left(left: int, per_day: int, shown: str) -> None:
    """Used up, absurd counts clamped, or a zero allowance: each said plainly."""
    assert shown in _texts(render_home(_home(answers_left=left, per_day=per_day)))


def test_a_reset_time_already_past_reads_any_minute_now() -> None:
    """A stale ledger does not promise a time in the past."""
    view = render_home(_home(resets_at=NOW - timedelta(seconds=5), viewer_tz="Europe/Rome"))
    assert "The day's 50 come back any minute now." in _texts(view)


def test_naive_times_are_taken_as_utc() -> None:
    """A datetime without a zone is UTC, not the machine's local time."""
    naive = _home(resets_at=RESET.replace(tzinfo=None), now=NOW.replace(tzinfo=None))
    recent = [RecentQuestion("q?", NOW.replace(tzinfo=None) - timedelta(hours=3))]
    aware = render_home(
        _home(viewer_tz="Europe/Rome", recent=[RecentQuestion("q?", NOW - timedelta(hours=3))])
    )
    shown = render_home(replace(naive, viewer_tz="Europe/Rome", recent=recent))
    assert aware == shown
    assert "come back at 09:00 tomorrow, Europe/Rome time" in _texts(shown)


def test_the_servers_state_is_shown_with_an_escaped_detail() -> None:
    """Green when they answer; red and the detail (escaped) when they don't."""
    assert ":large_green_circle:" in _texts(render_home(_home()))
    view = render_home(_home(ready=False, ready_detail="timed out <!channel> & <@U1>"))
    assert ":red_circle:" in _texts(view)
    assert "timed out &lt;!channel&gt; &amp; &lt;@U1&gt;" in _texts(view)
    assert_inert(view["blocks"], [])


# --- the viewer's own questions ----------------------------------------------------------------
def test_the_last_ten_questions_each_get_an_ask_again_button() -> None:
    """Of twelve questions the ten given first are listed, each with a button whose value
    decodes to that question; action ids are distinct."""
    recent = [RecentQuestion(f"question {i}?", NOW - timedelta(hours=i)) for i in range(12)]
    view = render_home(_home(recent=recent))
    assert_valid_view(view, "home")
    buttons = _ask_again_buttons(view)
    assert [f"question {i}?" for i in range(10)] == [decode_ask_again(b["value"]) for b in buttons]
    assert all(ASK_AGAIN_ACTION_RE.match(b["action_id"]) for b in buttons)
    assert len({b["action_id"] for b in buttons}) == 10
    assert "question 10?" not in _texts(view)
    assert "You haven't asked" not in _texts(view)


@pytest.mark.parametrize(
    ("ago", "tz", "shown"),
    [
        (timedelta(seconds=20), None, "just now"),
        (timedelta(minutes=5), None, "5 min ago"),
        (timedelta(hours=3), "Europe/Rome", "today at 13:30"),
        (timedelta(hours=20), "Europe/Rome", "yesterday at 20:30"),
        (timedelta(days=2, hours=1), None, "Sun 1 Nov at 06:30"),
        (-timedelta(minutes=3), None, "just now"),
    ],
)
def test_when_a_question_was_asked_reads_naturally(
    ago: timedelta, tz: str | None, shown: str
) -> None:
    """Minutes for the last hour, then the day and the time in the viewer's zone."""
    view = render_home(_home(recent=[RecentQuestion("q?", NOW - ago)], viewer_tz=tz))
    assert f"“q?”\n_{shown}_" in _texts(view)


def test_a_question_is_shown_escaped_and_asked_again_as_typed() -> None:
    """The list shows the text inert; the button asks exactly what was asked."""
    question = "why does <!here> & <@U123> break my <https://evil|docs>?"
    view = render_home(_home(recent=[RecentQuestion(question, NOW)]))
    assert_inert(view["blocks"], [])
    (button,) = _ask_again_buttons(view)
    assert question == decode_ask_again(button["value"])


def test_a_question_with_nothing_left_to_show_is_skipped() -> None:
    """A blank or control-only question gets no row and no button."""
    view = render_home(_home(recent=[RecentQuestion(" \x00\u202e ", NOW)]))
    assert [] == _ask_again_buttons(view)
    assert "You haven't asked me anything yet" in _texts(view)


# --- Ask again values --------------------------------------------------------------------------
@FAST
@given(question=HOSTILE_TEXT)
def test_ask_again_round_trips_the_question_on_one_line(question: str) -> None:
    """decode(encode(q)) is q on one line, controls dropped; a blank question is refused."""
    cleaned = " ".join(strip_controls(question).split())
    try:
        value = encode_ask_again(question)
    except InvalidInput:
        assert "" == cleaned
        return
    assert cleaned == decode_ask_again(value)
    assert len(value) <= 2000


@pytest.mark.parametrize("question", ["…", "?", "a", "ask1:nested"])
def test_even_a_tiny_question_round_trips(question: str) -> None:
    """A one-character or odd-looking question is asked again exactly."""
    assert question == decode_ask_again(encode_ask_again(question))


@FAST
@given(question=LONG_TEXT)
def test_a_long_question_is_cut_to_fit_a_button_value(question: str) -> None:
    """Up to 2000 characters, still decodable, the start of the question kept."""
    value = encode_ask_again(question)
    assert len(value) <= 2000
    decoded = decode_ask_again(value)
    assert " ".join(question.split()).startswith(decoded.removesuffix("…"))


@pytest.mark.parametrize(
    "forged",
    ["", "ask1:", "ask2:hello", "hello", "ask1: hello", "ask1:hello ", "ask1:two  spaces",
     "ask1:new\nline", "ask1:nul\x00", "ask1:" + "x" * 2000, None, 7, {"q": "hello"}],
)  # fmt: skip
def test_an_ask_again_value_we_did_not_make_is_refused(forged: object) -> None:
    """Only `ask1:` and one clean line of at most 2000 characters."""
    with pytest.raises(InvalidInput):
        decode_ask_again(forged)


@FAST
@given(value=near_values("ask1:", "ask1: ", "ask"))
def test_any_ask_again_value_that_decodes_is_one_we_make(value: str) -> None:
    """decode refuses a value or returns the question whose encoding it is."""
    assert_only_our_values(value, decode_ask_again, encode_ask_again)


# --- any input ---------------------------------------------------------------------------------
@FAST
@given(
    questions=st.lists(st.one_of(HOSTILE_TEXT, LONG_TEXT), max_size=14),
    detail=HOSTILE_TEXT,
    tz=st.one_of(st.none(), HOSTILE_TEXT, st.sampled_from(["Europe/Rome", "Asia/Kathmandu"])),
    left=st.integers(-5, 500),
    per_day=st.integers(-1, 500),
    ready=st.booleans(),
    offset=st.integers(-3 * 86_400, 3 * 86_400),
)
def test_any_home_is_a_valid_inert_view(
    questions: list[str],
    detail: str,
    tz: str | None,
    left: int,
    per_day: int,
    ready: bool,
    offset: int,
) -> None:
    """Whatever the history, detail, zone and counts: a valid Home view of at most 100
    blocks, no markup from the input, every Ask again value decodable."""
    recent = [RecentQuestion(q, NOW - timedelta(minutes=i * 37)) for i, q in enumerate(questions)]
    view = render_home(
        _home(
            recent=recent,
            ready_detail=detail,
            viewer_tz=tz,
            answers_left=left,
            per_day=per_day,
            ready=ready,
            resets_at=NOW + timedelta(seconds=offset),
        )
    )
    assert_valid_view(view, "home")
    assert_inert(view["blocks"], [])
    for button in _ask_again_buttons(view):
        assert decode_ask_again(button["value"])


def test_a_strange_command_name_falls_back_to_gdocs() -> None:
    """The forms name the configured command only when it is a plain slash command."""
    assert "`/ask &lt;question&gt;`" in _texts(render_home(_home(command="/ask")))
    assert "`/gdocs &lt;question&gt;`" in _texts(render_home(_home(command="<!here>")))


@pytest.mark.parametrize(
    ("quota", "shown"),
    [
        ("unknown", "I can't read the team's count right now"),
        ("unlimited", "this bot sets no daily limit"),
    ],
)
def test_a_quota_that_cannot_be_read_or_is_not_limited_says_so(quota: Any, shown: str) -> None:
    """No made-up figures: an unreadable ledger and an unlimited day are said plainly, with
    no "of N left" count."""
    view = render_home(_home(quota=quota, answers_left=0, per_day=0))
    assert_valid_view(view, "home")
    assert shown in _texts(view)
    assert " left for the team" not in _texts(view)
    assert "none today" not in _texts(view)
