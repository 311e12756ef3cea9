"""The day scenario's team answers: a team that saves its most frequent questions as
workspace team answers on the first morning, and what the bot itself counted of them.

The answers are written into the set-up's store (the one its replicas share) before the day
starts, with `bot.team.TeamAnswers` — what the `save_team_answer` shortcut's modal saves,
without the modal. Each answer carries a marker (`TEAMANSWER-t03`) the fake Slack reads
back, as the fake server's answers carry `GENANSWER-t03`. After the day the bot's own
report counters (`team:used`, `team:saved`) are read from the same store.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta

from bench.stream import Question, StreamShape, build_topics

#: who saved them, and where (the shortcut's author and channel)
AUTHOR = "UTEAMLEAD"


def team_questions(stream: list[Question], count: int, shape: StreamShape) -> dict[str, str]:
    """The `count` most asked question topics (ties: the first asked), each with the wording
    the team saves: the topic's canonical one ("How do I deploy a service in Cloud Run?")."""
    asked = Counter(q.topic for q in stream if q.kind == "question")
    first = {q.topic: q.idx for q in reversed(stream)}
    top = sorted(asked, key=lambda t: (-asked[t], first[t]))[:count]
    canonical = {t.id: t.canonical for t in build_topics(shape)}
    return {topic: canonical[topic] for topic in top}


async def save_team_answers(settings: dict[str, str], saved: dict[str, str]) -> None:
    """Write `saved` (topic -> question) as workspace team answers into the store the
    replicas of `settings` use (a STATE_URL that is not the working directory's file)."""
    from bot.store import open_store
    from bot.team import TeamAnswer, TeamAnswers, new_team_id, review_date

    now = datetime.now(UTC)
    store = await open_store(
        settings["STATE_URL"], prefix=settings["STATE_PREFIX"], max_entries=10_000
    )
    try:
        team = TeamAnswers(store, review_days=180, clock=lambda: now)
        for topic, question in saved.items():
            await team.save(
                TeamAnswer(
                    id=new_team_id(),
                    question=question,
                    answer=f"TEAMANSWER-{topic}: we do it with Terraform, see the runbook.",
                    author=AUTHOR,
                    saved_at=now,
                    review_at=review_date(now, 180),
                    visibility="workspace",
                    channel="C00",
                    channel_name="general",
                )
            )
    finally:
        await store.aclose()


async def bot_team_counts(settings: dict[str, str]) -> dict[str, int]:
    """The bot's own `team:used` / `team:saved` over the run (its report's total)."""
    from bot.report import Window, aggregate, collect
    from bot.store import open_store

    store = await open_store(
        settings["STATE_URL"], prefix=settings["STATE_PREFIX"], max_entries=10_000
    )
    try:
        collected = await collect(store)
    finally:
        await store.aclose()
    today = date.today()
    window = Window(today - timedelta(days=2), today + timedelta(days=2))
    return dict(aggregate(collected, window, quota_per_day=0).total.team)
