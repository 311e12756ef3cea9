"""The benchmark runs end to end (tiny N, nothing timed: CI must not judge speed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_benchmark_smoke_run_answers_every_question(tmp_path: Path) -> None:
    """`python -m bench.run --smoke` drives the real bot and every question is answered."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "GOOGLE_"))}
    env.update(GCE_METADATA_HOST="127.0.0.1:9", GCE_METADATA_IP="127.0.0.1:9", NO_GCE_CHECK="True")
    out = tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.run",
            "--smoke",
            "--workdir",
            str(tmp_path),
            "--out",
            str(out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert 0 == proc.returncode, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "| Acknowledged (HTTP 200) / answered | 4 / 4 of 4 |" in proc.stdout  # at once
    # steady load: every command acknowledged and answered
    assert re.search(r"\| Acknowledged \(HTTP 200\) / answered \| (\d+) / \1 of \1 \|", proc.stdout)
    assert "| 4 identical questions: answer_query calls | 1 |" in proc.stdout
    assert not out.exists(), "a smoke run must not overwrite the committed results"


def test_render_benchmark_smoke_run_reports_every_input(tmp_path: Path) -> None:
    """`--scenario render --smoke` reports the typical page and each input, writes nothing."""
    out = tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--scenario", "render", "--smoke", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert 0 == proc.returncode, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "## What rendering costs (`--scenario render`)" in proc.stdout
    assert re.search(
        r"^\| typical page \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.,]+ \|$", proc.stdout, re.M
    )
    assert "| backticks_100k |" in proc.stdout
    assert not out.exists(), "a smoke run must not overwrite the committed results"
