"""The routing rules: which server a Slack text goes to, and thread follow-ups."""

from __future__ import annotations

from typing import get_args

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bot.channels import ChannelSettings
from bot.slack.flows.routing import (
    Route,
    RouteKind,
    Router,
    asked_words,
    clean_text,
    is_follow_up,
    strip_mention,
    with_channel,
    with_thread_context,
)


def route(text: str, *, min_words: int = 4, pay: bool = True) -> Route:
    return Router(min_words, pay).route(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", Route("help", "")),
        ("   ", Route("help", "")),
        ("help", Route("help", "")),
        ("HELP", Route("help", "")),
        ("firestore pricing", Route("search", "firestore pricing")),
        ("cloud run", Route("search", "cloud run")),
        ("bigquery", Route("search", "bigquery")),
        ("firestore pricing?", Route("answer", "firestore pricing?")),
        ("how do I create a bucket", Route("answer", "how do I create a bucket")),
        ("What is Cloud Run", Route("answer", "What is Cloud Run")),
        ("explain IAM", Route("answer", "explain IAM")),
        ("compare spanner firestore", Route("answer", "compare spanner firestore")),
        ("show bucket limits", Route("answer", "show bucket limits")),
        ("cloud storage bucket naming rules", Route("answer", "cloud storage bucket naming rules")),
        ("search how do I create a bucket?", Route("search", "how do I create a bucket?")),
        ("search", Route("search", "")),
        ("pay tokenization", Route("pay", "tokenization")),
        ("doc https://docs.cloud.google.com/x", Route("doc", "https://docs.cloud.google.com/x")),
        ("ask firestore pricing", Route("answer", "firestore pricing")),
        ("google pay", Route("pay", "google pay")),
        (
            "how do I add a pass to Google Wallet?",
            Route("pay", "how do I add a pass to Google Wallet?"),
        ),
        ("PaymentDataRequest fields", Route("pay", "PaymentDataRequest fields")),
        ("IsReadyToPay", Route("pay", "IsReadyToPay")),
        ("gpay payment methods", Route("pay", "gpay payment methods")),
        ("what is tokenization in Android?", Route("pay", "what is tokenization in Android?")),
        ("loyalty passes", Route("pay", "loyalty passes")),
        ("paypal", Route("search", "paypal")),
        ("wallpaper api", Route("search", "wallpaper api")),
        ("helpful tips", Route("search", "helpful tips")),
        ("report", Route("report", "")),
        ("REPORT", Route("report", "")),
        ("report templates", Route("search", "report templates")),
    ],
)
def test_route_text_sends_keywords_to_search_and_questions_to_answer(
    text: str, expected: Route
) -> None:
    """Keyword lookups use search, questions answer_query, Pay topics the Pay server."""
    assert expected == route(text)


def test_pay_topics_stay_on_developer_knowledge_when_pay_routing_is_off() -> None:
    """With ROUTE_PAY_QUESTIONS off a Pay question is an ordinary question."""
    assert Route("answer", "how does Google Pay tokenization work?") == route(
        "how does Google Pay tokenization work?", pay=False
    )
    assert Route("search", "google pay") == route("google pay", pay=False)


