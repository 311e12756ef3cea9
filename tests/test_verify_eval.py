"""The verified-answers check on its eval set (tests/data/verify/): every case's snippets
come out as written down, and the issue's targets hold over the whole set."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.run import main as bench_main
from bench.verify_bench import PLANTED, Tally, summarise
from bench.verify_cases import CORRECT_KINDS, Case, load_cases
from bot.verify import check_answer, count_commands

CASES = load_cases()


def test_the_eval_set_is_as_large_and_varied_as_asked() -> None:
    """At least 40 answers, with correct commands and planted errors of every kind."""
    kinds = {e.change for case in CASES for e in case.expected}
    assert len(CASES) >= 40
    assert {"verbatim", "placeholders", "reordered_flags", "joined_lines", "split_lines"} <= kinds
    assert {"misspelled_flag", "foreign_flag", "wrong_subcommand", "wrong_path"} <= kinds
    assert {"invented_command", "invented_call"} <= kinds
    assert kinds <= CORRECT_KINDS | PLANTED


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_snippet_gets_the_expected_mark(case: Case) -> None:
    """Each snippet's result (and, for a partly, the word its mark names) is the case's."""
    got = check_answer(case.answer, case.pages).snippets
    assert [(s.result) for s in got] == [e.result for e in case.expected]
    for expected, check in zip(case.expected, got, strict=True):
        if expected.named and check.result == "partly":
            assert any(expected.named in m for m in check.missing), check
        if check.result in ("found", "partly"):
            assert check.title
            assert check.uri.startswith("https://")
    assert count_commands(case.answer) == len(case.expected)


def test_the_targets_hold_over_the_set() -> None:
    """≥ 95 % of correct commands found or partly; ≥ 90 % of planted errors caught with the
    right word; no mark on an answer without code."""
    tally = Tally()
    for case in CASES:
        tally.add_case(case)
    summary = summarise(tally, PLANTED)
    assert summary["correct_ok"] >= 0.95
    assert summary["planted_caught"] >= 0.90
    assert tally.nocode_cases >= 3
    assert tally.nocode_marks == 0


def test_a_found_command_says_which_section_of_the_page_shows_it() -> None:
    """The mark of a found command names the heading it sits under."""
    case = next(c for c in CASES if c.name == "03-run-reordered")
    (check,) = check_answer(case.answer, case.pages).snippets
    assert check.title == "Deploying container images to Cloud Run"
    assert check.section == "Deploy a new service"


def test_a_partly_found_flag_says_whether_the_pages_have_it_elsewhere() -> None:
    """A misspelled flag is in no page; a flag of another command is, only not with it."""
    misspelled = next(c for c in CASES if c.name == "06-run-misspelled")
    foreign = next(c for c in CASES if c.name == "07-run-foreign-flag")
    (a,) = check_answer(misspelled.answer, misspelled.pages).snippets
    (b,) = check_answer(foreign.answer, foreign.pages).snippets
    assert (a.missing, a.elsewhere) == (("--service-acount",), False)
    assert (b.missing, b.elsewhere) == (("--machine-type",), True)


def test_the_bench_scenario_runs_and_a_smoke_run_writes_nothing(tmp_path: Path) -> None:
    """`python -m bench.run --scenario verify --smoke` meets the targets, leaves RESULTS alone."""
    out = tmp_path / "RESULTS.md"
    assert 0 == bench_main(["--scenario", "verify", "--smoke", "--out", str(out)])
    assert not out.exists()
