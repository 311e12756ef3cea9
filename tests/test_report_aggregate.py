"""The report's pure parts: how a question is counted, what names nobody, which days a
window holds, and how records and votes become topics, gaps, pages, votes and channels;
the renderers escape what people typed."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.feedback import AnswerRecord, VoteRecord
from bot.render import render_week_report
from bot.report import (
    Collected,
    Window,
    aggregate,
    answered_counts,
    classify,
    render_html,
    render_json,
    render_md,
    scope_counts,
    topic_of,
    without_people,
)

#: noon Pacific on 1 December 2026 (20:00 UTC)
NOON = datetime(2026, 12, 1, 20, tzinfo=UTC)
WEEK = Window(date(2026, 11, 25), date(2026, 12, 1))


def record(n: int, question: str, **fields: object) -> AnswerRecord:
    values: dict[str, object] = {
        "answer_id": f"a{n}",
        "question": question,
        "kind": "answer",
        "channel": "C1",
        "asker": f"UASKER{n:03d}",
        "posted_at": NOON,
        "route": "answer",
    }
    values.update(fields)
    return AnswerRecord.model_validate(values)


def vote(n: int, question: str, up: bool, comment: str = "", **fields: object) -> VoteRecord:
    values: dict[str, object] = {
        "answer_id": f"a{n}",
        "question": question,
        "kind": "answer",
        "time": NOON,
        "vote": "up" if up else "down",
        "voter": f"UVOTER{n:03d}",
        "comment": comment,
    }
    values.update(fields)
    return VoteRecord.model_validate(values)


@pytest.mark.parametrize(
    ("kind", "fallback", "route", "counted"),
    [
        ("answer", None, "answer", "generated"),
        ("search", "answer_quota:minute", "answer", "search:quota_minute"),
        ("search", "answer_quota:day", "answer", "search:quota_day"),
        ("search", "answer_quota:user", "answer", "search:quota_user"),
        ("search", "answer_quota:unknown", "answer", "search:quota_other"),
        ("search", None, "search", "search:keyword"),
        ("pay", None, "pay", "search:pay"),
        ("search", "pay_not_configured", "pay", "search:other"),
        ("search", "no_answer_tool", "answer", "search:other"),
    ],
)
def test_each_answer_is_counted_as_generated_or_search_only_with_why(
    kind: str, fallback: str | None, route: str, counted: str
) -> None:
    """The route, what came back and the fallback say which counter a question adds to."""
    assert counted == classify(kind, fallback, route)


def test_a_reused_answer_adds_to_its_reuse_counter_too() -> None:
    """A cached or shared answer counts as what it is and as reused, once each."""
    assert ["generated", "reuse:shared"] == answered_counts("answer", None, "answer", "shared")
    assert ["search:keyword"] == answered_counts("search", None, "search", None)


@pytest.mark.parametrize(
    ("typed", "shown"),
    [
        ("ask <@U0123ABCD> about buckets", "ask @someone about buckets"),
        ("ask <@U0123ABCD|ana> about buckets", "ask @someone about buckets"),
        ("<!here> is this right", "@someone is this right"),
        ("<!subteam^S0123ABC|@devs> ping", "@someone ping"),
        ("in <#C0123ABC|general> please", "in #general please"),
        ("user U0123ABCD said so", "user @someone said so"),
        ("WEBHOOKS and USERS stay words", "WEBHOOKS and USERS stay words"),
        ("two\nlines\tand\u202espaces", "two lines andspaces"),
    ],
)
def test_question_text_in_a_report_names_nobody(typed: str, shown: str) -> None:
    """Mentions, user ids typed as words and control characters do not reach a report."""
    assert shown == without_people(typed)


def test_a_topic_is_the_questions_normalised_key() -> None:
    """Wordings that share a cache key share a topic."""
    assert topic_of("How do I create a Cloud Storage bucket?") == topic_of(
        "how to create cloud storage buckets"
    )
    assert topic_of("create a bucket") != topic_of("delete a bucket")


def test_a_window_holds_pacific_days() -> None:
    """07:59 UTC on 2 December is still 1 December in Pacific time; 08:00 is not."""
    window = Window(date(2026, 12, 1), date(2026, 12, 1))

    assert window.holds(datetime(2026, 12, 2, 7, 59, tzinfo=UTC))
    assert not window.holds(datetime(2026, 12, 2, 8, 0, tzinfo=UTC))
    assert ["2026-11-30", "2026-12-01"] == Window(date(2026, 11, 30), date(2026, 12, 1)).days()


def test_days_come_from_the_counters_and_only_the_windows_days() -> None:
    """Counters of days outside the window are left out; days without any are zeros."""
    counters = (
        ("2026-12-01", "questions", 4),
        ("2026-12-01", "generated", 3),
        ("2026-12-01", "search:quota_day", 1),
        ("2026-12-01", "answer_query:made", 3),
        ("2026-11-20", "questions", 9),
    )
    report = aggregate(Collected(counters=counters), WEEK, quota_per_day=50)

    assert 7 == len(report.days)
    assert (4, 3, 1, 3) == (
        report.total.questions,
        report.total.generated,
        report.total.search_only,
        report.total.answer_query["made"],
    )
    assert 0 == report.days[0].questions


def test_gaps_are_grouped_by_topic_most_frequent_first() -> None:
    """Search-only answers to real questions, searches without a hit, 👎 votes (with their
    comments) and unverified commands are gaps; a keyword lookup with hits is not."""
    answers = (
        record(1, "how do I list buckets?", kind="search", fallback="answer_quota:day", hits=2),
        record(2, "How do I list buckets", kind="search", fallback="answer_quota:day", hits=2),
        record(3, "firestore pricing", kind="search", route="search", hits=3),
        record(4, "qqqzzz", kind="search", route="search", hits=0),
        record(
            5,
            "deploy to cloud run",
            checks={"found": 1, "partly": 0, "not_found": 1, "unchecked": 0, "flagged": ["x --y"]},
        ),
    )
    votes = (
        vote(1, "how do I list buckets?", up=False, comment="Needs <@U0999ZZZZ>'s command"),
        vote(5, "deploy to cloud run", up=True),
    )
    report = aggregate(Collected(answers=answers, votes=votes), WEEK, quota_per_day=50)
    gaps = {g.topic: g for g in report.gaps}

    assert ["list bucket", "deploy to cloud run", "qqqzzz"] == [g.topic for g in report.gaps]
    assert {"search_only": 2, "thumbs_down": 1} == gaps["list bucket"].reasons
    assert ("Needs @someone's command",) == gaps["list bucket"].comments
    assert ("x --y",) == gaps["deploy to cloud run"].flagged_commands
    assert "firestore pricing" not in gaps


def test_pages_votes_and_channels() -> None:
    """References of generated answers are cited, hits listed; votes by answer kind; DMs
    are one "direct messages" row, and channel ids only when asked for."""
    answers = (
        record(1, "q one", references=("https://a", "https://b")),
        record(2, "q two", references=("https://a",), channel="D0123"),
        record(3, "q three", kind="search", route="search", references=("https://b",), hits=1),
    )
    votes = (vote(1, "q one", up=True), vote(3, "q three", up=False, kind="search"))
    plain = aggregate(Collected(answers=answers, votes=votes), WEEK, quota_per_day=50)
    channels = aggregate(Collected(answers=answers), WEEK, quota_per_day=50, by_channel=True)

    assert [("https://a", 2, 0), ("https://b", 1, 1)] == [
        (p.url, p.cited, p.listed) for p in plain.pages
    ]
    assert [("generated", 1, 0), ("search", 0, 1)] == [(v.kind, v.up, v.down) for v in plain.votes]
    assert (2, None) == (plain.channels, plain.by_channel)
    assert {"C1": 2, "direct messages": 1} == channels.by_channel


def test_records_and_votes_outside_the_window_are_left_out() -> None:
    """An answer and a vote from before the window count nowhere."""
    old = datetime(2026, 11, 1, 20, tzinfo=UTC)
    collected = Collected(
        answers=(record(1, "old question", posted_at=old),),
        votes=(vote(1, "old question", up=False, time=old),),
    )
    report = aggregate(collected, WEEK, quota_per_day=50)

    assert ((), (), ()) == (report.topics, report.gaps, report.votes)


def test_the_week_summary_has_the_top_three_gaps() -> None:
    """Questions, generated answers and the three most frequent gaps."""
    answers = tuple(
        record(n, f"gap {name}", kind="search", hits=0, route="search")
        for n, name in enumerate(["alpha", "alpha", "alpha", "beta", "beta", "gamma", "delta"])
    )
    counters = (("2026-12-01", "questions", 7), ("2026-12-01", "generated", 0))
    week = render_week_report(aggregate(Collected(answers, (), counters), WEEK, quota_per_day=50))

    assert week["text"].endswith(": 7 questions")
    # equal counts in alphabetical order: delta before gamma
    shown = str(week["blocks"])
    assert shown.index("1. gap alpha (3×)") < shown.index("2. gap beta (2×)")
    assert shown.index("2. gap beta (2×)") < shown.index("3. gap delta (1×)")
    assert "gamma" not in shown


HOSTILE = '<script>alert("x")</script> & <img src=x onerror=1> `code` | pipe'


def test_renderers_escape_what_people_typed() -> None:
    """HTML escapes every character that could open markup; Markdown keeps tables whole."""
    answers = (record(1, HOSTILE, kind="search", hits=0, route="answer"),)
    votes = (vote(1, HOSTILE, up=False, comment=HOSTILE),)
    report = aggregate(Collected(answers=answers, votes=votes), WEEK, quota_per_day=50)
    html = render_html(report)
    md = render_md(report)

    assert "<script" not in html
    assert "<img" not in html
    assert "&lt;script&gt;" in html
    assert "\\| pipe" in md
    assert "\\<script\\>" in md
    assert not re.search(r"(?<!\\)<", md)  # every < is escaped
    assert [HOSTILE] == json.loads(render_json(report))["gaps"][0]["comments"]  # kept as is


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=80), st.text(max_size=80))
def test_no_typed_text_opens_markup_in_the_html_report(question: str, comment: str) -> None:
    """Whatever was asked or commented, the page has no tag but the renderer's own."""
    answers = (record(1, question or "q", kind="search", hits=0),)
    votes = (vote(1, question or "q", up=False, comment=comment),)
    html = render_html(aggregate(Collected(answers=answers, votes=votes), WEEK, quota_per_day=5))
    body = html.split("<body>", 1)[1]
    tags = set(re.findall(r"</?([A-Za-z][A-Za-z0-9-]*)", body))
    allowed = {"h1", "h2", "p", "div", "b", "span", "svg", "line", "text", "title", "rect",
               "i", "table", "tr", "th", "td", "body", "html"}  # fmt: skip

    assert tags <= allowed, tags
    assert "UASKER" not in html
    assert "UVOTER" not in html