def test_answer_min_words_is_the_keyword_threshold() -> None:
    """A text with enough words is a question even without a question word."""
    assert Route("answer", "firestore pricing") == route("firestore pricing", min_words=2)
    assert Route("search", "firestore pricing tiers") == route(
        "firestore pricing tiers", min_words=5
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<@UBOT> how do buckets work?", "how do buckets work?"),
        ("<@UBOT|gdocs> firestore", "firestore"),
        ("hey <@UBOT> what is IAM?", "hey what is IAM?"),
        ("<@UOTHER> what is IAM?", "<@UOTHER> what is IAM?"),
        ("<@UBOT>", ""),
        ("nul\x00 bytes\x07 gone", "nul bytes gone"),
    ],
)
def test_strip_mention_removes_only_the_bots_own_mention(text: str, expected: str) -> None:
    """The bot's `<@BOT>` goes; other mentions stay (the renderer escapes them)."""
    assert expected == strip_mention(text, "UBOT")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("what about in Go?", True),
        ("and for Java?", True),
        ("how about Python", True),
        ("how do I delete it?", True),
        ("does that work on Windows?", True),
        ("in Go?", True),
        ("what is Cloud Run?", False),
        ("how do I create a Cloud Storage bucket?", False),
        ("firestore pricing", False),
        ("what about the long list of every single service in the catalog please?", False),
        ("", False),
    ],
)
def test_is_follow_up_recognises_short_back_references(text: str, expected: bool) -> None:
    """Only short texts that open like a follow-up or point back count."""
    assert expected == is_follow_up(text)


@pytest.mark.parametrize(
    ("earlier", "text", "expected"),
    [
        (
            "how do I create a bucket?",
            "what about in Go?",
            Route(
                "answer",
                "how do I create a bucket? — follow-up: what about in Go?",
                topic="how do I create a bucket?",
            ),
        ),
        ("how do I create a bucket?", "what is Cloud Run?", Route("answer", "what is Cloud Run?")),
        (None, "what about in Go?", Route("answer", "what about in Go?")),
        ("how do I create a bucket?", "search go client", Route("search", "go client")),
        ("how do I create a bucket?", "help", Route("help", "")),
        (
            "google pay tokenization",
            "and on iOS?",
            Route(
                "pay",
                "google pay tokenization — follow-up: and on iOS?",
                topic="google pay tokenization",
            ),
        ),
    ],
)
def test_route_in_thread_carries_the_threads_question_into_follow_ups(
    earlier: str | None, text: str, expected: Route
) -> None:
    """A follow-up is sent with the thread's earlier question; anything else as typed."""
    assert expected == Router(4, True).route_in_thread(text, earlier)


def test_with_thread_context_leaves_standalone_questions_alone() -> None:
    """A complete question in a thread is not glued to the earlier one."""
    assert "what is IAM?" == with_thread_context("how do buckets work?", "what is IAM?")


@given(st.text(max_size=300))
@example("QUOTA")  # a command's word in any case: `/gdocs quota`'s own route
def test_route_text_always_returns_a_known_route_without_control_characters(text: str) -> None:
    """Any text gets a route, and what is sent upstream has no control characters."""
    result = route(text)
    assert result.kind in get_args(RouteKind)
    assert result.query == clean_text(result.query)
    assert not any(ord(c) < 32 and c not in "\n\t" for c in result.query)


@pytest.mark.parametrize(
    ("typed", "asked"),
    [
        ("private How do I list buckets?", "How do I list buckets?"),
        ("-p search firestore pricing", "firestore pricing"),
        ("pay  Google Pay button", "Google Pay button"),
        ("doc https://docs.cloud.google.com/x", "https://docs.cloud.google.com/x"),
        ("private", "private"),  # nothing after it: the word is what was typed
        ("search", "search"),
        ("how do I search logs?", "how do I search logs?"),
    ],
)
def test_the_question_is_quoted_without_the_words_that_said_how(typed: str, asked: str) -> None:
    """The ack and an error quote what was asked, not `private` or `search` before it."""
    assert asked == asked_words(typed)


