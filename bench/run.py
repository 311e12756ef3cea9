"""gdocs-bot's benchmark: the real bot as a subprocess, loopback fakes of Slack and Google.

    python -m bench.run                      # --scenario guard: the bot against a naive
                                             #   Bolt + httpx bot and an older tree (~12 min)
    python -m bench.run --scenario day       # a team's day through 3 set-ups (~6 min)
    python -m bench.run --scenario verify    # verified answers on their eval set (in process)
    python -m bench.run --scenario render    # rendering's cost, typical and worst (in process)
    python -m bench.run --scenario rest      # DK's REST and MCP backends side by side (~7 min)
    python -m bench.run [--scenario S] --smoke   # tiny and quick, writes nothing (the tests)

Other options go to the scenario (`python -m bench.guard --help`, `python -m bench.day
--help`). Each scenario rewrites its own section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.driver import machine
from bench.results_file import RESULTS


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__)
    parser.add_argument(
        "--scenario", choices=("guard", "day", "verify", "render", "rest"), default="guard"
    )
    parser.add_argument("--smoke", action="store_true", help="tiny run; writes nothing")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--render-repeats", type=int, default=3, help="--scenario render")
    parser.add_argument("--rest-questions", type=int, default=20, help="--scenario rest")
    args, rest = parser.parse_known_args(argv)
    passed = [*rest, "--out", str(args.out)]
    if args.scenario == "guard":
        from bench.guard import main as guard

        return guard(passed + (["--quick"] if args.smoke else []))
    if args.scenario == "day":
        from bench.day import main as day

        return day(passed + (["--smoke"] if args.smoke else []))
    if rest:
        parser.error(f"unknown options for --scenario {args.scenario}: {' '.join(rest)}")
    if args.scenario == "verify":
        from bench.verify_bench import run_verify_scenario

        return run_verify_scenario(args, argv=argv, machine=machine())
    if args.scenario == "rest":
        from bench.rest_vs_mcp import run_rest_scenario

        return run_rest_scenario(args, argv=argv, machine=machine())
    from bench.render_bench import run_render_scenario

    return run_render_scenario(args, argv=argv, machine=machine())


if __name__ == "__main__":
    raise SystemExit(main())
