"""The day scenario runs end to end on a tiny day (nothing timed: CI must not judge speed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOPOLOGIES = (
    "2 replicas on one Redis",
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


def test_day_smoke_run_answers_every_question_in_every_topology(tmp_path: Path) -> None:
    """`--scenario day --smoke`: every question of the tiny day gets an answer in each set-up
    (the Redis one is left out, with the reason, when redis-server is missing)."""
    proc = _run_day_smoke(tmp_path, {})
    assert 0 == proc.returncode, proc.stdout[-3000:] + proc.stderr[-3000:]
    header = next(line for line in proc.stdout.splitlines() if line.startswith("| measure |"))
    redis_here = shutil.which("redis-server") is not None
    if os.environ.get("GDOCS_REQUIRE_REDIS") == "1" or redis_here:
        expected = list(TOPOLOGIES)
    else:
        expected = list(TOPOLOGIES[1:])
        assert "**Left out: redis** — redis-server is not on PATH" in proc.stdout
    assert header == "| measure | " + " | ".join(expected) + " |"
    answered = next(line for line in proc.stdout.splitlines() if "got some answer |" in line)
    cells = answered.strip("|").split("|")[1:]
    assert len(cells) == len(expected)
    assert [cell.strip() for cell in cells] == ["12 of 12 (100 %)"] * len(expected), answered
    generated = next(line for line in proc.stdout.splitlines() if "a generated answer**" in line)
    shares = [int(c.strip(" *").split()[0]) for c in generated.strip("|").split("|")[1:]]
    assert len(shares) == len(expected), generated
    assert all(n > 0 for n in shares), generated
