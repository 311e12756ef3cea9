"""The renderer's intermediate form: a document as a list of parts (text, code, divider)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

#: Slack ends a code block at any ``` run; a zero-width space keeps one inside the block
#: (one greedy class: linear)
_FENCE_RUN_RE = re.compile(r"`{3,}")
DIVIDER_TEXT = "───"


@dataclass(frozen=True, slots=True)
class Part:
    """One rendered block of a document.

    `text` lines are finished mrkdwn; `code` lines are escaped text for a ``` block;
    a `divider` has no lines. A `tight` part (a heading) is followed by the next part on
    the very next line instead of after a blank line.
    """

    kind: Literal["text", "code", "divider"]
    lines: tuple[str, ...] = ()
    tight: bool = False


def break_fence_runs(line: str) -> str:
    """A line that cannot open or close a Slack code block."""
    return _FENCE_RUN_RE.sub(lambda m: "\u200b".join(m.group()), line)


def text_part(lines: list[str], *, tight: bool = False) -> Part:
    return Part("text", tuple(break_fence_runs(line) for line in lines), tight)


def code_part(lines: list[str]) -> Part:
    return Part("code", tuple(break_fence_runs(line) for line in lines))


def part_text(part: Part) -> str:
    """A part as mrkdwn on its own."""
    if part.kind == "divider":
        return DIVIDER_TEXT
    if part.kind == "code":
        return "```\n" + "\n".join(part.lines) + "\n```"
    return "\n".join(part.lines)


def join_parts(parts: list[Part]) -> str:
    """Parts as one mrkdwn string: a blank line between parts, none after a heading."""
    out: list[str] = []
    tight = False
    for part in parts:
        if out:
            out.append("\n" if tight else "\n\n")
        out.append(part_text(part))
        tight = part.tight
    return "".join(out)
