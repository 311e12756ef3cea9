"""The benchmark's scenarios run end to end, tiny (nothing timed: CI must not judge speed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bench(tmp_path: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "GOOGLE_"))}
    env.update(GCE_METADATA_HOST="127.0.0.1:9", GCE_METADATA_IP="127.0.0.1:9", NO_GCE_CHECK="True")
    out = tmp_path / "RESULTS.md"
    argv = [sys.executable, "-m", "bench.run", *args, "--smoke", "--out", str(out)]
    proc = subprocess.run(
        argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert 0 == proc.returncode, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert not out.exists(), "a smoke run must not overwrite the committed results"
    return proc


def _cells(text: str, label: str) -> list[str]:
    row = re.search(rf"^\| {re.escape(label)} \|(.*)$", text, re.M)
    assert row is not None, label
    return [c.strip() for c in row.group(1).split("|")]


def _number(cell: str) -> float:
    found = re.search(r"[\d.]+", cell)
    assert found is not None, cell
    return float(found.group())


def test_guard_quick_run_measures_the_bot_beside_the_naive_bot_and_an_older_tree(
    tmp_path: Path,
) -> None:
    """`--scenario guard --smoke`: a burst to the bot, the "older" tree (this one again) and
    the two naive bots, each with CPU, RSS and cold start above zero and every question
    answered once; the steady load on SQLite and Redis, every question answered exactly once."""
    proc = _bench(tmp_path, "--before", str(ROOT), "--parts", "burst,steady", timeout=120)
    text = proc.stdout
    for label in (
        "CPU per question, ms: median (each round); target ≤ 1.5 × a naive bot",
        "Peak RSS, MB: median (each round); target ≤ 1.3 × a naive bot",
        "Cold start (spawn → /healthz 200), s: median (each start); target ≤ 1.2 × a naive bot",
    ):
        cells = _cells(text, label)
        assert all(_number(c) > 0 for c in cells[:4]), (label, cells)  # the four bots
        assert all(c.endswith("×") for c in cells[4:8]), cells  # the four ratios
    assert _cells(text, "Answered exactly once")[:4] == ["10 of 10"] * 4
    header = next(line for line in text.splitlines() if line.startswith("| measure | SQLite"))
    assert header.count("SQLite") == 2, header
    assert header.count("Redis") == 2, header
    questions = [_number(c) for c in _cells(text, "Questions (new + repeats)")[:4]]
    answered = [_number(c) for c in _cells(text, "**Answered exactly once**")[:4]]
    assert questions == answered == [20.0] * 4
    assert all(_number(c) > 0 for c in _cells(text, "**Ack p99** (p50 / max)")[:4])
    assert all(_number(c) > 0 for c in _cells(text, "CPU per question")[:4])


def test_render_benchmark_smoke_run_reports_every_input(tmp_path: Path) -> None:
    """`--scenario render --smoke` reports the typical page and each input, writes nothing."""
    proc = _bench(tmp_path, "--scenario", "render", timeout=120)
    assert "## What rendering costs (`--scenario render`)" in proc.stdout
    assert re.search(
        r"^\| typical page \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.,]+ \|$", proc.stdout, re.M
    )
    assert "| backticks_100k |" in proc.stdout
