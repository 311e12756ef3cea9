"""The REST-beside-MCP benchmark runs end to end, tiny (nothing timed: CI must not judge speed)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_bench_smoke import _bench, _cells, _number


def test_rest_scenario_smoke_run_measures_both_backends_and_the_days_search_units(
    tmp_path: Path,
) -> None:
    """`--scenario rest --smoke`: each measure for MCP and REST with their ratio, REST's early
    sources shown, and the day's search-unit peak for each set-up; nothing written."""
    proc = _bench(tmp_path, "--scenario", "rest", timeout=180)
    text = proc.stdout
    assert "## REST beside MCP (`--scenario rest`)" in text
    for label in (
        "Time to the first source a stream shows",
        "Time to the answer",
        "Time to the checked answer (posted)",
        "Upstream HTTP requests per question (mean)",
        "CPU per question",
    ):
        cells = _cells(text, label)  # the first table: new questions
        assert all(_number(c) > 0 for c in cells[:2]), (label, cells)
        assert cells[2].endswith("×"), (label, cells)  # REST / MCP
        assert cells[4].endswith("×"), (label, cells)  # REST without early sources / MCP
    assert re.search(r"REST showed early sources before the answer in [1-9]\d* of", text)
    peaks = _cells(text, "**Search units, most in any 60 s** (limit 100)")[:3]
    assert len(peaks) == 3, peaks  # MCP, REST without early sources, REST with them
    assert all(0 < _number(c) <= 100 for c in peaks), peaks
    assert _number(peaks[2]) > _number(peaks[1]), "early sources cost search units"
    assert _cells(text, "… failed")[:3] == ["0", "0", "0"]
