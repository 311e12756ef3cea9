"""gdocs-bot: answers developers' questions in Slack from Google's own documentation."""

import sys

__version__ = "0.1.0"

# httpx imports its own command-line client (click, pygments: ~2 MB resident, 20 ms) whenever
# those happen to be installed (pytest and uvicorn bring them); the bot never runs it, and a
# None entry makes httpx fall back to its stub
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
