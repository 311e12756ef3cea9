"""`gdocs-bot team export|import` on the store STATE_URL names: JSON Lines of every team answer
and draft, imported into a fresh deployment as they were; bad lines skipped with one short
sentence each while the rest are saved; a store that does not answer is an error."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import pytest

from bot.cli import main
from bot.store import SqliteStore, redis_store
from bot.team import TeamAnswer, TeamAnswers, review_date
from tests.fakes.redis_server import RedisServer
from tests.test_cli import gdocs

pytestmark = pytest.mark.timeout(90)

T = TypeVar("T")
NOW = datetime(2026, 12, 3, 9, 30, tzinfo=UTC)


def answer(answer_id: str, question: str, **more: object) -> TeamAnswer:
    fields: dict[str, object] = {
        "id": answer_id,
        "question": question,
        "answer": "We deploy with **Terraform**, not gcloud: <https://cloud.google.com/run>",
        "author": "U_ANA",
        "saved_at": NOW,
        "review_at": review_date(NOW, 180),
        "visibility": "workspace",
        **more,
    }
    return TeamAnswer.model_validate(fields)


SAVED = [
    answer("a1", "How do we deploy to Cloud Run?", also=["cloud run rollout"]),
    answer(
        "a2",
        "Which region do we use?",
        visibility="channel",
        channel="C1",
        channel_name="infra",
        permalink="https://team.slack.com/archives/C1/p1",
    ),
    answer("d1", "Où sont les buckets ?", status="draft", from_answer="rec-7"),
]


def on_sqlite(path: Path, use: Callable[[TeamAnswers], Awaitable[T]]) -> T:
    async def run() -> T:
        store = await SqliteStore.open(path, max_entries=5000)
        try:
            return await use(TeamAnswers(store, 180, lambda: NOW))
        finally:
            await store.aclose()

    return asyncio.run(run())


def seed(path: Path, answers: list[TeamAnswer]) -> None:
    async def save_all(team: TeamAnswers) -> None:
        for one in answers:
            await team.save(one)

    on_sqlite(path, save_all)


def line(one: TeamAnswer | dict[str, object]) -> str:
    dumped = one.model_dump(mode="json") if isinstance(one, TeamAnswer) else one
    return json.dumps(dumped)


def test_export_then_import_round_trips_every_answer_and_draft(tmp_path: Path) -> None:
    """Exported (stdout and --out alike, ASCII only) from one deployment and imported into a
    fresh one: the same answers, drafts included, each found where it was."""
    seed(tmp_path / "old.db", SAVED)
    exported = gdocs(tmp_path, "team", "export", STATE_URL="sqlite:///old.db")
    assert 0 == exported.returncode, exported.stderr
    assert exported.stdout.isascii()
    assert {"a1", "a2", "d1"} == {json.loads(x)["id"] for x in exported.stdout.splitlines()}
    to_file = gdocs(tmp_path, "team", "export", "--out", "team.jsonl", STATE_URL="sqlite:///old.db")
    assert ("", 0) == (to_file.stdout, to_file.returncode)
    assert exported.stdout == (tmp_path / "team.jsonl").read_text(encoding="utf-8")

    imported = gdocs(tmp_path, "team", "import", "team.jsonl", STATE_URL="sqlite:///new.db")
    assert (0, "Imported 3 team answers\n") == (imported.returncode, imported.stdout)
    assert "" == imported.stderr
    assert sorted(SAVED, key=lambda a: a.id) == on_sqlite(tmp_path / "new.db", _all_by_id)
    assert SAVED[0] == on_sqlite(tmp_path / "new.db", lambda t: t.find("Cloud Run rollout", None))
    assert SAVED[1] == on_sqlite(
        tmp_path / "new.db", lambda t: t.find("which region do we use", "C1")
    )


async def _all_by_id(team: TeamAnswers) -> list[TeamAnswer]:
    return sorted(await team.all(), key=lambda a: a.id)


def test_import_skips_bad_lines_with_one_sentence_each_and_saves_the_rest(
    tmp_path: Path,
) -> None:
    good = answer("g1", "How do we deploy?")
    lines = [
        line(good),
        "not json at all",
        line({"id": "x2", "question": "no answer"}),
        "",
        line(answer("x3", "q").model_dump(mode="json") | {"question": "q" * 501}),
        line(answer("x4", "HOW DO WE DEPLOY!")),
        line(answer("x5", "fine question").model_dump(mode="json") | {"id": "has:colon"}),
        line(answer("g2", "Another question")),
    ]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = gdocs(tmp_path, "team", "import", "in.jsonl", STATE_URL="sqlite:///state.db")
    assert 0 == result.returncode, result.stderr
    assert (
        "Imported 2 team answers (5 skipped: line 2: not a JSON object; "
        "line 3: answer: Field required; "
        "line 5: question: String should have at most 500 characters; "
        "line 6: That is already answered by the team answer to 'How do we deploy?'; "
        "line 7: id: 1 to 64 letters, digits, - or _)\n"
    ) == result.stdout
    assert ["g1", "g2"] == [a.id for a in on_sqlite(tmp_path / "state.db", _all_by_id)]


def test_import_replaces_the_answer_with_the_same_id(tmp_path: Path) -> None:
    """The imported version wins: its old phrasing no longer finds it."""
    seed(tmp_path / "state.db", [SAVED[0]])
    newer = SAVED[0].model_copy(update={"also": (), "answer": "Use the pipeline."})
    (tmp_path / "in.jsonl").write_text(line(newer) + "\n", encoding="utf-8")
    result = gdocs(tmp_path, "team", "import", "in.jsonl", STATE_URL="sqlite:///state.db")
    assert "Imported 1 team answer\n" == result.stdout
    assert [newer] == on_sqlite(tmp_path / "state.db", _all_by_id)
    assert None is on_sqlite(tmp_path / "state.db", lambda t: t.find("cloud run rollout", None))


def test_import_reads_standard_input_for_a_dash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STATE_URL", "sqlite:///state.db")
    monkeypatch.setattr("sys.stdin", io.StringIO(line(SAVED[0]) + "\n" + line(SAVED[2]) + "\n"))
    assert 0 == main(["team", "import", "-"])
    assert "Imported 2 team answers\n" == capsys.readouterr().out
    assert [SAVED[0], SAVED[2]] == on_sqlite(tmp_path / "state.db", _all_by_id)


def test_export_and_import_through_a_real_redis(tmp_path: Path, redis_server: RedisServer) -> None:
    (tmp_path / "in.jsonl").write_text("".join(line(a) + "\n" for a in SAVED), encoding="utf-8")
    imported = gdocs(tmp_path, "team", "import", "in.jsonl", STATE_URL=redis_server.url)
    assert "Imported 3 team answers\n" == imported.stdout, imported.stderr
    exported = gdocs(tmp_path, "team", "export", STATE_URL=redis_server.url)
    assert [a.id for a in SAVED] == [json.loads(x)["id"] for x in exported.stdout.splitlines()]

    async def found() -> TeamAnswer | None:
        store = redis_store(redis_server.url, prefix="gdocs:")
        try:
            return await TeamAnswers(store, 180, lambda: NOW).find("cloud run rollout", "C5")
        finally:
            await store.aclose()

    assert SAVED[0] == asyncio.run(found())


@pytest.mark.parametrize("action", [["export"], ["import", "in.jsonl"]])
def test_a_store_that_does_not_answer_is_an_error_not_an_empty_result(
    tmp_path: Path, action: list[str]
) -> None:
    """Redis refusing connections: exit 1 and one line naming STATE_URL (no password), no
    output and nothing claimed imported."""
    (tmp_path / "in.jsonl").write_text(line(SAVED[0]) + "\n", encoding="utf-8")
    url = "redis://:s3cret@127.0.0.1:9/0"
    result = gdocs(tmp_path, "team", *action, STATE_URL=url)
    assert (1, "") == (result.returncode, result.stdout)
    [said] = result.stderr.splitlines()
    assert "STATE_URL" in said
    assert "s3cret" not in said


def test_export_without_a_state_file_says_so(tmp_path: Path) -> None:
    result = gdocs(tmp_path, "team", "export", STATE_URL="sqlite:///missing.db")
    assert 1 == result.returncode
    assert "no state file yet at missing.db" in result.stderr
    assert not (tmp_path / "missing.db").exists()


def test_an_unreadable_import_file_exits_2_with_one_line(tmp_path: Path) -> None:
    result = gdocs(tmp_path, "team", "import", "nope.jsonl", STATE_URL="sqlite:///state.db")
    assert (2, "") == (result.returncode, result.stdout)
    assert "gdocs-bot: cannot read nope.jsonl: No such file or directory\n" == result.stderr


def test_export_to_a_file_it_cannot_write_exits_1_with_one_line(tmp_path: Path) -> None:
    seed(tmp_path / "state.db", SAVED)
    args = ("team", "export", "--out", "no/such/dir/team.jsonl")
    result = gdocs(tmp_path, *args, STATE_URL="sqlite:///state.db")
    assert (1, "") == (result.returncode, result.stdout)
    expected = "gdocs-bot: cannot write no/such/dir/team.jsonl: No such file or directory\n"
    assert expected == result.stderr
