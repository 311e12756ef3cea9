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
from bot.quota import Pause
from bot.render import (
    ASK_AGAIN_ACTION_RE,
    AskAgain,
    HomeInput,
    RecentQuestion,
    Upstream,
    decode_ask_again,
    quota_words,
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


def _buttons(view: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    return [
        b["accessory"]
        for b in view["blocks"]
        if ASK_AGAIN_ACTION_RE.match(action := b.get("accessory", {}).get("action_id", ""))
        and action.startswith(prefix)
    ]


def _ask_again_buttons(view: dict[str, Any]) -> list[dict[str, Any]]:
    return _buttons(view, "ask_again:")


def encode_ask(asked: AskAgain) -> str:
    """The value of the Ask again button the Home tab shows for a question asked so."""
    recent = [RecentQuestion(asked.question, NOW, asked.kind, asked.private, scope=asked.scope)]
    buttons = _ask_again_buttons(render_home(_home(recent=recent)))
    if not buttons:
        raise InvalidInput("no button")
    return str(buttons[0]["value"])


def encode_ask_again(question: str) -> str:
    return encode_ask(AskAgain(question, "answer"))


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
        ("Europe/Rome", "tomorrow at 09:00 (your time)"),
        ("America/New_York", "tomorrow at 03:00 (your time)"),
        ("Asia/Tokyo", "at 17:00 (your time)"),
        ("Asia/Kolkata", "tomorrow at 13:30 (your time)"),
        (None, "at midnight PT"),
        ("", "at midnight PT"),
        ("Mars/Olympus_Mons", "at midnight PT"),
        ("../../etc/passwd", "at midnight PT"),
        ("Europe/Rome\n", "at midnight PT"),
    ],
)
def test_answers_come_back_at_pacific_midnight_shown_in_the_viewers_zone(
    tz: str | None, shown: str
) -> None:
    """The reset time in the viewer's own zone and clock, or in Pacific ("PT") when their
    zone is unknown or not a real zone name: the words `/gdocs quota` uses."""
    view = render_home(_home(viewer_tz=tz))
    assert f"37 of 50 left for the team; the count starts again {shown}." in _texts(view)


@pytest.mark.parametrize(
    ("left", "per_day", "shown"),
    [
        (0, 50, "Today's 50 generated answers are used up; they come back at midnight PT."),
        (-3, 50, "Today's 50 generated answers are used up"),
        (80, 50, "50 of 50 left"),
        (1, 50, "1 of 50 left"),
        (0, 0, "none today"),
    ],
)
def test_the_quota_line_is_plain_about_what_is_left(left: int, per_day: int, shown: str) -> None:
    """Used up (in the words of the step and the note), absurd counts clamped, or a zero
    allowance: each said plainly."""
    assert shown in _texts(render_home(_home(answers_left=left, per_day=per_day)))


def test_a_reset_time_already_past_reads_any_minute_now() -> None:
    """A stale ledger does not promise a time in the past."""
    view = render_home(_home(resets_at=NOW - timedelta(seconds=5), viewer_tz="Europe/Rome"))
    assert "the count starts again any minute now." in _texts(view)


def test_naive_times_are_taken_as_utc() -> None:
    """A datetime without a zone is UTC, not the machine's local time."""
    naive = _home(resets_at=RESET.replace(tzinfo=None), now=NOW.replace(tzinfo=None))
    recent = [RecentQuestion("q?", NOW.replace(tzinfo=None) - timedelta(hours=3))]
    aware = render_home(
        _home(viewer_tz="Europe/Rome", recent=[RecentQuestion("q?", NOW - timedelta(hours=3))])
    )
    shown = render_home(replace(naive, viewer_tz="Europe/Rome", recent=recent))
    assert aware == shown
    assert "starts again tomorrow at 09:00 (your time)" in _texts(shown)


PAUSES = [
    Pause("minute", NOW + timedelta(seconds=40), 10),
    Pause("day", RESET, None),
    Pause("unknown", NOW + timedelta(seconds=60), None),
]


