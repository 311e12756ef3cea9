"""The `gdocs-bot` console script and `python -m bot`. The garbage collector is off during
start-up (rescanning ~600 modules' classes cost 7-10 % of start-up's CPU, measured): `serve`
turns it back on once it listens (after `gc.freeze`), other commands once their options are read."""

import gc


def main(argv: list[str] | None = None) -> int:
    """Run one command; the process exit status."""
    gc.disable()
    try:
        from bot.cli.commands import main as run_command

        return run_command(argv)
    finally:
        gc.enable()
