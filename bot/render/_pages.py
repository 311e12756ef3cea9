"""A document cut into pages: at headings and paragraphs where it can, never inside a code
block without closing and reopening it, a table's header carried onto the next page."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from bot.render._convert import ATX_RE, FENCE_OPEN_RE, HR_RE, closes_fence
from bot.render._tables import is_delimiter_row
from bot.render._text import escape


@dataclass(frozen=True, slots=True)
class PageSpan:
    """Page text = `prefix + source[start:end] + suffix`."""

    start: int
    end: int
    prefix: str = ""
    suffix: str = ""

    def text(self, source: str) -> str:
        return self.prefix + source[self.start : self.end] + self.suffix


@dataclass(slots=True)
class _Unit:
    start: int
    end: int
    #: marker of the fence open before this unit (it is inside a code block), e.g. "```"
    fence_before: str | None
    #: marker of the fence still open after this unit
    fence_after: str | None
    #: header and delimiter lines of the table this unit is a body row of
    table: str | None
    heading: bool  # a heading starts here: the best place to start a page
    paragraph: bool  # a blank line precedes it: a good place to start a page


def scan_units(source: str, max_table_prefix: int) -> list[_Unit]:
    """One unit per line (a table's header and delimiter lines together), with context."""
    units: list[_Unit] = []
    fence: str | None = None
    table: str | None = None
    blank_before = True
    lines = [m.span() for m in re.finditer(r"[^\n]*\n|[^\n]+\Z", source)]
    i = 0
    while i < len(lines):
        start, end = lines[i]
        line = source[start:end].rstrip("\r\n")
        before = fence
        heading = paragraph = False
        if fence is not None:
            if closes_fence(line, fence):
                fence = None
        elif (opened := FENCE_OPEN_RE.match(line)) is not None:
            fence, table = opened.group("fence"), None
        elif table is not None and line.strip() and "|" in line:
            pass  # a body row of the current table
        elif (
            "|" in line
            and i + 1 < len(lines)
            and is_delimiter_row(source[slice(*lines[i + 1])].rstrip("\r\n"), line)
        ):
            end = lines[i + 1][1]
            header = source[start:end]
            small = len(escape(header)) <= max_table_prefix and header.endswith("\n")
            table = header if small else ""
            i += 1
        else:
            table = None
            heading = ATX_RE.match(line) is not None
        paragraph = blank_before and bool(line.strip())
        row_of = table if (table and before is None and source[start:end] != table) else None
        units.append(_Unit(start, end, before, fence, row_of, heading, paragraph))
        blank_before = not line.strip()
        i += 1
    return units


def split_unit(source: str, unit: _Unit) -> list[_Unit]:
    """A unit cut in two near its middle (at a space when one is close)."""
    length = unit.end - unit.start
    middle = unit.start + length // 2
    space = source.rfind(" ", unit.start + length // 4, middle + 1)
    cut = space + 1 if space > unit.start else middle
    cut = max(unit.start + 1, min(cut, unit.end - 1))
    first = replace(unit, end=cut, fence_after=unit.fence_before)
    return [first, replace(unit, start=cut, heading=False, paragraph=False)]


def span_for(source: str, units: list[_Unit], first: int, last: int) -> PageSpan:
    """The page made of units[first:last] (last exclusive)."""
    head, tail = units[first], units[last - 1]
    prefix = ""
    if head.fence_before is not None:
        prefix = head.fence_before + "\n"
    elif head.table:
        prefix = head.table
    suffix = ""
    if tail.fence_after is not None:
        suffix = ("" if source[: tail.end].endswith("\n") else "\n") + tail.fence_after + "\n"
    return PageSpan(head.start, tail.end, prefix, suffix)


def page_spans(source: str, *, max_chars: int, fits: Callable[[str], bool]) -> list[PageSpan]:
    """Pages of `source`, each one accepted by `fits` (rendered size and block count)."""
    if not source:
        return [PageSpan(0, 0)]
    units = _presplit(source, scan_units(source, max_table_prefix=max_chars // 4), max_chars)
    spans: list[PageSpan] = []
    first = 0
    while first < len(units):
        last = _greedy_end(source, units, first, max_chars)
        while not fits(span_for(source, units, first, last).text(source)):
            if last - first > 1:
                last = _shrink(source, units, first, last, fits)
            elif units[first].table:
                units[first].table = None  # the copied table header is what does not fit
            elif units[first].end - units[first].start > 1:
                units[first : first + 1] = split_unit(source, units[first])
            else:
                break  # one character always fits a page; never loop
        spans.append(span_for(source, units, first, last))
        first = last
    return spans


def _presplit(source: str, units: list[_Unit], max_chars: int) -> list[_Unit]:
    """Lines longer than half a page cut, so fitting a page never re-renders a huge line."""
    out: list[_Unit] = []
    for unit in units:
        if unit.end - unit.start > max_chars // 2:
            out += _presplit(source, split_unit(source, unit), max_chars)
        else:
            out.append(unit)
    return out


def _cost(source: str, unit: _Unit, max_chars: int) -> int:
    text = source[unit.start : unit.end]
    if unit.fence_before is None and HR_RE.match(text.rstrip("\r\n")):
        return max_chars // 40  # a divider costs a block of the page's ~46, not characters
    return len(escape(text)) + 2


def _greedy_end(source: str, units: list[_Unit], first: int, max_chars: int) -> int:
    """The page's end by estimated size, moved back to a near heading or paragraph start."""
    total, last = 0, first
    while last < len(units) and (
        last == first or total + _cost(source, units[last], max_chars) <= max_chars
    ):
        total += _cost(source, units[last], max_chars)
        last += 1
    if last >= len(units):
        return last
    floor = first + max(1, (last - first) // 3)
    for wanted in ("heading", "paragraph"):
        for index in range(last, floor - 1, -1):
            unit = units[index]
            if index > first and getattr(unit, wanted) and unit.fence_before is None:
                return index
    return last


def _shrink(
    source: str, units: list[_Unit], first: int, last: int, fits: Callable[[str], bool]
) -> int:
    """The largest end in (first, last) whose page fits (at least first + 1)."""
    low, high = first + 1, last - 1
    best = first + 1
    while low <= high:
        middle = (low + high) // 2
        if fits(span_for(source, units, first, middle).text(source)):
            best, low = middle, middle + 1
        else:
            high = middle - 1
    return best


def first_section(markdown: str) -> str:
    """Everything up to the first heading that follows some text (not in code blocks)."""
    seen_text = False
    for unit in scan_units(markdown, max_table_prefix=0):
        if unit.heading and seen_text:
            return markdown[: unit.start]
        if not unit.heading and markdown[unit.start : unit.end].strip():
            seen_text = True
    return markdown
