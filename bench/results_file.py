"""bench/RESULTS.md is one file with a section per scenario; a run rewrites only its own.

    update_results(path, "day", text)

Sections are kept between `<!-- section:NAME -->` and `<!-- /section:NAME -->` lines, in the
order of SECTIONS (the day first: it is the benchmark's headline); the hand-written analysis
in bench/FINDINGS.md follows them, copied in afresh on every write.
"""

from __future__ import annotations

import re
from pathlib import Path

SECTIONS = ("day", "store", "load", "verify")
FINDINGS = Path(__file__).with_name("FINDINGS.md")
TITLE = "# Benchmark results"
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
    if FINDINGS.exists():
        parts += [FINDINGS.read_text().rstrip(), ""]
    text = "\n".join(parts)
    path.write_text(text)
    return text
