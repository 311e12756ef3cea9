"""The benchmark runs end to end (tiny N, nothing timed: CI must not judge speed)."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.stores import stores_arg

ROOT = Path(__file__).resolve().parents[1]


_RSS_ROWS = (
    r"RSS at idle after the first answer",
    r"Peak RSS by the end of the bursts \(4 held at once\)",
    r"Peak RSS of the bot process",
)


def _row_cells(table: str, label: str) -> list[int]:
    row = re.search(rf"^\| {label} \|(.*)$", table, re.M)
    assert row is not None, label
    return [int(c.removesuffix(" MB")) for c in map(str.strip, row.group(1).split("|")) if c]


def test_benchmark_smoke_run_answers_every_question_on_every_store(tmp_path: Path) -> None:
    """`python -m bench.run --smoke` drives the real bot once per store (memory://, SQLite,
    Redis when redis-server is installed), and on each every question is answered and the
    bot's store calls are counted."""
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
        timeout=300,
        check=False,
    )
    assert 0 == proc.returncode, proc.stdout[-2000:] + proc.stderr[-2000:]
    stores = ["memory://", "SQLite"]
    if shutil.which("redis-server"):
        stores.append("Redis")
    else:
        assert "**Left out: Redis** — redis-server is not on PATH" in proc.stdout
    assert "| measure | " + " | ".join(stores) + " |" in proc.stdout
    k = len(stores)
    assert re.search(
        rf"^\| Acknowledged \(HTTP 200\) / answered \|( 4 / 4 of 4 \|){{{k}}}$", proc.stdout, re.M
    )
    # steady load: on each store every command acknowledged and answered
    steady = rf"^\| Acknowledged \(HTTP 200\) / answered \|( (\d+) / \2 of \2 \|){{{k}}}$"
    assert re.search(steady, proc.stdout, re.M)
    assert re.search(
        rf"^\| 4 identical questions: answer_query calls \|( 1 \|){{{k}}}$", proc.stdout, re.M
    )
    hit_calls = re.search(
        r"^\| Store calls per cache hit \(of them writes\) \|(.*)$", proc.stdout, re.M
    )
    assert hit_calls is not None
    cells = [c.strip() for c in hit_calls.group(1).split("|") if c.strip()]
    assert len(cells) == k, cells
    assert all(float(c.split()[0]) > 0 for c in cells), cells
    # the memory a store holds at idle, by the burst's end and at the pass's peak, in order
    rss = [_row_cells(proc.stdout, label) for label in _RSS_ROWS]
    assert all(len(row) == k and all(mb > 0 for mb in row) for row in rss), rss
    assert all(a <= b <= c for a, b, c in zip(*rss, strict=True)), rss
    assert not out.exists(), "a smoke run must not overwrite the committed results"


def test_stores_option_keeps_the_given_order_and_rejects_unknown_names() -> None:
    """`--stores` runs the named stores in the order given, once each; a typo is an error."""
    assert stores_arg("redis, memory,redis") == ("redis", "memory")
    for bad in ("mysql", "memory,sqlit", ""):
        with pytest.raises(argparse.ArgumentTypeError, match="memory, sqlite, redis"):
            stores_arg(bad)


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
