"""Block-level Markdown (headings, lists, fences, quotes, tables, rules) to parts: a small
line reader for the Markdown Google's servers return, not CommonMark."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from bot.render._inline import inline_mrkdwn
from bot.render._tables import is_delimiter_row, split_row, table_lines
from bot.render._text import escape

#: Slack ends a code block at any ``` run; a zero-width space keeps one inside the block
_FENCE_RUN_RE = re.compile(r"`{3,}")


@dataclass(frozen=True, slots=True)
class Part:
    """Finished mrkdwn lines (`code`: escaped ``` block lines); `tight`: a heading."""

    kind: Literal["text", "code", "divider"]
    lines: tuple[str, ...] = ()
    tight: bool = False


def text_part(lines: list[str], *, tight: bool = False, code: bool = False) -> Part:
    broken = tuple(_FENCE_RUN_RE.sub(lambda m: "\u200b".join(m.group()), line) for line in lines)
    return Part("code" if code else "text", broken, tight)


def part_text(part: Part) -> str:
    if part.kind == "code":
        return "```\n" + "\n".join(part.lines) + "\n```"
    return "\n".join(part.lines)


# Each pattern is matched at the start of one line and is linear in it: runs of one class
# are separated by characters outside it, so backtracking gives each character back once.
FENCE_OPEN_RE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}(?=[^`]*$)|~{3,})(?P<info>.*)$")
#: `(?:.*[^ \t])?`, not a lazy `.*?` before `[ \t]*$`: that re-reads a blank run (quadratic)
ATX_RE = re.compile(r"^ {0,3}(?P<marks>#{1,6})(?:[ \t]+(?P<text>(?:.*[^ \t\n])?))?[ \t]*$")
HR_RE = re.compile(r"^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_SETEXT_RE = re.compile(r"^ {0,3}(?P<level>=+|-+)[ \t]*$")
_ITEM_RE = re.compile(r"^(?P<indent>[ \t]*)(?P<marker>[-*+]|\d{1,9}[.)])(?:[ \t]+(?P<text>.*))?$")
_TASK_RE = re.compile(r"^\[(?P<mark>[ xX])\][ \t]+")
_QUOTE_RE = re.compile(r"^ {0,3}>[ ]?(?P<text>.*)$")
_BULLETS = ("•", "◦", "▪")
_MAX_LIST_DEPTH = 6
_MAX_QUOTE_DEPTH = 4


def closes_fence(line: str, fence: str) -> bool:
    marker = line.strip()
    return len(marker) >= len(fence) and marker == fence[0] * len(marker)


def strip_heading_tail(text: str) -> str:
    """`text` without a closing `#` run or a trailing `{: #id}` (read once from the end)."""
    body = text.rstrip(" \t")
    if body.endswith("#"):
        core = body.rstrip("#")
        return core.rstrip(" \t") if core != core.rstrip(" \t") else text
    if body.endswith("}"):
        opening = max(body.rfind("{", 0, len(body) - 1), body.rfind("}", 0, len(body) - 1))
        if opening >= 0 and body[opening] == "{":
            inside = body[opening + 1 : -1]
            after_colon = inside[1:] if inside.startswith(":") else inside
            if after_colon.lstrip(" \t")[:1] in ("#", ".") and after_colon.lstrip(" \t"):
                return body[:opening].rstrip(" \t")
    return text


def to_parts(markdown: str, base_url: str | None = None, *, _depth: int = 0) -> list[Part]:
    """Markdown to parts; nothing in the input is dropped except markup and HTML comments."""
    return _Reader(
        markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n"), base_url, _depth
    ).read()


def _indent_width(text: str) -> int:
    return len(text.expandtabs(4))


class _Reader:
    def __init__(self, lines: list[str], base_url: str | None, depth: int) -> None:
        self.lines = lines
        self.base_url = base_url
        self.depth = depth
        self.parts: list[Part] = []
        self.paragraph: list[str] = []
        self.items: list[str] = []  # rendered lines of the list being read
        self.list_indents: list[int] = []
        self.after_item = False  # the previous line belonged to a list item

    def inline(self, text: str) -> str:
        return inline_mrkdwn(text, self.base_url)

    def flush_paragraph(self) -> None:
        if not self.paragraph:
            return
        pieces: list[str] = []
        for index, line in enumerate(self.paragraph):
            hard = line.endswith(("  ", "\\")) and index < len(self.paragraph) - 1
            text = line.strip().removesuffix("\\") if hard else line.strip()
            pieces.append(text + ("\n" if hard else " "))
        rendered = self.inline("".join(pieces).strip())
        self.paragraph = []
        if rendered.strip():
            self.parts.append(text_part(rendered.split("\n")))

    def flush_list(self, *, end: bool) -> None:
        if self.items:
            self.parts.append(text_part(self.items))
            self.items = []
        if end:
            self.list_indents = []
            self.after_item = False

    def flush(self, *, end_list: bool = True) -> None:
        self.flush_paragraph()
        self.flush_list(end=end_list)

    def read(self) -> list[Part]:
        i = 0
        while i < len(self.lines):
            i = self.step(i)
        self.flush()
        return self.parts

    def step(self, i: int) -> int:
        line = self.lines[i]
        if not line.strip():
            self.flush(end_list=False)
            self.after_item = False
            return i + 1
        fence = FENCE_OPEN_RE.match(line)
        if fence:
            self.flush(end_list=not self.list_indents)
            return self.read_fence(i, fence)
        if line.lstrip().startswith("<!--") and "-->" not in line:
            return self.skip_comment(i)
        return self.block(i, line)

    def block(self, i: int, line: str) -> int:
        atx = ATX_RE.match(line)
        if atx:
            self.flush()
            self.heading(atx.group("text") or "")
        elif _SETEXT_RE.match(line) and self.paragraph:
            text = " ".join(part.strip() for part in self.paragraph)
            self.paragraph = []
            self.heading(text)
        elif HR_RE.match(line):
            self.flush()
            self.parts.append(Part("divider"))
        elif "|" in line and i + 1 < len(self.lines) and is_delimiter_row(self.lines[i + 1], line):
            self.flush()
            return self.read_table(i)
        elif _QUOTE_RE.match(line):
            self.flush()
            return self.read_quote(i)
        elif self.list_indents and self.read_list_line(line):
            pass
        elif self.starts_list(line):
            self.flush()
            self.read_list_line(line)
        else:
            self.flush_list(end=True)
            self.paragraph.append(line)
        return i + 1

    def starts_list(self, line: str) -> bool:
        """A list item, which may interrupt a paragraph if it is a bullet or starts at 1."""
        item = _ITEM_RE.match(line)
        if item is None:
            return False
        marker = item.group("marker")
        return not self.paragraph or not marker[0].isdigit() or int(marker[:-1]) == 1

    def heading(self, text: str) -> None:
        text = strip_heading_tail(text).strip()
        rendered = inline_mrkdwn(text, self.base_url, plain_emphasis=True).strip()
        if rendered:
            self.parts.append(text_part([f"*{rendered}*"], tight=True))

    def read_fence(self, i: int, match: re.Match[str]) -> int:
        fence = match.group("fence")
        indent = _indent_width(match.group("indent"))
        body: list[str] = []
        i += 1
        while i < len(self.lines) and not closes_fence(self.lines[i], fence):
            raw = self.lines[i].expandtabs(4)
            strip = min(indent, len(raw) - len(raw.lstrip(" ")))
            body.append(escape(raw[strip:]))
            i += 1
        while body and not body[-1].strip():
            body.pop()
        if any(line.strip() for line in body):
            self.parts.append(text_part(body, code=True))
        self.after_item = False  # a fence inside a list item keeps the list's nesting
        return i + 1

    def skip_comment(self, i: int) -> int:
        self.flush()
        while i < len(self.lines) and "-->" not in self.lines[i]:
            i += 1
        if i < len(self.lines):
            rest = self.lines[i].split("-->", 1)[1]
            if rest.strip():
                self.lines[i] = rest
                return i
        return i + 1

    def read_table(self, i: int) -> int:
        header = split_row(self.lines[i])
        rows: list[list[str]] = []
        i += 2
        while i < len(self.lines) and self.lines[i].strip() and "|" in self.lines[i]:
            rows.append(split_row(self.lines[i]))
            i += 1
        lines, grid = table_lines(header, rows, self.base_url)
        self.parts.append(text_part(lines, code=grid))
        return i

    def read_quote(self, i: int) -> int:
        inner: list[str] = []
        while i < len(self.lines):
            match = _QUOTE_RE.match(self.lines[i])
            if match is None:
                break
            inner.append(match.group("text"))
            i += 1
        if self.depth >= _MAX_QUOTE_DEPTH:
            lines = [inline_mrkdwn(text, self.base_url) for text in inner]
        else:
            lines = _flatten(to_parts("\n".join(inner), self.base_url, _depth=self.depth + 1))
        # Slack has one level of quote: a nested quote's lines are already quoted
        quoted = [
            line if line.startswith(">") else f"> {line}" if line.strip() else ">" for line in lines
        ]
        self.parts.append(text_part(quoted))
        return i

    def read_list_line(self, line: str) -> bool:
        """Take `line` as a list item or an item's continuation; False when it is neither."""
        item = _ITEM_RE.match(line)
        indent = _indent_width(line) - _indent_width(line.lstrip())
        if item is None:
            continuation = indent >= 2 or self.after_item
            if not continuation:
                return False
            level = min(len(self.list_indents), _MAX_LIST_DEPTH)
            self.items.append("    " * level + self.inline(line.strip()))
            self.after_item = True
            return True
        while self.list_indents and self.list_indents[-1] > indent:
            self.list_indents.pop()
        if not self.list_indents or self.list_indents[-1] < indent:
            self.list_indents.append(indent)
        level = min(len(self.list_indents) - 1, _MAX_LIST_DEPTH)
        marker = item.group("marker")
        text = item.group("text") or ""
        task = _TASK_RE.match(text)
        if task:
            text = ("☑ " if task.group("mark") in "xX" else "☐ ") + text[task.end() :]
        bullet = marker[:-1] + "." if marker[-1] in ".)" else _BULLETS[min(level, 2)]
        self.items.append("    " * level + f"{bullet} {self.inline(text)}".rstrip())
        self.after_item = True
        return True


def _flatten(parts: list[Part]) -> list[str]:
    """Parts as plain mrkdwn lines (inside a quote, where a ``` block cannot go)."""
    lines: list[str] = []
    for part in parts:
        if lines:
            lines.append("")
        if part.kind == "divider":
            lines.append("───")
        elif part.kind == "code":
            lines.extend(f"`{line.strip()}`" if line.strip() else "" for line in part.lines)
        else:
            lines.extend(part.lines)
    return lines