def test_questions_are_counted_by_the_products_they_were_limited_to() -> None:
    """One counter per scoped question (`scope:<names>`); the report sets the questions
    asked of all products beside each scope, in md, html, json and the week in Slack."""
    assert ["scope:android+firebase"] == scope_counts(
        ("developer.android.com", "firebase.google.com")
    )
    assert [] == scope_counts(())
    counters = (
        ("2026-12-01", "questions", 10),
        ("2026-11-30", "questions", 2),
        ("2026-12-01", "scope:firebase", 3),
        ("2026-11-30", "scope:firebase", 1),
        ("2026-12-01", "scope:android+firebase", 2),
    )
    report = aggregate(Collected(counters=counters), WEEK, quota_per_day=50)

    expected = {"all products": 6, "firebase": 4, "android, firebase": 2}
    assert expected == report.by_product
    assert list(expected) == list(report.by_product)  # all products first, then most asked
    md = render_md(report)
    assert "## By product\n\n| products | questions |\n|---|---|\n| all products | 6 |" in md
    assert "| android, firebase | 2 |" in md
    assert "<h2>By product</h2>" in render_html(report)
    assert expected == json.loads(render_json(report))["by_product"]
    week = str(render_week_report(report)["blocks"])
    assert "*By product:* all products 6 · firebase 4 · android, firebase 2" in week


def test_a_report_without_scoped_questions_has_no_product_table() -> None:
    """On the MCP backend, or where no one limited a question: the report as before."""
    report = aggregate(
        Collected(counters=(("2026-12-01", "questions", 4),)), WEEK, quota_per_day=50
    )
    assert {} == report.by_product
    assert "By product" not in render_md(report) + render_html(report)
    assert "by_product" not in json.loads(render_json(report))