@pytest.mark.parametrize("quota", ["counted", "unlimited"])
@pytest.mark.parametrize("pause", PAUSES, ids=[p.kind for p in PAUSES])
def test_while_google_pauses_answers_home_says_so_in_the_steps_words(
    pause: Pause, quota: Any
) -> None:
    """A pause Google asked for comes first, said as the stream's step and the answer's note
    say it; not "no daily limit" and not a count of answers left that cannot be used."""
    view = render_home(_home(pause=pause, quota=quota, viewer_tz="Europe/Rome"))
    size = pause.limit_value or 0
    said = quota_words(pause.kind, pause.until, size, tz="Europe/Rome", now=NOW).sentence
    assert said in _texts(view)
    assert "no daily limit" not in _texts(view)
    assert "left for the team" not in _texts(view)


def test_a_pause_that_is_over_is_not_mentioned() -> None:
    """Once Google's pause has ended the count is what matters again."""
    view = render_home(_home(pause=Pause("day", NOW - timedelta(seconds=1))))
    assert "37 of 50 left for the team" in _texts(view)


@pytest.mark.parametrize(
    ("upstream", "shown"),
    [
        (Upstream(), ":white_circle: No call to Google's documentation servers in the last hour."),
        (
            Upstream(NOW - timedelta(minutes=2)),
            ":large_green_circle: Google's documentation servers answered my last call "
            "(today at 15:28).",
        ),
        (
            Upstream(NOW - timedelta(minutes=1), failed=2),
            ":red_circle: My last 2 calls to Google's documentation servers failed "
            "(an error on their side, today at 15:29); questions may fail until they answer "
            "again.",
        ),
        (
            Upstream(NOW, failed=1, timed_out=True),
            ":red_circle: My last call to Google's documentation servers failed "
            "(no answer in time, today at 15:30)",
        ),
    ],
)
def test_the_servers_state_is_what_the_last_calls_met(upstream: Upstream, shown: str) -> None:
    """Green only when the last call answered; red, with how many failed in a row and when,
    when it did not; nothing claimed when no call was made lately."""
    text = _texts(render_home(_home(upstream=upstream, viewer_tz="UTC")))
    assert shown in text
    assert "HTTP" not in text


# --- the viewer's own questions ----------------------------------------------------------------
def test_the_last_five_questions_each_get_an_ask_again_button() -> None:
    """Of twelve questions the five given first are listed, each with a button whose value
    asks that question again; action ids are distinct."""
    recent = [RecentQuestion(f"question {i}?", NOW - timedelta(hours=i)) for i in range(12)]
    view = render_home(_home(recent=recent))
    assert_valid_view(view, "home")
    buttons = _ask_again_buttons(view)
    assert [f"question {i}?" for i in range(5)] == [
        decode_ask_again(b["value"]).question for b in buttons
    ]
    assert len({b["action_id"] for b in buttons}) == 5
    assert "question 5?" not in _texts(view)
    assert "You haven't asked" not in _texts(view)


@pytest.mark.parametrize(
    ("ago", "tz", "shown"),
    [
        (timedelta(seconds=20), None, "today at 07:29"),
        (timedelta(minutes=5), None, "today at 07:25"),
        (timedelta(hours=3), "Europe/Rome", "today at 13:30"),
        (timedelta(hours=20), "Europe/Rome", "yesterday at 20:30"),
        (timedelta(days=2, hours=1), None, "Sun 1 Nov at 06:30"),
        (-timedelta(minutes=3), None, "today at 07:33"),
    ],
)
def test_when_a_question_was_asked_is_a_real_time(
    ago: timedelta, tz: str | None, shown: str
) -> None:
    """The day and the time in the viewer's zone: ten questions of one minute are not ten
    rows of "just now"."""
    view = render_home(_home(recent=[RecentQuestion("q?", NOW - ago)], viewer_tz=tz))
    assert f"“q?”\n_{shown}_" in _texts(view)
    assert "just now" not in _texts(view)


