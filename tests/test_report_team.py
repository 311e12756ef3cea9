"""The report's team answers: a question the team's answer settled counts as a question, as
a team answer (not generated, not search only), and as an answer_query call saved when no
generated answer was kept for it; a report without team answers shows none of it."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.feedback import AnswerRecord, VoteRecord
from bot.render import render_week_report
from bot.report import (
    Collected,
    Report,
    Window,
    aggregate,
    answered_counts,
    render_html,
    render_json,
    render_md,
    tally,
)
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.slack_harness import running_bot
from tests.test_slack_team_answers import QUESTION, save, today

NOON = datetime(2026, 12, 1, 20, tzinfo=UTC)
DAY = "2026-12-01"
WEEK = Window(date(2026, 11, 25), date(2026, 12, 1))
LINE = "Team answers: 3 used, 2 generated answers saved"


def record(n: int, question: str, **fields: object) -> AnswerRecord:
    values: dict[str, object] = {"answer_id": f"a{n}", "question": question, "kind": "answer"}
    values |= {"channel": "C1", "posted_at": NOON, "route": "answer", **fields}
    return AnswerRecord.model_validate(values)


def counters(used: int, saved: int) -> tuple[tuple[str, str, int], ...]:
    """A day of 7 questions: 2 generated, 2 search only, `used` team answers."""
    base = (
        (DAY, tally.QUESTIONS, 4 + used),
        (DAY, tally.GENERATED, 2),
        (DAY, "search:quota_day", 2),
        (DAY, tally.ANSWER_QUERY_MADE, 2),
    )
    team = ((DAY, tally.TEAM_USED, used), (DAY, tally.TEAM_SAVED, saved)) if used else ()
    return base + team


def report_with(used: int, saved: int) -> Report:
    """Two answers to one topic (one generated, one search only), and a team answer to it
    with a 👍 when the team answered (`used`)."""
    answers = (
        record(2, "where do our buckets live", tool="answer_query"),
        record(3, "where do our buckets live", kind="search", fallback="answer_quota:day"),
    )
    votes: tuple[VoteRecord, ...] = ()
    if used:
        answers += (record(1, "where do our buckets live", tool=tally.TEAM_TOOL),)
        votes = (
            VoteRecord.model_validate(
                {"answer_id": "a1", "question": "where do our buckets live", "kind": "answer",
                 "tool": tally.TEAM_TOOL, "time": NOON, "vote": "up", "voter": "UVOTER001"}
            ),
        )  # fmt: skip
    return aggregate(Collected(answers, votes, counters(used, saved)), WEEK, quota_per_day=50)


def test_a_team_answer_adds_no_generated_count() -> None:
    """The flow counts the team's answer as TEAM_USED itself; it is not a generated answer."""
    assert [] == answered_counts("answer", None, "answer", None, tally.TEAM_TOOL)
    assert ["generated"] == answered_counts("answer", None, "answer", None, "answer_query")


def test_a_report_with_team_answers_says_how_many_and_the_calls_saved() -> None:
    """One line in Markdown and HTML, the counts in JSON's total and days, and a column."""
    report = report_with(used=3, saved=2)
    md, html = render_md(report), render_html(report)
    shown = json.loads(render_json(report))

    assert f"- {LINE}\n" in md
    assert f"<p>{LINE}</p>" in html
    assert {"used": 3, "saved": 2} == shown["total"]["team"]
    assert {"used": 3, "saved": 2} == shown["days"][-1]["team"]
    assert "| day | questions | generated | team answers | search only |" in md
    assert f"| {DAY} | 7 | 2 | 3 | 2 |" in md
    assert "<th>team answers</th>" in html


def test_a_report_without_team_answers_shows_none_of_them() -> None:
    """No line, no column, no key: the report is as it was before team answers."""
    report = report_with(used=0, saved=0)
    md, html, shown = render_md(report), render_html(report), json.loads(render_json(report))

    assert "team answers" not in (md + html).lower()
    rows = [shown["total"], *shown["days"], *shown["topics"]]
    assert [] == [row for row in rows if "team" in row]
    assert "| day | questions | generated | search only |" in md


def test_a_team_answered_topic_is_neither_generated_nor_search_only() -> None:
    """Three askings of a topic: one team answer, one generated, one search only."""
    topic = report_with(used=1, saved=1).topics[0]

    assert (3, 1, 1, 1) == (topic.asked, topic.generated, topic.team, topic.search_only)


def test_votes_on_a_team_answer_are_counted_apart() -> None:
    assert ["team"] == [v.kind for v in report_with(used=1, saved=0).votes]


def test_the_week_summary_counts_team_answers_when_there_are_any() -> None:
    with_team = str(render_week_report(report_with(used=3, saved=2))["blocks"])
    without = str(render_week_report(report_with(used=0, saved=0))["blocks"])

    assert "got a generated answer · 3 team answers · 2 search results only" in with_team
    assert "team answers" not in without
    one = str(render_week_report(report_with(used=1, saved=1))["blocks"])
    assert "got a generated answer · 1 team answer · " in one


@given(st.integers(0, 10_000), st.integers(0, 10_000))
def test_the_team_line_shows_exactly_when_a_team_answer_was_used(used: int, saved: int) -> None:
    saved = min(saved, used)
    md = render_md(report_with(used, saved))
    answers = "answer" if saved == 1 else "answers"
    line = f"- Team answers: {used} used, {saved} generated {answers} saved\n"

    assert (line in md) == (used > 0)
    assert ("Team answers" in md) == (used > 0)


@pytest.mark.timeout(60)
async def test_a_question_the_team_answered_twice_saved_one_generated_answer(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Without the team answer the first asking would have called answer_query and the
    second found its answer cached: two used, one generated answer saved."""
    async with running_bot(dk_server) as bot:
        await save(bot)
        await bot.command(QUESTION, channel="C1")
        await bot.finished(1)
        await bot.command(QUESTION.upper(), channel="C3")
        await bot.finished(2)
        counts = await today(bot)

    assert {"questions": 2, tally.TEAM_USED: 2, tally.TEAM_SAVED: 1} == counts
