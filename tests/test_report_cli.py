"""`gdocs-bot report`'s options and failures, the installed console script: bad options are
exit 2 with one line (before any store is opened), a store that does not answer is exit 1
with one line and no report, a missing state file is said (not created), an empty store is a
report of zeros."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.test_cli import gdocs

STATE_URL = "sqlite:///state.db"


def _empty_store(folder: Path) -> None:
    """An empty state file, as if the bot had started here: the store makes its tables."""
    sqlite3.connect(folder / "state.db").close()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--since", "2026-02-30"), "--since takes a date as YYYY-MM-DD"),
        (("--since", "last week"), "--since takes a date as YYYY-MM-DD"),
        (("--until", "20261201"), "--until takes a date as YYYY-MM-DD"),
        (("--since", "2026-12-02", "--until", "2026-12-01"), "is after --until"),
        (("--since", "2024-01-01", "--until", "2026-01-01"), "at most 366 days"),
        (("--format", "pdf"), "--format takes md, json or html"),
        (("--out", "."), "--out names a directory"),
    ],
)
def test_bad_options_exit_2_with_one_line_and_open_no_store(
    tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    """A bad date, window, format or output: exit 2, one line naming the option, nothing
    on stdout, and the state file never created."""
    result = gdocs(tmp_path, "report", *args, STATE_URL=STATE_URL)
    lines = result.stderr.strip().splitlines()

    assert 2 == result.returncode
    assert 1 == len(lines), result.stderr
    assert said in lines[0]
    assert "" == result.stdout
    assert not (tmp_path / "state.db").exists()


@pytest.mark.parametrize("fmt", ["md", "json", "html"])
def test_a_store_that_does_not_answer_is_exit_1_never_an_empty_report(
    tmp_path: Path, fmt: str
) -> None:
    """Redis refusing connections: exit 1, one line naming STATE_URL, and no report at
    all (on stdout or in --out)."""
    out = tmp_path / f"report.{fmt}"
    result = gdocs(
        tmp_path,
        "report",
        "--format",
        fmt,
        "--out",
        str(out),
        STATE_URL="redis://127.0.0.1:9/0",
    )
    lines = result.stderr.strip().splitlines()

    assert 1 == result.returncode
    assert 1 == len(lines), result.stderr
    assert "STATE_URL" in lines[0]
    assert "Traceback" not in result.stderr
    assert "" == result.stdout
    assert not out.exists()


@pytest.mark.parametrize("command", [("report",), ("feedback", "export")])
def test_a_missing_state_file_is_said_in_one_line_and_not_created(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    """In a folder where the bot never ran: exit 1, one line saying there is no state file
    yet (as `check` does), nothing on stdout, and no empty state file left behind."""
    result = gdocs(tmp_path, *command)
    lines = result.stderr.strip().splitlines()

    assert 1 == result.returncode, result.stdout
    assert 1 == len(lines), result.stderr
    assert "no state file yet at gdocs-state.db" in lines[0]
    assert "`serve` creates it" in lines[0]
    assert "" == result.stdout
    assert not (tmp_path / "gdocs-state.db").exists()


def test_an_empty_store_gives_a_week_of_zeros(tmp_path: Path) -> None:
    """A store the bot has not written to yet: seven days, every count 0, no rows."""
    _empty_store(tmp_path)
    result = gdocs(
        tmp_path,
        "report",
        "--format",
        "json",
        "--until",
        "2026-12-01",
        STATE_URL=STATE_URL,
    )
    report = json.loads(result.stdout)

    assert 0 == result.returncode, result.stderr
    assert ("2026-11-25", "2026-12-01") == (report["since"], report["until"])
    assert 7 == len(report["days"])
    assert 0 == report["total"]["questions"]
    assert ([], [], [], []) == (report["topics"], report["gaps"], report["pages"], report["votes"])
    assert 50 == report["quota_per_day"]


def test_the_report_takes_a_window_and_writes_markdown_by_default(tmp_path: Path) -> None:
    """--since/--until choose the days; without --format the report is Markdown."""
    _empty_store(tmp_path)
    result = gdocs(
        tmp_path,
        "report",
        "--since",
        "2026-11-30",
        "--until",
        "2026-12-01",
        STATE_URL=STATE_URL,
    )

    assert 0 == result.returncode, result.stderr
    assert result.stdout.startswith("# gdocs-bot report, 2026-11-30 to 2026-12-01")
    assert "| 2026-11-30 | 0 |" in result.stdout
    assert "| 2026-12-01 | 0 |" in result.stdout
    assert "2026-11-29" not in result.stdout
