"""The day scenario runs end to end on a tiny day (nothing timed: CI must not judge speed)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOPOLOGIES = (
    "2 replicas on one Redis",
    "2 replicas on Redis, 3 team answers saved",
    "1 replica on SQLite (the default store)",
    "baseline: no cache, no ledger (1 replica)",
)


def _run_day_smoke(tmp_path: Path, env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "GOOGLE_"))}
    env.update(GCE_METADATA_HOST="127.0.0.1:9", GCE_METADATA_IP="127.0.0.1:9", NO_GCE_CHECK="True")
    env.update(env_extra)
    out = tmp_path / "RESULTS.md"
    argv = [sys.executable, "-m", "bench.run", "--scenario", "day", "--smoke", "--out", str(out)]
    proc = subprocess.run(
        argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False
    )
    assert not out.exists(), "a smoke run must not overwrite the committed results"
    return proc


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """One smoke run for the module's tests (it takes half a minute)."""
    return _run_day_smoke(tmp_path_factory.mktemp("day"), {})


def test_day_smoke_run_answers_every_question_in_every_topology(
    smoke: subprocess.CompletedProcess[str],
) -> None:
    """`--scenario day --smoke`: every question of the tiny day gets an answer in each set-up
    (the Redis ones are left out, with the reason, when redis-server is missing)."""
    proc = smoke
    assert 0 == proc.returncode, proc.stdout[-3000:] + proc.stderr[-3000:]
    header = next(line for line in proc.stdout.splitlines() if line.startswith("| measure |"))
    redis_here = shutil.which("redis-server") is not None
    if os.environ.get("GDOCS_REQUIRE_REDIS") == "1" or redis_here:
        expected = list(TOPOLOGIES)
    else:
        expected = list(TOPOLOGIES[2:])
        assert "**Left out: redis** — redis-server is not on PATH" in proc.stdout
        assert "**Left out: team** — redis-server is not on PATH" in proc.stdout
    assert header == "| measure | " + " | ".join(expected) + " |"
    answered = next(line for line in proc.stdout.splitlines() if "got some answer |" in line)
    cells = answered.strip("|").split("|")[1:]
    assert len(cells) == len(expected)
    assert [cell.strip() for cell in cells] == ["12 of 12 (100 %)"] * len(expected), answered
    generated = next(line for line in proc.stdout.splitlines() if "a generated answer**" in line)
    shares = [int(c.strip(" *").split()[0]) for c in generated.strip("|").split("|")[1:]]
    assert len(shares) == len(expected), generated
    assert all(n > 0 for n in shares), generated


def test_day_smoke_run_gives_the_saved_team_answers_without_asking_google(
    smoke: subprocess.CompletedProcess[str],
) -> None:
    """The set-up where the team saved its three most asked questions gives team answers,
    the bot counts each as used and as an answer_query call saved, and the set-ups without
    any saved say so."""
    if shutil.which("redis-server") is None and os.environ.get("GDOCS_REQUIRE_REDIS") != "1":
        pytest.skip("the team set-up runs on Redis")
    proc = smoke
    assert 0 == proc.returncode, proc.stdout[-3000:] + proc.stderr[-3000:]
    given = next(line for line in proc.stdout.splitlines() if line.startswith("| … team answers"))
    cells = [c.strip() for c in given.strip("|").split("|")[1:]]
    team, used, saved = (int(n) for n in re.findall(r"\d+", cells[1]))
    assert team > 0, given
    assert team == used, given
    assert 0 < saved <= used, given
    assert cells[:1] + cells[2:] == ["– (none saved)"] * (len(cells) - 1), given
    calls_saved = next(
        line for line in proc.stdout.splitlines() if line.startswith("| **answer_query calls saved")
    )
    assert f"**{saved}**" == calls_saved.strip("|").split("|")[2].strip(), calls_saved
