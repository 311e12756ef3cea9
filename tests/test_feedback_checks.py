"""The answer record keeps an answer's check, so a 👎 on a command the cited pages do not
have is visible in `feedback export` (the eval set)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.feedback import FeedbackLog, answer_record, export_object
from bot.models import Answer, Document, Reference
from bot.store import SqliteStore
from bot.verify import check_answer, unchecked

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
PAGE = Document(
    name="documents/x/run",
    uri="https://x/run",
    title="Run",
    content="# Run\n\n```\ngcloud run deploy SERVICE --image IMAGE\n```\n",
)


def _answer(text: str, *, fetched: bool = True) -> Answer:
    verification = check_answer(text, [PAGE]) if fetched else unchecked(text)
    return Answer(
        query="how do I deploy?",
        kind="answer",
        text=text,
        references=(Reference(name=PAGE.name, uri=PAGE.uri, title="Run"),),
        verification=verification,
    )


def _record(answer: Answer) -> dict[str, object] | None:
    return answer_record(
        answer, answer_id="a1", channel="C1", ts="1.0", thread_ts=None, asker="U1", now=NOW
    ).checks


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(tmp_path / "state.db")
    yield opened
    await opened.aclose()


def test_the_record_counts_results_and_names_the_flagged_commands() -> None:
    """found / partly / not_found / unchecked counts, and the flagged commands, cut."""
    long_flag = "--" + "x" * 300
    text = (
        "```\ngcloud run deploy SERVICE --image IMAGE\n"
        "gcloud run deploy SERVICE --imag IMAGE\n"
        f"gcloud run rollout SERVICE {long_flag}\n```"
    )
    checks = _record(_answer(text))
    assert checks is not None
    assert (1, 1, 1, 0) == tuple(checks[k] for k in ("found", "partly", "not_found", "unchecked"))
    flagged = checks["flagged"]
    assert isinstance(flagged, list)
    assert "gcloud run deploy SERVICE --imag IMAGE" == flagged[0]
    assert all(len(f) <= 200 for f in flagged)


def test_at_most_five_commands_are_flagged() -> None:
    """A long answer's record names five flagged commands, and counts them all."""
    text = "```\n" + "\n".join(f"gcloud run nope{i} SERVICE" for i in range(8)) + "\n```"
    checks = _record(_answer(text))
    assert checks is not None
    assert (8, 5) == (checks["not_found"], len(checks["flagged"]))  # type: ignore[arg-type]


def test_no_code_or_not_verified_is_none_and_unfetched_pages_count_as_unchecked() -> None:
    """None without code (or without a check); 'unchecked' when the pages were not had."""
    assert _record(_answer("Cloud Run scales to zero.")) is None
    plain = _answer("x").model_copy(update={"verification": None})
    assert _record(plain) is None
    checks = _record(_answer("```\ngcloud run deploy S --image I\n```", fetched=False))
    assert checks == {"found": 0, "partly": 0, "not_found": 0, "unchecked": 1, "flagged": []}


async def test_a_down_vote_exports_the_answers_check(store: SqliteStore) -> None:
    """The vote carries the record's check into `feedback export`."""
    log = FeedbackLog(store, retention_days=30, clock=lambda: NOW)
    record = answer_record(
        _answer("```\ngcloud run deploy SERVICE --imag IMAGE\n```"),
        answer_id="a2",
        channel="C1",
        ts="2.0",
        thread_ts=None,
        asker="U1",
        now=NOW,
    )
    await log.keep_answer(record)
    kept = await log.answer("a2")
    assert kept is not None
    vote = await log.record_vote(kept, "down", "U2")
    exported = export_object(vote)
    assert exported["checks"] == {
        "found": 0,
        "partly": 1,
        "not_found": 0,
        "unchecked": 0,
        "flagged": ["gcloud run deploy SERVICE --imag IMAGE"],
    }
