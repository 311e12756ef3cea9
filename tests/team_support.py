"""A team answer as the shortcut's form saves it, for the tests of where team answers are
given (Slack, the CLI)."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.team import TeamAnswer, new_team_id, review_date

SAVED_AT = datetime(2026, 12, 3, 15, 30, tzinfo=UTC)


def team_answer(question: str, answer: str, **changes: object) -> TeamAnswer:
    """Saved in #infra (C2) by U0ANA on 3 Dec 2026 for the whole workspace, its review in 180
    days; `changes` set any other field."""
    fields: dict[str, object] = {
        "id": new_team_id(),
        "question": question,
        "answer": answer,
        "author": "U0ANA",
        "saved_at": SAVED_AT,
        "review_at": review_date(SAVED_AT, 180),
        "visibility": "workspace",
        "channel": "C2",
        "channel_name": "infra",
    }
    return TeamAnswer.model_validate(fields | changes)
