"""The `gdocs-bot` console script and `python -m bot`.

The garbage collector is off during start-up: it would rescan the ~600 modules' classes,
schemas and the Slack app, none of them garbage, for 7-10 % of start-up's CPU (measured).
`serve` turns it back on once it listens (after `gc.freeze`), other commands once their
arguments are read.
"""

import gc


def main(argv: list[str] | None = None) -> int:
    """Run one command; the process exit status."""
    gc.disable()
    try:
        from bot.cli.commands import main as run_command

        return run_command(argv)
    finally:
        gc.enable()