def test_a_failed_private_search_is_marked_and_asked_again_as_it_was() -> None:
    """The row says it was a search, private, and got no answer; Ask again routes it as a
    private search of the words asked (no subcommand in the question)."""
    asked = RecentQuestion("firestore pricing", NOW, kind="search", private=True, failed=True)
    view = render_home(_home(recent=[asked], viewer_tz="UTC"))
    (button,) = _ask_again_buttons(view)
    assert "“firestore pricing”\n_today at 15:30 · search · private · :warning: not answered_" in (
        _texts(view)
    )
    assert AskAgain("firestore pricing", "search", private=True) == decode_ask_again(
        button["value"]
    )


def test_a_question_is_shown_escaped_and_asked_again_as_typed() -> None:
    """The list shows the text inert; the button asks exactly what was asked."""
    question = "why does <!here> & <@U123> break my <https://evil|docs>?"
    view = render_home(_home(recent=[RecentQuestion(question, NOW)]))
    assert_inert(view["blocks"], [])
    (button,) = _ask_again_buttons(view)
    assert question == decode_ask_again(button["value"]).question


def test_a_question_with_nothing_left_to_show_is_skipped() -> None:
    """A blank or control-only question gets no row and no button."""
    view = render_home(_home(recent=[RecentQuestion(" \x00\u202e ", NOW)]))
    assert [] == _ask_again_buttons(view)
    assert "You haven't asked me anything yet" in _texts(view)


def test_the_examples_can_be_asked_with_a_click() -> None:
    """Each "Try asking" example has an Ask button that asks it (a generated answer, not
    private) the way Ask again does."""
    buttons = _buttons(render_home(_home()), "ask_example:")
    assert 3 == len(buttons) == len({b["action_id"] for b in buttons})
    asked = [decode_ask_again(b["value"]) for b in buttons]
    assert all(a.kind == "answer" and not a.private for a in asked)
    assert "How do I create a Cloud Storage bucket with gcloud?" == asked[0].question


def test_a_scoped_question_shows_its_products_and_is_asked_again_with_them() -> None:
    """The row says `in:…` as the asker would type it; Ask again keeps the products."""
    scope = ("developer.android.com", "firebase.google.com")
    asked = RecentQuestion("how do I add sign-in?", NOW, kind="answer", scope=scope)
    view = render_home(_home(recent=[asked], viewer_tz="UTC"))
    assert "“how do I add sign-in?”\n_today at 15:30 · in:android,firebase_" in _texts(view)
    (button,) = _ask_again_buttons(view)
    assert AskAgain("how do I add sign-in?", "answer", scope=scope) == decode_ask_again(
        button["value"]
    )


@FAST
@given(
    question=HOSTILE_TEXT,
    private=st.booleans(),
    scope=st.sampled_from(
        [(), ("firebase.google.com",), ("developers.google.com", "mapsplatform.google.com")]
    ),
)
def test_ask_again_keeps_the_products_apart_from_the_question(
    question: str, private: bool, scope: tuple[str, ...]
) -> None:
    try:
        value = encode_ask(AskAgain(question, "search", private, scope))
    except InvalidInput:
        return
    assert scope == decode_ask_again(value).scope


@pytest.mark.parametrize(
    "forged", ["ask2:answer@gcp:x", "ask2:answer@firebase,android:x", "ask2:answer@nope:x"]
)
def test_products_an_ask_again_value_we_did_not_write_are_refused(forged: str) -> None:
    """Only the canonical names `_encode_ask` writes (an alias or another order is not)."""
    with pytest.raises(InvalidInput):
        decode_ask_again(forged)


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
    assert AskAgain(cleaned, "answer") == decode_ask_again(value)
    assert len(value) <= 2000


