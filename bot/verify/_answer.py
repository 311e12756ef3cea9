"""What of a generated answer gets checked: each command of its shell blocks and inline
spans, each code block in a programming language, each bare `--flag` it names."""

from __future__ import annotations

from dataclasses import dataclass

from bot.verify._parse import (
    CODE_LANGS,
    INLINE_RE,
    SHELL_LANGS,
    Command,
    code_tokens,
    fences,
    logical_lines,
    looks_like_command,
    shell_commands,
)

#: most snippets one answer has checked (a longer answer's rest is left unmarked)
MAX_SNIPPETS = 40
_BARE_FLAG_CHARS = 60


@dataclass(frozen=True, slots=True)
class Snippet:
    kind: str  # "command", "code" or "flag"
    text: str
    anchor: int
    command: Command | None = None
    lines: tuple[tuple[str, ...], ...] = ()
    #: an inline span: a command named in passing (`gcloud run deploy`) may be a prefix
    inline: bool = False


def _paragraph_end(lines: list[str], number: int) -> int:
    end = number
    while (
        end + 1 < len(lines)
        and lines[end + 1].strip()
        and not lines[end + 1].lstrip().startswith(("```", "~~~"))
    ):
        end += 1
    return end


def _block_snippets(lang: str, body: tuple[str, ...], anchor: int) -> list[Snippet]:
    if lang in CODE_LANGS:
        kept = [t for t in (code_tokens(line) for line in body) if t is not None]
        if not kept:
            return []
        first = next(line.strip() for line in body if code_tokens(line) is not None)
        return [Snippet("code", first, anchor, lines=tuple(kept))]
    if lang not in SHELL_LANGS:
        return []  # configuration (YAML, JSON, XML…): values are the reader's own
    return [
        Snippet("command", command.text, anchor, command=command)
        for line in logical_lines(body)
        for command in shell_commands(line)
    ]


def _inline_snippets(lines: list[str], in_code: list[bool]) -> list[Snippet]:
    found: list[Snippet] = []
    for number, line in enumerate(lines):
        if in_code[number] or "`" not in line:
            continue
        for match in INLINE_RE.finditer(line):
            span = match.group(1).strip().removeprefix("$ ")
            anchor = _paragraph_end(lines, number)
            if span.startswith("--") and " " not in span and len(span) <= _BARE_FLAG_CHARS:
                found.append(Snippet("flag", span.split("=", 1)[0], anchor))
            elif looks_like_command(span):
                found.extend(
                    Snippet("command", c.text, anchor, command=c, inline=True)
                    for c in shell_commands(span)
                )
    return found


def snippets(markdown: str) -> list[Snippet]:
    """The answer's checkable snippets in reading order (at most MAX_SNIPPETS)."""
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    in_code = [False] * len(lines)
    found: list[Snippet] = []
    for fence in fences(lines):
        for i in range(fence.start, fence.end + 1):
            in_code[i] = True
        found.extend(_block_snippets(fence.lang, fence.lines, fence.end))
    found.extend(_inline_snippets(lines, in_code))
    found.sort(key=lambda s: s.anchor)
    return found[:MAX_SNIPPETS]
