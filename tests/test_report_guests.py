"""The report's refused guest questions: one line, "Guest questions refused: N", in md, html
and JSON (`guest_refused`) when N > 0 and nowhere otherwise; never among the questions."""

from __future__ import annotations

import json
from datetime import date

import pytest

from bot.render import render_week_report
from bot.report import Collected, Window, aggregate, render_html, render_json, render_md, tally

DAY = "2026-12-01"
WINDOW = Window(date(2026, 11, 30), date(2026, 12, 1))
LINE = "Guest questions refused: "


@pytest.mark.parametrize(
    ("refused", "line"),
    [
        (0, None),
        (1, "Guest questions refused: 1"),
        (12, "Guest questions refused: 12"),
    ],
)
def test_the_guest_line_is_shown_only_when_a_guest_was_refused(
    refused: int, line: str | None
) -> None:
    counters = ((DAY, tally.QUESTIONS, 3), (DAY, tally.GENERATED, 3))
    if refused:
        counters += ((DAY, tally.GUEST_REFUSED, refused),)
    report = aggregate(Collected(counters=counters), WINDOW, quota_per_day=50)
    md, html, data = render_md(report), render_html(report), json.loads(render_json(report))

    assert 3 == report.total.questions  # refused guests are not questions
    if line is None:
        assert LINE not in md
        assert LINE not in html
        assert "guest_refused" not in json.dumps(data)
    else:
        assert f"- {line}\n" in md
        assert f"<p>{line}</p>" in html
        assert refused == data["total"]["guest_refused"]
        assert [0, refused] == [d["guest_refused"] for d in data["days"]]


@pytest.mark.parametrize(
    ("refused", "said"),
    [
        (0, None),
        (1, "1 question from other organisations refused"),
        (4, "4 questions from other organisations refused"),
    ],
)
def test_the_week_summary_in_slack_says_how_many_guest_questions_were_refused(
    refused: int, said: str | None
) -> None:
    counters = ((DAY, tally.QUESTIONS, 3), (DAY, tally.GENERATED, 3))
    if refused:
        counters += ((DAY, tally.GUEST_REFUSED, refused),)
    shown = str(
        render_week_report(aggregate(Collected(counters=counters), WINDOW, quota_per_day=50))[
            "blocks"
        ]
    )

    assert (said in shown) if said else ("other organisations" not in shown)