FIREBASE = ("firebase.google.com",)
ANDROID_FIREBASE = ("developer.android.com", "firebase.google.com")


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        (
            "in:firebase how do I add sign-in?",
            Route("answer", "how do I add sign-in?", scope=FIREBASE, scope_from="question"),
        ),
        (
            "in:firebase,android how do I add sign-in?",
            Route("answer", "how do I add sign-in?", scope=ANDROID_FIREBASE, scope_from="question"),
        ),
        (
            "in:Firebase in:android crashlytics",
            Route("search", "crashlytics", scope=ANDROID_FIREBASE, scope_from="question"),
        ),
        (
            "private in:firebase how do I add sign-in?",
            Route(
                "answer",
                "how do I add sign-in?",
                private=True,
                scope=FIREBASE,
                scope_from="question",
            ),
        ),
        (
            "in:firebase -p search auth",
            Route("search", "auth", private=True, scope=FIREBASE, scope_from="question"),
        ),
        (
            "search in:firebase auth",
            Route("search", "auth", scope=FIREBASE, scope_from="question"),
        ),
        # its own products keep a question on Google's docs, not Pay's
        (
            "in:firebase how do I save a pass to google wallet?",
            Route(
                "answer",
                "how do I save a pass to google wallet?",
                scope=FIREBASE,
                scope_from="question",
            ),
        ),
        (
            "in:all what is cloud run?",
            Route("answer", "what is cloud run?", scope_from="question"),
        ),
        ("doc in:firebase x", Route("doc", "x", scope=FIREBASE, scope_from="question")),
        # not an `in:` word: asked as typed
        ("how do I filter in: clauses?", Route("answer", "how do I filter in: clauses?")),
        ("what is in:firebase for?", Route("answer", "what is in:firebase for?")),
    ],
)
def test_in_words_limit_a_question_to_products(typed: str, expected: Route) -> None:
    assert expected == route(typed)


def test_in_naming_an_unknown_product_carries_the_refusal_not_a_scope() -> None:
    routed = route("in:firestore how do I query?")
    assert routed.scope_error is not None
    assert "firestore" == routed.scope_error.unknown
    assert () == routed.scope


@pytest.mark.parametrize(
    ("typed", "asked"),
    [
        ("in:firebase how do I add sign-in?", "how do I add sign-in?"),
        ("private in:firebase,android search auth", "auth"),
        ("in:firebase -p auth rules", "auth rules"),
    ],
)
def test_the_question_is_quoted_without_its_in_words(typed: str, asked: str) -> None:
    assert asked == asked_words(typed)


def test_a_scoped_follow_up_keeps_its_products_and_the_threads_question() -> None:
    expected = Route(
        "answer",
        "how do I deploy? — follow-up: what about it?",
        topic="how do I deploy?",
        scope=("go.dev",),
        scope_from="question",
    )
    assert expected == Router(4, True).route_in_thread("in:go what about it?", "how do I deploy?")


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        # the channel's products, said as the channel's
        (
            "how do I add sign-in?",
            Route("answer", "how do I add sign-in?", scope=FIREBASE, scope_from="channel"),
        ),
        ("auth", Route("search", "auth", scope=FIREBASE, scope_from="channel")),
        # the question's own win, `in:all` too
        (
            "in:android how do I add sign-in?",
            Route(
                "answer",
                "how do I add sign-in?",
                scope=("developer.android.com",),
                scope_from="question",
            ),
        ),
        ("in:all auth", Route("search", "auth", scope_from="question")),
        # Pay's docs and whole pages are not limited
        ("pay google wallet passes", Route("pay", "google wallet passes")),
        ("doc https://x", Route("doc", "https://x")),
    ],
)
def test_a_scoped_channel_limits_its_questions_unless_they_name_their_own(
    typed: str, expected: Route
) -> None:
    assert expected == with_channel(route(typed), ChannelSettings(products=FIREBASE))


def test_a_follow_up_keeps_the_products_its_threads_question_named() -> None:
    """Only a follow-up takes the thread's own `in:`; one naming its own keeps that."""
    router, go = Router(4, True), ("go.dev",)
    carried = router.route_in_thread("what about it?", "how do I deploy?", go)
    assert (go, "question") == (carried.scope, carried.scope_from)
    everything = router.route_in_thread("in:all what about it?", "how do I deploy?", go)
    assert ((), "question") == (everything.scope, everything.scope_from)
    unrelated = router.route_in_thread("how do I list buckets?", "how do I deploy?", go)
    assert ((), None) == (unrelated.scope, unrelated.scope_from)
