"""bench/RESULTS.md is one file with a section per scenario; a run rewrites only its own.

    update_results(RESULTS, "day", text)

Sections are kept between `<!-- section:NAME -->` and `<!-- /section:NAME -->` lines, in the
order of SECTIONS (the guard first: it is what the issue judges). What the figures taught
is in bench/FINDINGS.md, written by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

SECTIONS = ("guard", "day", "verify", "render", "rest")
RESULTS = Path(__file__).with_name("RESULTS.md")
TITLE = "# Benchmark results\n\nThe latest figures of each scenario; what they taught is in FINDINGS.md."
_SECTION = re.compile(r"<!-- section:(\w+) -->\n(.*?)\n<!-- /section:\1 -->", re.DOTALL)


def sections_of(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in _SECTION.finditer(text)}


def update_results(path: Path, name: str, body: str) -> str:
    """Replace (or add) section `name` of `path`, keep the others; the new file's text."""
    if name not in SECTIONS:
        raise ValueError(f"unknown section {name!r}")
    kept = sections_of(path.read_text()) if path.exists() else {}
    kept[name] = body.strip()
    parts = [TITLE, ""]
    for section in SECTIONS:
        if section in kept:
            parts += [
                f"<!-- section:{section} -->",
                kept[section],
                f"<!-- /section:{section} -->",
                "",
            ]
    text = "\n".join(parts)
    path.write_text(text)
    return text