@FAST
@given(
    question=HOSTILE_TEXT,
    kind=st.sampled_from(["answer", "search", "pay", "doc"]),
    private=st.booleans(),
)
def test_ask_again_keeps_the_route_and_privacy_apart_from_the_question(
    question: str, kind: str, private: bool
) -> None:
    """The route and `private` travel beside the question: a private search re-asked is a
    private search of the same words, whatever the words."""
    try:
        value = encode_ask(AskAgain(question, kind, private))
    except InvalidInput:
        return
    assert AskAgain(" ".join(strip_controls(question).split()), kind, private) == decode_ask_again(
        value
    )


@pytest.mark.parametrize("question", ["…", "?", "a", "ask1:nested", "ask2:search:x"])
def test_even_a_tiny_question_round_trips(question: str) -> None:
    """A one-character or odd-looking question is asked again exactly."""
    assert question == decode_ask_again(encode_ask_again(question)).question


def test_a_button_published_before_is_still_asked_as_typed() -> None:
    """`ask1:` values (Home tabs published by an older version, Try again) are routed as
    typed: no route, not private unless the text says so."""
    assert AskAgain("private how do I x?") == decode_ask_again("ask1:private how do I x?")


@FAST
@given(question=LONG_TEXT)
def test_a_long_question_is_cut_to_fit_a_button_value(question: str) -> None:
    """Up to 2000 characters, still decodable, the start of the question kept."""
    value = encode_ask_again(question)
    assert len(value) <= 2000
    decoded = decode_ask_again(value).question
    assert " ".join(question.split()).startswith(decoded.removesuffix("…"))


@pytest.mark.parametrize(
    "forged",
    ["", "ask1:", "ask2:hello", "ask2:answer:", "ask2:talk:hi", "ask2:answer+public:hi",
     "ask3:answer:hi", "hello", "ask1: hello", "ask1:hello ", "ask1:two  spaces",
     "ask1:new\nline", "ask1:nul\x00", "ask2:pay:new\nline", "ask1:" + "x" * 2000, None, 7,
     {"q": "hello"}],
)  # fmt: skip
def test_an_ask_again_value_we_did_not_make_is_refused(forged: object) -> None:
    """Only `ask1:` or `ask2:<route>[+private]:` and one clean line, at most 2000 characters."""
    with pytest.raises(InvalidInput):
        decode_ask_again(forged)


@FAST
@given(value=near_values("ask1:", "ask1: ", "ask", "ask2:answer:", "ask2:search+private:"))
def test_any_ask_again_value_that_decodes_is_one_we_make(value: str) -> None:
    """decode refuses a value or returns the question whose encoding it is."""
    assert_only_our_values(value, decode_ask_again, encode_ask)


# --- any input ---------------------------------------------------------------------------------
@FAST
@given(
    questions=st.lists(st.one_of(HOSTILE_TEXT, LONG_TEXT), max_size=14),
    tz=st.one_of(st.none(), HOSTILE_TEXT, st.sampled_from(["Europe/Rome", "Asia/Kathmandu"])),
    left=st.integers(-5, 500),
    per_day=st.integers(-1, 500),
    failed=st.integers(0, 5),
    offset=st.integers(-3 * 86_400, 3 * 86_400),
    pause=st.one_of(st.none(), st.sampled_from(PAUSES)),
)
def test_any_home_is_a_valid_inert_view(
    questions: list[str],
    tz: str | None,
    left: int,
    per_day: int,
    failed: int,
    offset: int,
    pause: Pause | None,
) -> None:
    """Whatever the history, zone, counts, pause and calls: a valid Home view of at most 100
    blocks, no markup from the input, every Ask value decodable."""
    recent = [
        RecentQuestion(q, NOW - timedelta(minutes=i * 37), "search", i % 2 == 0, i % 3 == 0)
        for i, q in enumerate(questions)
    ]
    view = render_home(
        _home(
            recent=recent,
            viewer_tz=tz,
            answers_left=left,
            per_day=per_day,
            upstream=Upstream(NOW - timedelta(seconds=offset), failed),
            resets_at=NOW + timedelta(seconds=offset),
            pause=pause,
        )
    )
    assert_valid_view(view, "home")
    assert_inert(view["blocks"], [])
    for button in _buttons(view, "ask_"):
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
