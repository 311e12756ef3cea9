"""The `gdocs-bot` console script and `python -m bot`.

Start-up imports some 600 modules and builds what lives as long as the process (classes,
pydantic schemas, the Slack app); meanwhile the garbage collector, run every 700
allocations, would scan those same objects again and again for cycles there are none of
(about a tenth of the start-up's CPU, measured). So it is off until they are built: `serve`
turns it back on once it listens, after moving them to the permanent generation
(`gc.freeze`), and every other command right after reading its arguments.
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
